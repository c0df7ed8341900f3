#!/usr/bin/env bash
# The NCCL drop-in on one NVIDIA GPU, both buffer modes: an unmodified
# torch.distributed program (test/gpu/nccl_torch.py) at 2 and 4 processes,
# and nccl-tests (built by scripts/build-nccl-tests.sh with MPI) with -c 1
# at 2, 4 and 8 processes sharing the GPU, with private buffers on (the
# default) and off (SDMA_NCCL_PRIVATE=0). Every step's output goes to one
# log, $OUT/dropin-check.txt; the console gets each step's name, its
# verdict lines and exit status.
#
#   scripts/gpu-dropin-check.sh PRECOMPILED_DIR NCCL_TESTS_BIN_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") bin=$(realpath "$2")
OUT=${OUT:-/tmp/out}
log=$OUT/dropin-check.txt
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=/tmp/sdma-shim-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
t0=$(date +%s)
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-nccl sdma-launch > $OUT/build.txt 2>&1 ||
  { tail -30 $OUT/build.txt; exit 1; }
echo "build done $(( $(date +%s) - t0 )) s"
# run NAME PATTERN COMMAND...: logged (gpu-step.sh), 100 s.
run() { TAIL=6 logged "$log" 100 "$@"; }
for n in 2 4; do
  for p in 0 1; do
    run "torch $n processes, SDMA_NCCL_PRIVATE=$p" "as expected|differ|rror" \
      env SDMA_NCCL_PRIVATE=$p LD_PRELOAD=$B/lib/libsdma-nccl.so \
      SDMA_NCCL_DEBUG=1 $B/bin/sdma-launch --timeout-s=90 \
      --nproc-per-node=$n python3 test/gpu/nccl_torch.py
  done
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_TESTS_DEVICE=0
export CUDA_DEVICE_MAX_CONNECTIONS=32 LD_LIBRARY_PATH=$B/lib/nccl:$B/lib
export SDMA_NCCL_DEBUG=1
for cfg in "2 1" "4 1" "8 1" "4 0"; do
  set -- $cfg
  for t in all_gather alltoall all_reduce reduce_scatter broadcast reduce \
    sendrecv; do
    run "$t, $1 processes, SDMA_NCCL_PRIVATE=$2" "Out of bounds|rror" \
      mpirun -np $1 -x LD_PRELOAD=$B/lib/libsdma-nccl.so \
      -x SDMA_NCCL_PRIVATE=$2 -x LD_LIBRARY_PATH -x SDMA_PROGRAM_DIR \
      -x SDMA_CACHE_DIR -x NCCL_TESTS_DEVICE -x CUDA_DEVICE_MAX_CONNECTIONS \
      -x SDMA_NCCL_DEBUG "$bin/${t}_perf" -b 8 -e 4M -f 8 -g 1 -c 1 -n 3 -w 1
  done
  echo "elapsed $(( $(date +%s) - t0 )) s"
done
echo "all done $(( $(date +%s) - t0 )) s"
