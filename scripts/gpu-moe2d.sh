#!/usr/bin/env bash
# The expert-major MoE all-to-allv (sdmaAlltoAllv2d and its _offset, issue
# 41) on one NVIDIA GPU (it needs no MLIR): builds the runtime and the
# Python package, then
#   checks: the pair against torch's definition (C API, 2 and 4 processes),
#           an over-capacity count and an offset past the end, the Python
#           ops (2 processes, CUDA), the MoE example feeding its expert GEMM
#           from expert-major rows (8 processes);
#   bench:  DeepSeek-V3 (hidden 7168 bf16, top-8 of 256, 32 experts per
#           rank, groups padded to 128 rows), 128 and 4096 tokens, uniform
#           and skewed: sdma's expert-major dispatch/combine and its
#           rank-level one (ranks as threads of one process), the fused
#           Triton kernel into the same layout, and the rank-level path's
#           permutation, on the same count tables; then the report.
# Every step runs under its own timeout and prints its exit status.
#
#   scripts/gpu-moe2d.sh PROGRAM_DIR OUT_DIR [checks,bench] [TOKENS...]
#
# TOKENS: the bench's token counts (128 4096); the report reads every
# baselines file in OUT_DIR, so runs of different counts can share one.
#
# PROGRAM_DIR holds the communicator's precompiled programs, made on the
# compiler side:
#   build/bin/sdma-precompile --ranks=1,2,4,8 DIR
#   build/bin/sdma-precompile --ranks=2,3,4 --experts=1,2,3,5 DIR
#   build/bin/sdma-precompile --ranks=2,3,4,8 --experts=1,2,3,4,5 --major-align=4 DIR
#   build/bin/sdma-precompile --ranks=8 --experts=32 --major-align=128 DIR
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 what=${3:-checks,bench}
shift $(($# < 3 ? $# : 3))
token_counts=${*:-128 4096}
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-moe-build
export SDMA_PROGRAM_DIR=$programs SDMA_CACHE_DIR=/tmp/sdma-cache
export PYTHONPATH=$B/python SDMA_PYTHON=$B/python
export CUDA_DEVICE_MAX_CONNECTIONS=32 # ranks as threads: see gpu-moe.sh
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF -DPython3_EXECUTABLE=$(command -v python3)" \
  scripts/build-runtime.sh $B sdma-comm-test sdma-launch _sdma || exit 1
launch="$B/bin/sdma-launch --timeout-s=120 --nproc-per-node"
test_bin=$B/bin/sdma-comm-test

if [[ $what == *checks* ]]; then
  step 200 "alltoallv-2d C API 2 processes" $launch=2 "$test_bin" --case=alltoallv-2d
  step 300 "alltoallv-2d C API 4 processes" $launch=4 "$test_bin" --case=alltoallv-2d
  step 60 "alltoallv-2d-overflow 3 processes" $launch=3 "$test_bin" --case=alltoallv-2d-overflow
  step 60 "alltoallv-2d-bad-offset 3 processes" $launch=3 "$test_bin" --case=alltoallv-2d-bad-offset
  step 150 "python collectives + all_to_all_vdev_2d, 2 processes, cuda" \
    python3 test/python/collectives.py id 2 cuda
  step 150 "MoE example (expert-major) 8 processes" $launch=8 python3 examples/moe/moe.py
fi

moe() { # moe TOKENS ROUTING LAYOUT
  SDMA_HEAP_BYTES=$((8 << 30)) timeout 300 "$test_bin" --case=moe-bench \
    --threads-as-ranks=8 --iters=100 --tokens="$1" --routing="$2" \
    --layout="$3" --major-align=128
  echo "exit $?"
}
if [[ $what == *bench* ]]; then
  for tokens in $token_counts; do
    for routing in uniform skewed; do
      echo "== bench $tokens $routing"
      moe "$tokens" "$routing" expert > "$out/sdma-expert-$routing-$tokens.txt" 2>&1
      moe "$tokens" "$routing" packed > "$out/sdma-$routing-$tokens.txt" 2>&1
      grep -hv "^moe-bench.*counts" "$out/sdma-expert-$routing-$tokens.txt" \
        "$out/sdma-$routing-$tokens.txt"
      timeout 400 python3 bench/moe_bench.py baselines "$out" --layout expert \
        --align 128 --tokens "$tokens" --routing "$routing"
      echo "exit $?"
    done
  done
  echo "== report"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 |
    grep -oiE 'h100|h200|a100|b200' | tr A-Z a-z)
  python3 bench/moe_bench.py report "$out" "$out/moe-${gpu:-gpu}" --layout expert
fi
