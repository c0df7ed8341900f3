#!/usr/bin/env bash
# The GPU suite, run on a machine with an NVIDIA GPU (it needs no MLIR):
# builds the runtime alone, then runs every load/store program in
# PROGRAM_DIR on GPU 0 with all ranks sharing it, checking every byte
# against the CPU simulator and the collective, and timing the runs.
#
#   scripts/gpu-suite.sh PROGRAM_DIR [OUT_DIR] [sdma-gpu-check options]
#
# PROGRAM_DIR holds NAME.hip + NAME.json pairs, made on the compiler side:
#   scripts/make-gpu-programs.sh PROGRAM_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
programs=$1; shift
out=${1:-.}; shift || true
scripts/build-runtime.sh /tmp/sdmart-build sdma-gpu-check
export SDMA_CACHE_DIR=/tmp/sdma-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
/tmp/sdmart-build/bin/sdma-gpu-check "$@" "$programs"/*.hip | tee "$out/gpu-suite.txt"
