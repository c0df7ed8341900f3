#!/usr/bin/env bash
# The reductions on one NVIDIA GPU (it needs no MLIR): builds the runtime
# and the Python package, then
#   checks: every reduction program (all-reduce one-shot, two-shot, ring,
#           in place; reduce-scatter direct and ring; reduce) at 2, 4 and 8
#           ranks sharing the GPU, every output element against the exact
#           evaluator (sdma-gpu-check); sdmaAllReduce / sdmaReduceScatter /
#           sdmaReduce as a job of 2, 4 and 8 processes (every schedule the
#           communicator picks, every root, in place and not; element types
#           as listed); the Python package's all_reduce,
#           reduce_scatter_tensor and reduce (2 processes);
#   bench:  bench/allreduce_bench.cu: sdma's all-reduce programs against
#           hand-written fused one-shot and two-shot kernels, f32 and bf16,
#           1 KiB to 256 MiB per rank, 8 ranks on the GPU (CSV; plot and
#           table on the compiler side: bench/plot_allreduce.py).
# Every step runs under its own timeout and prints its exit status.
#
#   scripts/gpu-reduce.sh PROGRAM_DIR PRECOMPILED_DIR OUT_DIR [checks,bench]
# ("programs": the sdma-gpu-check step of checks alone.)
#
# PROGRAM_DIR: scripts/make-gpu-programs.sh DIR; PRECOMPILED_DIR:
# build/bin/sdma-precompile --ranks=2,4,8 DIR (both on the compiler side).
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") pre=$(realpath "$2") out=$3 what=${4:-checks,bench}
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-reduce-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
export PYTHONPATH=$B/python SDMA_PYTHON=$B/python
export CUDA_DEVICE_MAX_CONNECTIONS=32
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF -DPython3_EXECUTABLE=$(command -v python3)" \
  scripts/build-runtime.sh $B sdma-comm-test sdma-launch sdma-gpu-check sdmart _sdma || exit 1
launch="$B/bin/sdma-launch --timeout-s=200 --nproc-per-node"
test_bin=$B/bin/sdma-comm-test

if [[ $what == *checks* || $what == *programs* ]]; then
  step 300 "sdma-gpu-check: every reduction program, 2, 4 and 8 ranks" \
    "$B/bin/sdma-gpu-check" --sizes=1K,24K,1M,8M --iters=5 \
    "$programs"/all_reduce_*.hip "$programs"/reduce_scatter_*.hip \
    "$programs"/reduce-*.hip
fi
if [[ $what == *checks* ]]; then
  export SDMA_TWO_SHOT_BYTES=512
  step 200 "reductions C API 2 processes, every type" $launch=2 "$test_bin" \
    --case=reductions --counts=7,300,100000
  step 200 "reductions C API 4 processes" $launch=4 "$test_bin" \
    --case=reductions --counts=5,300 --types=f32,bf16,f16,i32,ui8,i64
  step 240 "reductions C API 8 processes" $launch=8 "$test_bin" \
    --case=reductions --counts=3,1000 --types=f32,bf16,i32
  unset SDMA_TWO_SHOT_BYTES
  step 200 "python collectives + reductions, 2 processes, cuda" \
    python3 test/python/collectives.py id 2 cuda
fi
if [[ $what == *bench* ]]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime/include bench/allreduce_bench.cu \
    $B/libsdmart.a -ldl -lpthread -o /tmp/allreduce_bench || exit 1
  step 480 "all-reduce bench, 8 ranks" /tmp/allreduce_bench "$programs" "${RUNS:-30}" \
    > "$out/allreduce-h200.csv"
  echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); CUDA $(nvcc --version | grep -o 'release [0-9.]*'); $(date -u +%Y-%m-%d); median of ${RUNS:-30} runs" \
    > "$out/allreduce-h200.txt"
  tail -n 12 "$out/allreduce-h200.csv"
fi
