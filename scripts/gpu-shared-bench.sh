#!/usr/bin/env bash
# Buffers shared for a call on one NVIDIA GPU: the C API's shared case (the
# caller's cuMemAlloc'd blocks, a block's first use and later ones) at 4
# threads and 2 and 4 processes; the per-call bench with ranks as threads
# (2 and 8) on symmetric, staged and shared buffers, with and without
# sharing (bench/shared_report.py: CSV, table, plot); the torch program
# under the drop-in sharing from 4 KiB; nccl-tests -c 1 sharing from 1 MiB
# at 2 and 4 processes. Every step's output in $OUT/shared-bench.txt.
# The bench starts at SDMA_BENCH_MIN_BYTES (256 KiB) with low-latency calls
# off (SDMA_LL_BYTES=0: sharing is for the barrier path; the symmetric and
# staged baselines take that path too).
#
#   scripts/gpu-shared-bench.sh PRECOMPILED_DIR NCCL_TESTS_BIN_DIR [bench|checks]
# ("bench": the bench only; "checks": all but the bench)
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") bin=$(realpath "$2")
OUT=${OUT:-/tmp/out}
log=$OUT/shared-bench.txt
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
source scripts/gpu-step.sh
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
B=/tmp/sdma-shim-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
export CUDA_DEVICE_MAX_CONNECTIONS=32
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-nccl sdma-launch sdma-comm-test \
  > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
# run NAME PATTERN SECONDS COMMAND...: logged (gpu-step.sh).
run() { logged "$log" "$3" "$1" "$2" "${@:4}"; }
L="$B/bin/sdma-launch --timeout-s=80 --nproc-per-node"
only=${3:-}
if [ "$only" != bench ]; then
run "shared case, 4 threads" "round|expected|rror" 60 env \
  SDMA_SHARED_BYTES=65536 $B/bin/sdma-comm-test --case=shared \
  --threads-as-ranks=4
for n in 2 4; do
  run "shared case, $n processes" "round|expected|rror" 90 env \
    SDMA_SHARED_BYTES=65536 $L=$n $B/bin/sdma-comm-test --case=shared
done
fi
[ "$only" = checks ] || for R in 2 8; do
  for cfg in "symmetric 0" "staged 0" "plain 1" "symmetric 1"; do
    set -- $cfg
    run "bench $R threads, buffers $1, SDMA_SHARED_BYTES=$2" "rror" 120 \
      env SDMA_BENCH_BUFFERS=$1 SDMA_SHARED_BYTES=$2 SDMA_LL_BYTES=0 \
      SDMA_BENCH_MIN_BYTES=${SDMA_BENCH_MIN_BYTES:-262144} \
      $B/bin/sdma-comm-test --case=bench \
      --threads-as-ranks=$R --iters=20
  done
done
[ "$only" = checks ] ||
  python3 bench/shared_report.py $log $OUT/shared "one $device"
[ "$only" = bench ] && exit 0
for n in 2 4; do
  run "torch $n processes, SDMA_NCCL_SHARED_BYTES=4096" \
    "as expected|differ|rror" 100 env SDMA_NCCL_SHARED_BYTES=4096 \
    LD_PRELOAD=$B/lib/libsdma-nccl.so SDMA_NCCL_DEBUG=1 \
    $L=$n python3 test/gpu/nccl_torch.py
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_TESTS_DEVICE=0
export LD_LIBRARY_PATH=$B/lib/nccl:$B/lib SDMA_NCCL_DEBUG=1
for n in 2 4; do
  for t in all_gather alltoall all_reduce reduce_scatter broadcast reduce; do
    run "$t, $n processes, SDMA_NCCL_SHARED_BYTES=1048576" \
      "Out of bounds|rror" 100 mpirun -np $n \
      -x LD_PRELOAD=$B/lib/libsdma-nccl.so -x SDMA_NCCL_SHARED_BYTES=1048576 \
      -x LD_LIBRARY_PATH -x SDMA_PROGRAM_DIR -x SDMA_CACHE_DIR \
      -x NCCL_TESTS_DEVICE -x CUDA_DEVICE_MAX_CONNECTIONS -x SDMA_NCCL_DEBUG \
      "$bin/${t}_perf" -b 64K -e 16M -f 4 -g 1 -c 1 -n 3 -w 1
  done
done
