#!/usr/bin/env bash
# nccl-tests (NVIDIA's public source, built against NCCL 2.28.9's nccl.h by
# scripts/build-nccl-tests.sh; not committed) on sdma's NCCL drop-in, on
# one NVIDIA GPU: builds the drop-in, then runs each test under LD_PRELOAD
# with -c 1 (every element checked, nccl-tests' own "#wrong" column):
# where the binaries were built with MPI (NCCL_TESTS_MPI=1), as 2, 4 and 8
# processes under mpirun sharing the GPU (NCCL_TESTS_DEVICE=0; real NCCL
# refuses two ranks on one GPU, sdma does not); then at world size 1 (one
# process).
#
#   scripts/gpu-nccl-tests.sh PRECOMPILED_DIR NCCL_TESTS_BIN_DIR [ranks,...]
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") bin=$(realpath "$2") counts=${3:-2,4,8} counts_=
B=/tmp/sdma-nccl-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-nccl || exit 1
export LD_PRELOAD=$B/lib/libsdma-nccl.so LD_LIBRARY_PATH=$B/lib/nccl:$B/lib
export SDMA_NCCL_DEBUG=1
# Several processes sharing the GPU, where the tests were built with MPI.
if ! ldd "$bin/all_gather_perf" | grep -q libmpi; then
  echo "nccl-tests built without MPI: world size 1 only"
elif ! command -v mpirun > /dev/null; then
  echo "no mpirun on this machine: world size 1 only"
else
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_TESTS_DEVICE=0
  export CUDA_DEVICE_MAX_CONNECTIONS=32
  counts_=$counts
fi
for n in ${counts_//,/ }; do
  for t in all_gather alltoall all_reduce reduce_scatter broadcast reduce \
    sendrecv; do
    step 150 "$t, $n processes" mpirun -np "$n" -x LD_PRELOAD -x LD_LIBRARY_PATH \
      -x SDMA_PROGRAM_DIR -x SDMA_CACHE_DIR -x NCCL_TESTS_DEVICE \
      -x CUDA_DEVICE_MAX_CONNECTIONS "$bin/${t}_perf" -b 8 -e 4M -f 8 -g 1 \
      -c 1 -n 5 -w 2
  done
  # PreMulSum with each rank's own scalar (nccl-tests: 1 on even ranks, 2
  # on odd ones).
  step 150 "all_reduce mulsum, $n processes" mpirun -np "$n" -x LD_PRELOAD \
    -x LD_LIBRARY_PATH -x SDMA_PROGRAM_DIR -x SDMA_CACHE_DIR \
    -x NCCL_TESTS_DEVICE -x CUDA_DEVICE_MAX_CONNECTIONS \
    "$bin/all_reduce_perf" -b 8 -e 4M -f 8 -g 1 -c 1 -n 5 -w 2 -o mulsum
done
# World size 1: one process.
for t in all_gather alltoall broadcast reduce_scatter; do
  step 120 "$t" "$bin/${t}_perf" -b 8 -e 16M -f 8 -g 1 -c 1 -n 10 -w 3
done
for op in sum prod max min avg mulsum; do
  step 120 "all_reduce $op" "$bin/all_reduce_perf" -b 8 -e 16M -f 8 -g 1 -c 1 \
    -n 10 -w 3 -o $op
done
for d in half bfloat16 int32 double; do
  step 120 "all_reduce sum $d" "$bin/all_reduce_perf" -b 8 -e 16M -f 16 -g 1 \
    -c 1 -n 5 -w 2 -d $d
done
step 120 "reduce" "$bin/reduce_perf" -b 8 -e 16M -f 8 -g 1 -c 1 -n 10 -w 3
# Point-to-point on sdma (its point-to-point kernel, world size 1: a rank
# sends to itself inside a group, as sendrecv_perf does).
step 120 "sendrecv" "$bin/sendrecv_perf" -b 8 -e 16M -f 8 -g 1 -c 1 -n 10 -w 3
# The fallback NCCL is loaded beside sdma but serves nothing nccl-tests
# calls: the same run with it set must still be all sdma's (the log says
# which path ran each op).
real=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))")
echo "fallback: $real"
SDMA_NCCL_FALLBACK=$real step 120 "sendrecv with the fallback NCCL set" \
  "$bin/sendrecv_perf" -b 8 -e 1M -f 8 -g 1 -c 1 -n 5 -w 1
