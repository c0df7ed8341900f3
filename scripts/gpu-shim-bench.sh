#!/usr/bin/env bash
# The NCCL drop-in's cost per call (issue 37 item 7), world size 1 on one
# NVIDIA GPU: sdma's C API (sdma-comm-test --case=bench), nccl-tests'
# all_gather_perf and alltoall_perf through libsdma-nccl.so (LD_PRELOAD),
# (cudaMalloc'd buffers, staged, and -R 2's registered ones), and the same
# binaries on the real NCCL (torch's, from the nvidia-nccl wheel), one run;
# first a -c 1 pass through the drop-in (every element checked), then the
# timed passes (-c 0, 5 cycles of 200 calls). The report:
# bench/shim_bench.py.
#   scripts/gpu-shim-bench.sh NCCL_TESTS_BIN_DIR OUT_DIR [GPU_NAME]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1") out=$2 gpu=${3:-one GPU}
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-shim-build
export SDMA_CACHE_DIR=/tmp/sdma-cache
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-nccl sdma-comm-test sdma-launch || exit 1
real=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))")
step 200 "C API bench, one rank" $B/bin/sdma-launch --timeout-s=190 \
  --nproc-per-node=1 $B/bin/sdma-comm-test --case=bench --iters=200 |
  grep -E '^(op|allgather|alltoall),' > "$out/capi.csv"
cat "$out/capi.csv"
for t in all_gather alltoall; do
  op=${t/_/}
  step 100 "$t through the drop-in, checked" env \
    LD_PRELOAD=$B/lib/libsdma-nccl.so LD_LIBRARY_PATH=$B/lib/nccl:$B/lib \
    "$bin/${t}_perf" -b 1K -e 64M -f 4 -g 1 -c 1 -n 5 -w 2
  step 150 "$t through the drop-in, timed" env \
    LD_PRELOAD=$B/lib/libsdma-nccl.so LD_LIBRARY_PATH=$B/lib/nccl:$B/lib \
    "$bin/${t}_perf" -b 1K -e 64M -f 4 -g 1 -c 0 -n 200 -w 20 -N 5 \
    > "$out/shim-$op.txt"
  # -R 2: buffers from ncclMemAlloc registered as symmetric windows, which
  # the drop-in runs on in place; the default (cudaMalloc) is staged
  # through sdma's symmetric memory (a copy in and out).
  step 150 "$t through the drop-in, registered buffers, timed" env \
    LD_PRELOAD=$B/lib/libsdma-nccl.so LD_LIBRARY_PATH=$B/lib/nccl:$B/lib \
    "$bin/${t}_perf" -b 1K -e 64M -f 4 -g 1 -c 0 -n 200 -w 20 -N 5 -R 2 \
    > "$out/shim-$op-registered.txt"
  step 150 "$t on NCCL, timed" env LD_LIBRARY_PATH="$real" \
    "$bin/${t}_perf" -b 1K -e 64M -f 4 -g 1 -c 0 -n 200 -w 20 -N 5 \
    > "$out/nccl-$op.txt"
  grep -v "^#" "$out/shim-$op.txt" | head -3
  grep -v "^#" "$out/nccl-$op.txt" | head -3
done
python3 bench/shim_bench.py "$out" "$out/shim" "$gpu" && cat "$out/shim.md"
