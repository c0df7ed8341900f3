#!/usr/bin/env bash
# Configures (once) and builds sdma in build/ with Ninja, two jobs.
#   scripts/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ] || [ $# -gt 0 ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "$@"
fi
cmake --build build -j"${SDMA_JOBS:-2}"
