#!/usr/bin/env bash
# The MoE all-to-allv work on one NVIDIA GPU (it needs no MLIR): builds the
# runtime and the Python package, then
#   checks: sdmaAlltoAllv against its definition (C API, 2 and 8 processes),
#           an over-capacity count (4), the collectives (4), CUDA-graph
#           capture (2), the Python package (2), the MoE example (8), and
#           Python processes capturing dispatch + combine in one graph (8);
#   bench:  DeepSeek-V3 dispatch/combine, 128 and 4096 tokens, uniform and
#           skewed routing: sdma (ranks as threads of one process) and the
#           baselines (fused Triton permutation kernel, torch host counts)
#           on the same count matrices, then the report (CSV, plot, table);
#   probe:  the fixed cost (16 and 0 tokens) and the slots layout.
# Every step runs under its own timeout and prints its exit status.
#
#   scripts/gpu-moe.sh PROGRAM_DIR OUT_DIR [checks,bench,probe]
#
# PROGRAM_DIR holds the communicator's precompiled programs, made on the
# compiler side: build/bin/sdma-precompile --ranks=1,2,4,8 DIR
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 what=${3:-checks,bench,probe}
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-moe-build
export SDMA_PROGRAM_DIR=$programs SDMA_CACHE_DIR=/tmp/sdma-cache
export PYTHONPATH=$B/python SDMA_PYTHON=$B/python
# Ranks as threads of one process put 8 streams in one context: with the
# default 8 hardware queues, two ranks' streams can share one, and a rank's
# next kernel queued ahead of a peer's current one deadlocks the barrier.
export CUDA_DEVICE_MAX_CONNECTIONS=32
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF -DPython3_EXECUTABLE=$(command -v python3)" \
  scripts/build-runtime.sh $B sdma-comm-test sdma-launch _sdma || exit 1
launch="$B/bin/sdma-launch --timeout-s=120 --nproc-per-node"
test_bin=$B/bin/sdma-comm-test

if [[ $what == *checks* ]]; then
  step 150 "alltoallv C API 2 processes" $launch=2 "$test_bin" --case=alltoallv
  step 200 "alltoallv C API 8 processes" $launch=8 "$test_bin" --case=alltoallv
  for layout in slots packed; do
    for bad in over negative huge; do
      step 60 "alltoallv-overflow $layout $bad, 4 processes" $launch=4 \
        "$test_bin" --case=alltoallv-overflow --layout=$layout --bad=$bad
    done
  done
  step 120 "collectives 4 processes" $launch=4 "$test_bin" --case=collectives
  step 60 "graph 2 processes" $launch=2 "$test_bin" --case=graph
  step 150 "python collectives + all_to_all_v, 2 processes, cuda" \
    python3 test/python/collectives.py id 2 cuda
  step 150 "MoE example 8 processes" $launch=8 python3 examples/moe/moe.py
  mkdir -p "$out/py"
  step 200 "python processes: graph-captured dispatch+combine, 8 processes, 128 tokens" \
    $launch=8 python3 bench/moe_bench.py rank "$out/py" --tokens 128 \
    --routing uniform --iters 5
fi

moe() { # moe TOKENS ROUTING [LAYOUT]
  SDMA_HEAP_BYTES=$((6 << 30)) timeout 240 "$test_bin" --case=moe-bench \
    --threads-as-ranks=8 --iters=100 --tokens="$1" --routing="$2" \
    --layout="${3:-packed}"
  echo "exit $?"
}
if [[ $what == *bench* ]]; then
  for tokens in 128 4096; do
    for routing in uniform skewed; do
      echo "== bench $tokens $routing"
      moe "$tokens" "$routing" > "$out/sdma-$routing-$tokens.txt" 2>&1
      grep -v "^moe-bench counts" "$out/sdma-$routing-$tokens.txt"
      timeout 300 python3 bench/moe_bench.py baselines "$out" \
        --tokens "$tokens" --routing "$routing"
      echo "exit $?"
    done
  done
  echo "== report"
  python3 bench/moe_bench.py report "$out" "$out/moe-h200"
fi

if [[ $what == *probe* ]]; then
  mkdir -p "$out/probe"
  for cfg in "0 uniform packed" "128 uniform slots" "16 uniform packed"; do
    set -- $cfg
    echo "== probe $cfg"
    moe "$1" "$2" "$3" > "$out/probe/t$1-$3.txt" 2>&1
    grep -v "^moe-bench counts" "$out/probe/t$1-$3.txt" | head -24
  done
fi
