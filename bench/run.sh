#!/usr/bin/env bash
# Runs the benchmark on a machine with an NVIDIA GPU and nvcc (no MLIR
# needed): builds the runtime and the harness, runs it over the compiled
# programs in PROGRAM_DIR, and writes CSV, a plot and the machine's details
# into OUT_DIR.
#   bench/run.sh PROGRAM_DIR OUT_DIR [RUNS]
# PROGRAM_DIR: scripts/make-gpu-programs.sh PROGRAM_DIR (on the compiler side)
set -euo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2 runs=${3:-50}
scripts/build-runtime.sh /tmp/sdmart-build sdmart
nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime/include bench/collective_bench.cu \
  /tmp/sdmart-build/libsdmart.a -ldl -lpthread -o /tmp/collective_bench
export SDMA_CACHE_DIR=/tmp/sdma-cache
stamp=$(date -u +%Y-%m-%d)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
/tmp/collective_bench "$programs" "$runs" > "$out/collectives-h200.csv"
echo "$gpu; CUDA $(nvcc --version | grep -o 'release [0-9.]*'); $stamp; median of $runs runs" > "$out/collectives-h200.txt"
python3 bench/plot.py "$out/collectives-h200.csv" "$out/collectives-h200.png" "$gpu, $stamp, median of $runs"
