#!/usr/bin/env bash
# Fuzzes the runtime's five JSON readers (plan, packet plan, load/store
# program header, NVIDIA and DMA timing profiles) and the CPU executors that
# run what they accept (reference simulator, packet simulator, the CPU
# load/store executor's pre-run checks) with libFuzzer + ASan + UBSan. The
# runtime has no MLIR, so this builds in seconds. runtime/tools/FuzzTargets.h
# says what each target does; the unit tests replay test/fuzz/runtime-inputs
# through the same code (runtime/test/RobustnessTest.cpp, Fuzz.*).
#   [FUZZ_MAX_LEN=16384] scripts/fuzz-runtime.sh [runs-per-target=1000000] [target...]
# Targets: plan packets ldst nvprofile dmaprofile (default: all five, one
# after the other, one process). A crashing input lands in
# fuzz-out/runtime-crashes/; copy it into test/fuzz/runtime-inputs/ so the
# unit tests replay it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(plan packets ldst nvprofile dmaprofile)
mkdir -p build-fuzz-runtime fuzz-out/runtime-crashes
# FUZZ_NO_BUILD=1 reuses the last build.
[ -n "${FUZZ_NO_BUILD:-}" ] && [ -x build-fuzz-runtime/sdma-plan-fuzz ] ||
clang++-22 -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Iruntime/include -Iruntime/tools \
  runtime/tools/sdma-plan-fuzz.cpp runtime/lib/format/Plan.cpp runtime/lib/exec/HostMemory.cpp \
  runtime/lib/sim/Simulator.cpp runtime/lib/format/LdstProgram.cpp runtime/lib/format/PacketPlan.cpp \
  runtime/lib/format/PacketDecoder.cpp runtime/lib/sim/PacketSimulator.cpp \
  runtime/lib/sim/NvTimingModel.cpp runtime/lib/sim/DmaTimingModel.cpp \
  runtime/lib/exec/MemoryBudget.cpp runtime/lib/host/LdstCpuExecutor.cpp -ldl -pthread \
  -o build-fuzz-runtime/sdma-plan-fuzz
status=0
for target in "${targets[@]}"; do
  mkdir -p "fuzz-out/runtime-corpus-$target"
  log=fuzz-out/runtime-$target.log
  SDMA_FUZZ_TARGET=$target build-fuzz-runtime/sdma-plan-fuzz -runs="$runs" \
    -max_len="${FUZZ_MAX_LEN:-16384}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=fuzz-out/runtime-crashes/ -print_final_stats=1 \
    "fuzz-out/runtime-corpus-$target" \
    runtime/test/plans test/fuzz/runtime-inputs runtime/profiles > "$log" 2>&1 ||
    { status=1; echo "$target: FAILED (see $log)"; grep -E "ERROR|SUMMARY|sdma-plan-fuzz:|Test unit written" "$log" || true; }
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  seconds=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  echo "$target: ${executed:-?} inputs in ${seconds:-?} s, peak RSS $(sed -n 's/^stat::peak_rss_mb: *//p' "$log") MB"
done
exit $status
