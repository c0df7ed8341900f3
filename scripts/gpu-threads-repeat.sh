#!/usr/bin/env bash
# Ranks as threads of one process on one GPU, the call bench again and
# again with short timeouts: on one H100, with each rank's kernel launched
# alone, 8 ranks timed out in 14 of 24 runs (2026-12-07); with every call
# started as one launch (CoLaunch, the default since session 65) in none of
# 10 (bench/results/gpu-runs/h100-s65-colaunch.txt). SDMA_COLAUNCH=0 gives
# the old launches back. Prints each run's exit status, timeout lines and
# rows; the logs go to OUT_DIR.
#   scripts/gpu-threads-repeat.sh PRECOMPILED_DIR OUT_DIR [RUNS] [RANKS]
# PRECOMPILED_DIR: sdma-precompile's programs (--ranks=RANKS). Extra
# environment (SDMA_LL_BYTES=0, ...) passes through to every run.
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") out=$2 runs=${3:-8} ranks=${4:-8}
mkdir -p "$out"
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
B=/tmp/sdma-group-build
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" timeout 300 \
  scripts/build-runtime.sh $B sdma-comm-test > "$out/build.txt" 2>&1 ||
  { tail -20 "$out/build.txt"; exit 1; }
failed=0
for i in $(seq 1 "$runs"); do
  log=$out/run$i.txt
  SDMA_TIMEOUT_MS=${SDMA_TIMEOUT_MS:-3000} \
    SDMA_BENCH_MAX_BYTES=${SDMA_BENCH_MAX_BYTES:-65536} timeout 60 \
    $B/bin/sdma-comm-test --case=bench --threads-as-ranks="$ranks" \
    --iters=200 > "$log" 2>&1
  status=$?
  [ $status = 0 ] || failed=$((failed + 1))
  echo "run $i exit $status, $(grep -c 'timed out' "$log") timeout lines," \
    "$(grep -c '^all' "$log") rows"
  # Each rank's first wait that timed out: whom it awaited, and what it saw.
  grep -o 'rank [0-9]* ([a-z_0-9]*) timed out.*: it did not' "$log" |
    sed 's/ timed out after [0-9]* ms//; s/: it did not//' |
    sort -u -t' ' -k2,2n | sed 's/^/  /'
done
echo "$failed of $runs runs failed"
[ $failed = 0 ]
