#!/usr/bin/env bash
# The communicator's call protocol on one NVIDIA GPU (issue 38): builds of
# the same programs with different kernel texts (e.g. before and after a
# change to the protocol, or variants that leave a stage out), timed in
# the same run, then the checks on the last of them.
#   bench:  the C API's per-call latency and the host's share of it
#           (sdma-comm-test --case=bench: all-gather and all-to-all,
#           1 KiB - 64 MiB, ITERS back-to-back calls, median of 5) at 1
#           rank (SDMA_PATH=ldst: the kernel, not the one-rank copy), 2 and
#           8 ranks as threads, for each directory; the in-process executor
#           (one launch for every rank) as the baseline.
#   moe:    the MoE expert-major dispatch/combine (8 ranks as threads, 128
#           tokens, uniform and skewed) for each directory.
#   checks: every collective at 2, 4 and 8 processes, CUDA graphs, ranks
#           making different calls, a rank that leaves, all-to-allv (both
#           layouts), reductions, point-to-point and the DMA path (whose
#           kernels share the prelude), on the last directory.
# Every step runs under its own timeout and prints its exit status.
#
#   ITERS=100 [LL_BYTES="0 1048576"] scripts/gpu-protocol.sh bench,moe,checks DIR...
#
# Each directory holds precompiled programs (build/bin/sdma-precompile
# --ranks=1,2,3,4,8 DIR, and the MoE and all-to-allv-2d ones the checks
# name: scripts/gpu-moe2d.sh lists them).
set -uo pipefail
cd "$(dirname "$0")/.."
what=$1
shift
dirs=()
for d in "$@"; do dirs+=("$(realpath "$d")"); done
after=${dirs[${#dirs[@]} - 1]}
iters=${ITERS:-100}
B=/tmp/sdma-protocol-build
export CUDA_DEVICE_MAX_CONNECTIONS=32 # ranks as threads: see gpu-moe.sh
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-comm-test sdma-launch || exit 1
launch="$B/bin/sdma-launch --timeout-s=200 --nproc-per-node"
test_bin=$B/bin/sdma-comm-test

# $(with DIR): the environment that runs DIR's programs, with a cache of
# its own (paths without spaces).
with() {
  echo "env SDMA_PROGRAM_DIR=$1 SDMA_CACHE_DIR=/tmp/sdma-cache-$(basename "$1")"
}

if [[ $what == *bench* ]]; then
  for dir in "${dirs[@]}"; do
    name=$(basename "$dir")
    echo "# capi $name 1"
    step 300 "C API, $name, 1 rank (ldst)" $(with "$dir") env SDMA_PATH=ldst \
      "$test_bin" --case=bench --threads-as-ranks=1 --iters="$iters"
    for n in 2 8; do
      echo "# capi $name $n"
      step 300 "C API, $name, $n ranks as threads" $(with "$dir") \
        "$test_bin" --case=bench --threads-as-ranks=$n --iters="$iters"
    done
  done
  # LL_BYTES="0 1048576": the last directory again with each
  # SDMA_LL_BYTES (0: no low-latency call), to place the size rule.
  for v in ${LL_BYTES:-}; do
    name="$(basename "$after")-ll$v"
    for n in 1 2 8; do
      echo "# capi $name $n"
      step 300 "C API, $name, $n ranks" $(with "$after") env SDMA_PATH=ldst \
        SDMA_LL_BYTES=$v "$test_bin" --case=bench --threads-as-ranks=$n \
        --iters="$iters"
    done
  done
  echo "# in-process"
  step 400 "in-process, 1-8 ranks" $(with "$after") "$test_bin" --case=baseline \
    --schedule="$after" --iters="$iters"
fi

if [[ $what == *moe* ]]; then
  for dir in "${dirs[@]}"; do
    name=$(basename "$dir")
    if [ ! -f "$dir/all_to_allv_2d_e32_a128-8.hip" ]; then
      echo "# moe $name: no expert-major programs (sdma-precompile --ranks=8 --experts=32 --major-align=128), skipped"
      continue
    fi
    for routing in uniform skewed; do
      echo "# moe $name 128 $routing"
      step 300 "MoE expert-major, $name, 128 tokens, $routing" $(with "$dir") \
        env SDMA_HEAP_BYTES=$((8 << 30)) "$test_bin" --case=moe-bench \
        --threads-as-ranks=8 --iters=50 --tokens=128 --routing=$routing \
        --layout=expert --major-align=128
    done
  done
fi

if [[ $what == *checks* ]]; then
  for n in 2 4 8; do
    step 300 "every collective, $n processes" $(with "$after") \
      env SDMA_PATH=ldst SDMA_EXPECT_PATH=ldst $launch=$n "$test_bin" \
      --counts=1,1000,300000
  done
  # Low-latency calls back to back (no wait between them), small and large
  # alternating, ranks reaching each call at different times.
  step 200 "low-latency back to back, 2 processes" $(with "$after") \
    $launch=2 "$test_bin" --case=low-latency --iters=48 --jitter-us=200
  step 200 "low-latency back to back, 4 processes" $(with "$after") \
    $launch=4 "$test_bin" --case=low-latency --iters=48 --jitter-us=200
  step 200 "low-latency back to back, 8 ranks as threads" $(with "$after") \
    "$test_bin" --case=low-latency --iters=48 --threads-as-ranks=8
  step 200 "CUDA graph, 2 processes" $(with "$after") $launch=2 "$test_bin" \
    --case=graph
  step 200 "ranks as threads, CUDA graph, 4" $(with "$after") "$test_bin" \
    --case=graph --threads-as-ranks=4
  # The barrier path (as comm-cpu.test): a low-latency call's buffers are
  # its own rank's alone, so ranks passing different ones make one call.
  step 120 "ranks making different calls, 3 processes" $(with "$after") \
    env SDMA_LL_BYTES=0 $launch=3 "$test_bin" --case=other-buffer
  step 120 "a rank leaves, 3 processes" $(with "$after") \
    env SDMA_CHECK_CALLS=0 SDMA_TIMEOUT_MS=3000 $launch=3 "$test_bin" \
    --case=exit-early
  step 200 "alltoallv, 4 processes" $(with "$after") $launch=4 "$test_bin" \
    --case=alltoallv
  step 200 "alltoallv-2d, 4 processes" $(with "$after") $launch=4 "$test_bin" \
    --case=alltoallv-2d
  step 60 "alltoallv-2d-overflow, 3 processes" $(with "$after") $launch=3 \
    "$test_bin" --case=alltoallv-2d-overflow
  step 200 "reductions, 4 processes" $(with "$after") $launch=4 "$test_bin" \
    --case=reductions
  step 200 "point-to-point, 4 processes" $(with "$after") $launch=4 \
    "$test_bin" --case=p2p
  step 300 "DMA path: every collective, 4 processes" $(with "$after") \
    env SDMA_PATH=dma SDMA_EXPECT_PATH=dma $launch=4 "$test_bin" \
    --counts=1,1000,300000
fi
