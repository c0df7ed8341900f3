#!/usr/bin/env bash
# Ranks as threads of one process on one GPU (CoLaunch, docs/c-api.md "Ranks
# that share a GPU context"): the call bench's cost with every call started
# as one launch (the default; with SDMA_COLAUNCH_MARKS=1, each rank's thread
# ordering its own stream; with SDMA_LAUNCH_GRAPHS=1, repeated rounds as
# graphs), or each rank's own launch through the gate
# (SDMA_COLAUNCH_MODE=ordered) against each rank's kernel alone (SDMA_COLAUNCH=0, 32 hardware
# queues) and the in-process executor, in one run; then runs that must not
# time out (8 threads, the default queues and one queue; ordered, and
# together with own marks) and every byte of
# the collectives, low-latency calls and all-to-allv at 8 threads on one
# hardware queue. The console feeds bench/plot_colaunch.py.
#   scripts/gpu-colaunch.sh PRECOMPILED_DIR OUT_DIR [MAX_BYTES]
# PRECOMPILED_DIR: sdma-precompile's programs (--ranks=2,8).
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") out=$2 most=${3:-262144}
mkdir -p "$out"
# The console also goes to OUT/console.txt: a device call returns only the
# last part of it.
exec > >(tee -a "$out/console.txt") 2>&1
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
B=/tmp/sdma-colaunch-build
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" timeout 300 \
  scripts/build-runtime.sh $B sdma-comm-test > "$out/build.txt" 2>&1 ||
  { tail -20 "$out/build.txt"; exit 1; }
T=$B/bin/sdma-comm-test
echo "== timing, to $most bytes"
for n in 8 2; do
  for mode in "1 0 0 ordered" "1 0 0 together" "1 1 0 together" \
    "1 0 1 together" "1 1 1 together" "0 0 0 together"; do
    set -- $mode
    echo "-- t$n colaunch=$1 marks=$2 graphs=$3 mode=$4 rep 1"
    CUDA_DEVICE_MAX_CONNECTIONS=32 SDMA_COLAUNCH=$1 SDMA_COLAUNCH_MARKS=$2 \
      SDMA_LAUNCH_GRAPHS=$3 SDMA_COLAUNCH_MODE=$4 SDMA_TIMEOUT_MS=3000 \
      SDMA_BENCH_MAX_BYTES=$most \
      timeout 60 "$T" --case=bench --threads-as-ranks=$n --iters=200 2>&1 |
      grep -v "^op" | tr '\n' ' '
    echo
  done
done
echo "-- in-process executor (same run)"
timeout 60 "$T" --case=baseline --schedule="$pre" --iters=200 2>&1 |
  grep -E "^all(gather|toall),(2|8)," | tr '\n' ' '
echo
echo "== no timeouts: 8 threads (default queues twice, one queue twice; ordered, own marks)"
for mode in "ordered 0" "together 1"; do
  set -- $mode
  for c in 8 8 1 1; do
    CUDA_DEVICE_MAX_CONNECTIONS=$c SDMA_COLAUNCH_MODE=$1 \
      SDMA_COLAUNCH_MARKS=$2 SDMA_TIMEOUT_MS=3000 \
      SDMA_BENCH_MAX_BYTES=65536 timeout 60 "$T" --case=bench \
      --threads-as-ranks=8 --iters=200 > "$out/nt.txt" 2>&1
    echo "$1 marks $2 queues $c: exit $?, $(grep -c 'timed out' "$out/nt.txt") timeouts"
  done
done
echo "== every byte, 8 threads, one hardware queue: ordered, own marks"
for mode in "ordered 0" "together 1"; do
  set -- $mode
  for c in collectives low-latency alltoallv; do
    CUDA_DEVICE_MAX_CONNECTIONS=1 SDMA_COLAUNCH_MODE=$1 SDMA_COLAUNCH_MARKS=$2 \
      SDMA_TIMEOUT_MS=10000 timeout 120 "$T" --case=$c --threads-as-ranks=8 \
      --iters=40 > "$out/case.txt" 2>&1
    echo "$1 marks $2 $c: exit $?, $(tail -1 "$out/case.txt" | cut -c1-150)"
  done
done
