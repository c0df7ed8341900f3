#!/usr/bin/env bash
# Fuzzes the runtime's plan and load/store-program loaders (and the
# simulator on accepted plans) with libFuzzer + ASan + UBSan. The runtime
# has no MLIR, so this builds in seconds.
#   scripts/fuzz-runtime.sh [seconds=120]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
mkdir -p build-fuzz-runtime fuzz-out/runtime-corpus fuzz-out/runtime-crashes
clang++-22 -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Iruntime/include \
  runtime/tools/sdma-plan-fuzz.cpp runtime/lib/Plan.cpp runtime/lib/HostMemory.cpp \
  runtime/lib/Simulator.cpp runtime/lib/LdstProgram.cpp runtime/lib/PacketPlan.cpp \
  runtime/lib/PacketDecoder.cpp runtime/lib/PacketSimulator.cpp \
  runtime/lib/NvTimingModel.cpp \
  -o build-fuzz-runtime/sdma-plan-fuzz
build-fuzz-runtime/sdma-plan-fuzz -max_total_time="$seconds" -max_len=16384 \
  -timeout=10 -artifact_prefix=fuzz-out/runtime-crashes/ -print_final_stats=1 \
  fuzz-out/runtime-corpus runtime/test/plans test/fuzz/runtime-inputs runtime/profiles
