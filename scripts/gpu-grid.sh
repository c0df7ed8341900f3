#!/usr/bin/env bash
# Load/store grid sizing on one NVIDIA GPU (it needs no MLIR): the direct
# all-gather and all-to-all programs at 2, 4 and 8 ranks sharing the GPU,
# launched on grids sized for 1 (default since this bench), 2 and 4 units
# of 16 bytes per thread (CudaOptions::unitsPerThread; -u2, -u4; the
# committed run, bench/results/grid-h200.csv, predates the change and calls
# 4 the default and 1 -u1), against the fused kernel in the same
# run; every output checked (bench/collective_bench.cu --programs=...).
#   scripts/gpu-grid.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
# (RUNS: runs per point, default 30; RANKS: default "2 4 8"; MAX_MIB: largest
# size, default 16;
# BUILD_DIR: a runtime build to reuse, default /tmp/sdma-grid-build.)
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-grid-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
build_benches $B collective_bench || exit 1
for r in ${RANKS:-2 4 8}; do
  step 200 "grid sizing, $r ranks" /tmp/collective_bench "$programs" \
    "${RUNS:-30}" --ranks=$r --max-mib=${MAX_MIB:-16} --ldst-only \
    --programs=all_gather_direct,all_to_all_direct > "$out/grid-$r.csv"
  wc -l < "$out/grid-$r.csv"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
echo "$(cat "$out/gpu.txt"); CUDA $(nvcc --version | grep -o 'release [0-9.]*'); $(date -u +%Y-%m-%d); median of ${RUNS:-30} runs" > "$out/grid.txt"
