#!/usr/bin/env bash
# Multi-node on one NVIDIA GPU: ranks as processes sharing it, nodes
# simulated (sdma-node-job --local-ranks=G), MPI between nodes, so every
# network phase is staged through host memory (the CUDA device's buffers, a
# host-memory transport: Communicator::synchronize, copies out and in); the
# node phases are the CUDA load/store kernels of each node's part. Every
# hierarchical collective (the all-to-allv too) at 2x2, 2x3 and 3x2, every
# byte checked, then the per-phase bench at 2x2. Needs mpirun and MPI's
# headers on the machine.
#
#   scripts/gpu-nodes.sh PRECOMPILED_DIR
# PRECOMPILED_DIR: on the compiler side,
#   build/bin/sdma-precompile --ranks=4,6 --local-ranks=2 DIR schedules/hier/*.mlir
#   build/bin/sdma-precompile --ranks=6 --local-ranks=3 DIR schedules/hier/*.mlir
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1")
B=/tmp/sdma-nodes-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache SDMA_DEVICE=cuda
export SDMA_COMPILER_LIBRARY=/nonexistent/libsdma-compiler.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if ! command -v mpirun > /dev/null; then
  echo "no mpirun on this machine: the multi-node GPU run cannot be made"
  exit 3
fi
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-node-job || exit 1
for s in all_gather all_to_all reduce_scatter all_reduce; do
  for shape in 4:2 6:3 6:2; do
    step 200 "$s, ${shape%:*} ranks of ${shape#*:} per node" \
      mpirun -np "${shape%:*}" $B/bin/sdma-node-job --local-ranks="${shape#*:}" \
      --sizes=1K,1M --runs=2 "schedules/hier/$s.mlir"
  done
done
# The hierarchical all-to-allv (capacity slots of 4 rows): random, full and
# empty slots, every row, count and untouched byte.
for shape in 4:2 6:3 6:2; do
  step 200 "all_to_allv, ${shape%:*} ranks of ${shape#*:} per node" \
    mpirun -np "${shape%:*}" $B/bin/sdma-node-job --local-ranks="${shape#*:}" \
    --sizes=1K,1M --runs=3 schedules/hier/all_to_allv.mlir
done
# The rooted ones, at the root they declare (the precompiled plans' root;
# CI runs them rooted elsewhere with the compiler).
for s in broadcast reduce gather scatter; do
  step 150 "$s, 4 ranks of 2 per node, root 0" \
    mpirun -np 4 $B/bin/sdma-node-job --local-ranks=2 \
    --sizes=1K,1M --runs=2 "schedules/hier/$s.mlir"
done
for s in all_gather all_to_all; do
  step 300 "$s bench, 2x2" mpirun -np 4 $B/bin/sdma-node-job --local-ranks=2 \
    --sizes=4K,64K,1M --runs=1 --bench=20 "schedules/hier/$s.mlir"
done
