#!/usr/bin/env bash
# One rank at copy speed (issue 38): the C API at world size 1 on one H200,
# the default (auto: a device copy, no kernel) against the load/store
# kernel it ran before (SDMA_PATH=ldst), the in-process executor and NCCL's
# world-size-1 call through torch, all in this one run, timed the same way
# (ITERS calls back to back, one wait, median of 5). Needs
# PRECOMPILED_DIR (sdma-precompile --ranks=1,2,4,8) for the in-process
# executor's programs.
#   scripts/gpu-single.sh PRECOMPILED_DIR [ITERS]
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") iters=${2:-200}
B=/tmp/sdma-single-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-comm-test sdma-launch || exit 1
launch="$B/bin/sdma-launch --timeout-s=200 --nproc-per-node=1"
echo "# auto (one rank: device copy)"
step 200 "C API, auto" $launch $B/bin/sdma-comm-test --case=bench --iters=$iters
echo "# ldst (the kernel)"
step 200 "C API, ldst" env SDMA_PATH=ldst $launch $B/bin/sdma-comm-test \
  --case=bench --iters=$iters
echo "# in-process executor"
step 300 "in-process" $B/bin/sdma-comm-test --case=baseline \
  --schedule="$pre" --iters=$iters
echo "# nccl world size 1 (torch)"
step 300 "nccl" python3 bench/nccl_ws1.py $iters
