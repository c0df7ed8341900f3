#!/usr/bin/env bash
# nccl-tests (NVIDIA's public source, built against NCCL 2.28.9's nccl.h;
# not committed) on sdma's NCCL drop-in, one process on one NVIDIA GPU:
# builds the drop-in, then runs each test under LD_PRELOAD with -c 1 (every
# element checked, nccl-tests' own "#wrong" column) at world size 1, the
# only rank count one process on one GPU gives nccl-tests (its threads take
# one GPU each; several processes need MPI, which the GPU image lacks).
#
#   scripts/gpu-nccl-tests.sh PRECOMPILED_DIR NCCL_TESTS_BIN_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") bin=$(realpath "$2")
B=/tmp/sdma-nccl-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-nccl || exit 1
export LD_PRELOAD=$B/lib/libsdma-nccl.so LD_LIBRARY_PATH=$B/lib/nccl:$B/lib
export SDMA_NCCL_DEBUG=1
for t in all_gather alltoall broadcast reduce_scatter; do
  step 120 "$t" "$bin/${t}_perf" -b 8 -e 64M -f 8 -g 1 -c 1 -n 20 -w 5
done
for op in sum prod max min avg; do
  step 120 "all_reduce $op" "$bin/all_reduce_perf" -b 8 -e 64M -f 8 -g 1 -c 1 \
    -n 20 -w 5 -o $op
done
for d in half bfloat16 int32 double; do
  step 120 "all_reduce sum $d" "$bin/all_reduce_perf" -b 8 -e 16M -f 16 -g 1 \
    -c 1 -n 10 -w 3 -d $d
done
step 120 "reduce" "$bin/reduce_perf" -b 8 -e 64M -f 8 -g 1 -c 1 -n 20 -w 5
# Point-to-point on sdma (its point-to-point kernel, world size 1: a rank
# sends to itself inside a group, as sendrecv_perf does).
step 120 "sendrecv" "$bin/sendrecv_perf" -b 8 -e 64M -f 8 -g 1 -c 1 -n 20 -w 5
# The fallback NCCL is loaded beside sdma but serves nothing nccl-tests
# calls: the same run with it set must still be all sdma's (the log says
# which path ran each op).
real=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
echo "fallback: $real"
SDMA_NCCL_FALLBACK=$real step 120 "sendrecv with the fallback NCCL set" \
  "$bin/sendrecv_perf" -b 8 -e 1M -f 8 -g 1 -c 1 -n 5 -w 1
