#!/usr/bin/env bash
# The C API fuzzer's long runs (CI runs a short one: test/runtime/capi-fuzz.test):
# >= 100k calls at one rank and thousands at 2 and 3 ranks, several seeds;
# the summary lines go to bench/results/fuzz-capi.txt.
#   scripts/fuzz-capi.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/bin/sdma-capi-fuzz
out=bench/results/fuzz-capi.txt
{
  echo "# scripts/fuzz-capi.sh, $(date -u +%F), $(git rev-parse --short HEAD)"
  for seed in 101 102; do
    timeout 900 $bin --calls=100000 --ranks=1 --seed=$seed 2>&1 | tail -3
  done
  for seed in 201 202; do
    timeout 900 $bin --calls=5000 --ranks=2 --seed=$seed 2>&1 | tail -3
  done
  timeout 900 $bin --calls=3000 --ranks=3 --seed=301 2>&1 | tail -3
} | tee "$out"
! grep -q 'FAILED\|HANG' "$out"
