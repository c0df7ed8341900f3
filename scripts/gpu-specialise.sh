#!/usr/bin/env bash
# Specialised load/store kernels against the table kernel on one NVIDIA GPU
# (it needs no MLIR): builds the runtime, then
#   checks: every load/store program in PROGRAM_DIR, specialised (NAME.hip)
#           and table (NAME.table.hip), 2, 4 and 8 ranks sharing the GPU,
#           every byte against the CPU simulator (reductions: the exact
#           evaluator), with compile and warm-load times (sdma-gpu-check);
#   bench:  bench/collective_bench.cu (all-gather and all-to-all, fused
#           kernel, specialised and table kernels; CSV) and
#           bench/allreduce_bench.cu (f32 and bf16; CSV);
#   ncu:    duration, grid, registers and SM activity per launch of the
#           specialised, table and fused kernels, 1 KiB to 1 MiB.
# Every step runs under its own timeout and prints its exit status.
#   scripts/gpu-specialise.sh PROGRAM_DIR OUT_DIR [checks,bench,allreduce,ncu]
# (CHECK_GLOB: the programs checks runs, default *.hip; RUNS: bench runs;
# MAX_MIB; BENCH_ARGS, ALLREDUCE_ARGS: more harness options; *_S: step
# timeouts.)
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 what=${3:-checks,bench,ncu}
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-spec-build
export SDMA_CACHE_DIR=/tmp/sdma-cache
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-gpu-check sdmart || exit 1
if [[ $what == *checks* ]]; then
  step ${CHECK_S:-240} "sdma-gpu-check: every program, specialised and table" \
    "$B/bin/sdma-gpu-check" --sizes=1K,24K,1M --iters=3 --executors=ldst \
    "$programs"/${CHECK_GLOB:-*.hip} > "$out/gpu-check.txt"
  tail -n 3 "$out/gpu-check.txt"
  grep -c '^ok' "$out/gpu-check.txt"
  grep '^FAIL' "$out/gpu-check.txt" | head
fi
if [[ $what == *bench* || $what == *ncu* ]]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Iruntime/include \
    bench/collective_bench.cu $B/libsdmart.a -ldl -lpthread \
    -o /tmp/collective_bench || exit 1
fi
if [[ $what == *bench* ]]; then
  step ${BENCH_S:-300} "collective bench, 8 ranks" /tmp/collective_bench "$programs" \
    "${RUNS:-30}" --max-mib=${MAX_MIB:-64} --ldst-only ${BENCH_ARGS:-} > "$out/collectives-h200.csv"
  echo "$(cat "$out/gpu.txt"); CUDA $(nvcc --version | grep -o 'release [0-9.]*'); $(date -u +%Y-%m-%d); median of ${RUNS:-30} runs" \
    > "$out/collectives-h200.txt"
fi
if [[ $what == *allreduce* ]]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime/include bench/allreduce_bench.cu \
    $B/libsdmart.a -ldl -lpthread -o /tmp/allreduce_bench || exit 1
  step ${ALLREDUCE_S:-420} "all-reduce bench, 8 ranks" /tmp/allreduce_bench "$programs" \
    "${RUNS:-25}" --max-mib=${MAX_MIB:-256} ${ALLREDUCE_ARGS:-} > "$out/allreduce-h200.csv"
  echo "$(cat "$out/gpu.txt"); CUDA $(nvcc --version | grep -o 'release [0-9.]*'); $(date -u +%Y-%m-%d); median of ${RUNS:-25} runs" \
    > "$out/allreduce-h200.txt"
fi
if [[ $what == *ncu* ]]; then
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  step 240 "ncu: kernels up to 1 MiB" "$ncu" --csv --log-file "$out/ncu-small.csv" \
    --kernel-name regex:'sdma_ldst|fusedCopy' \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__cycles_active.avg \
    /tmp/collective_bench "$programs" 2 --max-mib=1 > "$out/ncu-app.csv"
fi
