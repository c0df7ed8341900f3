#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests (public source, not committed: a checkout of
# github.com/NVIDIA/nccl-tests) against NCCL 2.28's nccl.h and sdma's
# drop-in as libnccl.so, for sm_90, into OUT_DIR (stripped binaries for
# scripts/gpu-nccl-tests.sh). Needs nvcc and CUDA's nccl.h
# (/usr/local/cuda on this project's machines) and build/lib/libsdma-nccl.so.
# With NCCL_TESTS_MPI=1, built with MPI (Debian's OpenMPI) so that one
# process per rank runs under mpirun, several sharing one GPU.
#   scripts/build-nccl-tests.sh NCCL_TESTS_SRC OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(realpath "$1") out=$2
mkdir -p "$out"
out=$(realpath "$out")
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/include" "$home/lib"
ln -s /usr/local/cuda/include/nccl.h "$home/include/nccl.h"
ln -s "$PWD/build/lib/libsdma-nccl.so" "$home/lib/libnccl.so"
build=$(mktemp -d)
tests=(all_reduce all_gather alltoall broadcast reduce reduce_scatter sendrecv)
mpi=()
[ "${NCCL_TESTS_MPI:-0}" = 1 ] &&
  mpi=(MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi)
make -j2 -C "$src/src" NCCL_HOME="$home" CUDA_HOME=/usr/local/cuda "${mpi[@]}" \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$build" \
  os.build $(printf "$build/%s_perf " "${tests[@]}") >/dev/null
for t in "${tests[@]}"; do
  cp "$build/${t}_perf" "$out/" && strip "$out/${t}_perf"
done
rm -rf "$build"
ls "$out"
