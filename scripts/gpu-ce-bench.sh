#!/usr/bin/env bash
# The copy-engine executor's fixed cost on one NVIDIA GPU (it needs no
# MLIR): the direct all-gather and all-to-all DMA plans (pcpy and b2b) on
# CUDA streams, plain, batched and replayed from a CUDA graph, each graph
# mode also with -k (a queue run's device-local copies as one copy-list
# kernel: one graph node per run, CeOptions::localCopyKernel), against
# one cudaMemcpyAsync per transfer and the fused kernel in the same run;
# every output checked (bench/collective_bench.cu --programs=none: no
# load/store programs).
#   scripts/gpu-ce-bench.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
# (RUNS: runs per point, default 30; RANKS: default "4 8"; MAX_MIB:
# largest size, default 64; ONLY: all_gather or all_to_all, default both;
# STEP_S: seconds per rank count, default 400; BUILD_DIR: a runtime build
# to reuse.)
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-ce-bench-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
build_benches $B collective_bench || exit 1
for r in ${RANKS:-4 8}; do
  step ${STEP_S:-400} "copy-engine variants, $r ranks" /tmp/collective_bench \
    "$programs" "${RUNS:-30}" --ranks=$r --max-mib=${MAX_MIB:-64} \
    --programs=none ${ONLY:+--only=$ONLY} > "$out/ce-$r${ONLY:+-$ONLY}.csv"
  wc -l < "$out/ce-$r${ONLY:+-$ONLY}.csv"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
echo "$(cat "$out/gpu.txt"); CUDA $(nvcc --version | grep -o 'release [0-9.]*'); $(date -u +%Y-%m-%d); median of ${RUNS:-30} runs" > "$out/ce.txt"
