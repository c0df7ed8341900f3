#!/usr/bin/env bash
# The NCCL drop-in on one NVIDIA GPU (it needs no MLIR): builds the runtime's
# libsdma-nccl.so and runtime/test/nccl/NcclApiTest.cpp (a program written
# against NCCL's API, compiled against the machine's nccl.h and linked to
# the drop-in as libnccl.so.2), then runs it as 2, 4 and 8 processes
# sharing the GPU (SDMA_DEVICE=cuda): every served call, every byte
# checked, with pageable host buffers staged through the symmetric heap;
# then point-to-point through the C API (sdma-comm-test --case=p2p) at 2, 4
# and 8, then an unmodified torch.distributed program
# (test/gpu/nccl_torch.py, uneven all_to_all_single and send/recv included)
# under LD_PRELOAD at 2 and 4 processes.
# Every step runs under its own timeout and prints its exit status.
#
#   scripts/gpu-nccl.sh PRECOMPILED_DIR
# PRECOMPILED_DIR: build/bin/sdma-precompile --ranks=2,4,8 DIR (compiler side).
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1")
B=/tmp/sdma-nccl-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
export CUDA_DEVICE_MAX_CONNECTIONS=32
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-nccl sdma-nccl-test sdma-launch \
  sdma-comm-test || exit 1
# The reductions the drop-in serves, through sdma's C API first (every
# type, each with one of the five operators, avg included; replicas
# bit-identical).
SDMA_TWO_SHOT_BYTES=512 step 240 "reductions C API, 2 processes" \
  $B/bin/sdma-launch --timeout-s=220 --nproc-per-node=2 \
  $B/bin/sdma-comm-test --case=reductions --counts=7,300
# Point-to-point through the C API on cuMemAlloc'd buffers (the NCCL API
# test's own point-to-point cases use host memory: CPU device only).
for n in 2 4 8; do
  step 240 "point-to-point C API, $n processes" \
    $B/bin/sdma-launch --timeout-s=220 --nproc-per-node=$n \
    $B/bin/sdma-comm-test --case=p2p
done
grep "NCCL drop-in" "$B.cmake.log"
readelf -d $B/bin/sdma-nccl-test | grep NEEDED | head -1
for n in 2 4 8; do
  rm -f /tmp/sdma-nccl-id-$n
  step 240 "NCCL API test, $n processes on one GPU" \
    $B/bin/sdma-launch --timeout-s=220 --nproc-per-node=$n \
    $B/bin/sdma-nccl-test /tmp/sdma-nccl-id-$n
done
# ncclCommShrink on the GPU: the last of 4 ranks dies after init, the others
# shrink it away (after a failed call with NCCL_SHRINK_ABORT, or at once)
# and check an all-reduce on the new communicator.
for m in abort default; do
  rm -f /tmp/sdma-nccl-id-shrink-$m
  NCCL_TEST_SHRINK=$m SDMA_TIMEOUT_MS=5000 step 120 \
    "ncclCommShrink ($m), 4 processes, the last dies" \
    $B/bin/sdma-launch --timeout-s=100 --nproc-per-node=4 \
    $B/bin/sdma-nccl-test /tmp/sdma-nccl-id-shrink-$m
done
# ncclCommInitAll: four ranks in one process on the GPU, one thread each.
NCCL_TEST_INIT_ALL=4 step 120 "ncclCommInitAll, 4 ranks in one process" \
  $B/bin/sdma-nccl-test
# An unmodified torch.distributed program (backend "nccl") under
# LD_PRELOAD: every NCCL call torch makes goes to the drop-in.
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())"
for n in 2 4; do
  step 240 "torch.distributed (nccl) under LD_PRELOAD, $n processes on one GPU" \
    env LD_PRELOAD=$B/lib/libsdma-nccl.so SDMA_NCCL_DEBUG=1 \
    $B/bin/sdma-launch --timeout-s=220 --nproc-per-node=$n \
    python3 test/gpu/nccl_torch.py
done
# torch's shrink_group (ncclCommShrink): the last of 4 ranks dies, the others
# shrink it away and all-reduce on the new group.
step 240 "torch.distributed shrink_group under LD_PRELOAD, 4 processes" \
  env LD_PRELOAD=$B/lib/libsdma-nccl.so SDMA_NCCL_DEBUG=1 SDMA_TIMEOUT_MS=5000 \
  $B/bin/sdma-launch --timeout-s=220 --nproc-per-node=4 \
  python3 test/gpu/nccl_torch_shrink.py
