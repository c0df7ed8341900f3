#!/usr/bin/env bash
# A short GPU pass for the copy-engine executor alone: the three modes on a
# few programs (every byte checked), then a plan whose first poll asks for
# one notify more than ever comes: the run must fail after the timeout
# naming the queue and values, in plain and graph mode, and not hang.
#   scripts/gpu-ce-recheck.sh PROGRAM_DIR OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2
scripts/build-runtime.sh /tmp/sdmart-ce sdma-gpu-check || exit 1
check=/tmp/sdmart-ce/bin/sdma-gpu-check
export SDMA_CACHE_DIR=/tmp/sdma-ce-cache
$check --executors=ce,ce-batch,ce-graph --sizes=1K,1M --iters=3 \
  "$programs"/all_gather_ring-4.hip "$programs"/all_to_all_swap-8.hip \
  "$programs"/tree_broadcast-4.hip "$programs"/all_gather_direct-8.hip > "$out/ce-recheck.txt" 2>&1
tail -3 "$out/ce-recheck.txt"
work=/tmp/sdma-ce-stuck; mkdir -p $work
cp "$programs/all_gather_ring-2.hip" $work/stuck-ce.hip
scripts/make-stuck-plan.py "$programs/all_gather_ring-2.json" $work/stuck-ce.json
start=$(date +%s)
# One executor per process: a stream left blocked on the GPU would also
# block the next executor's context-wide synchronisation.
for mode in ce ce-graph; do
  timeout 60 $check --sizes=1K --iters=1 --timeout-ms=500 --executors=$mode \
    $work/stuck-ce.hip >> "$out/fault-stuck-ce.txt" 2>&1
  echo "$mode: exit $? after $(( $(date +%s) - start )) s" >> "$out/fault-stuck-ce.txt"
done
cut -c1-300 "$out/fault-stuck-ce.txt"
