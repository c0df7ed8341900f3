#!/usr/bin/env bash
# Builds the libFuzzer target with clang-22 + ASan in build-fuzz/ and fuzzes
# the sdma front end (parse, verify, unroll, canonicalize, JSON, the DMA
# lowering, SDMA packets) for a while.
#
#   scripts/fuzz.sh [seconds=300]
#
# Seeds: every .mlir under schedules/ and test/. Anything that crashes is left
# in fuzz-out/crashes/: copy it to test/fuzz/inputs/ (the regression suite
# replays every file there through sdma-opt and sdma-translate) and fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_CXX_FLAGS="-fsanitize=address -fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp" \
  -DSDMA_BUILD_FUZZER=ON >/dev/null
cmake --build build-fuzz -j2 --target sdma-fuzz

mkdir -p fuzz-out/corpus fuzz-out/crashes
seeds=(fuzz-out/corpus schedules test/Dialect test/Transforms test/Target test/Conversion test/fuzz/inputs)
# allow_user_poisoning=0: LLVM headers poison BumpPtrAllocator memory when
# compiled with ASan, but the prebuilt (uninstrumented) MLIR libraries never
# unpoison it; ignoring manual poisoning avoids those false reports.
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 build-fuzz/bin/sdma-fuzz \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -dict=test/fuzz/sdma.dict -artifact_prefix=fuzz-out/crashes/ \
  -print_final_stats=1 "${seeds[@]}"
