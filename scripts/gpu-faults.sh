#!/usr/bin/env bash
# Fault handling on a GPU machine: a wait that never completes must fail the
# run with the rank, flag slot and values (not hang), and a corrupt kernel
# cache entry must be detected and rebuilt.
#   scripts/gpu-faults.sh PROGRAM_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2
scripts/build-runtime.sh /tmp/sdmart-build sdma-gpu-check
export SDMA_CACHE_DIR=/tmp/sdma-faults-cache
rm -rf "$SDMA_CACHE_DIR"
check=/tmp/sdmart-build/bin/sdma-gpu-check
work=/tmp/sdma-faults; rm -rf $work; mkdir -p $work
# 1. A ring whose first wait asks for one signal more than ever comes.
cp "$programs/all_gather_ring-2.hip" $work/stuck.hip
cp "$programs/all_gather_ring-2.json" $work/stuck.json
python3 - $work/stuck.hip <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
head, rest = src.split("sdma_steps[] = {", 1)
body, tail = rest.split("};", 1)
values = [int(v) for v in body.replace("\n", " ").split(",") if v.strip()]
for i in range(0, len(values), 3):
    if values[i] == 3:          # the first WAIT step: ask for k + 1
        values[i + 2] += 1
        break
open(path, "w").write(head + "sdma_steps[] = {" + ", ".join(map(str, values)) + ",};" + tail)
PY
start=$(date +%s)
set +e
timeout 120 $check --sizes=1K --iters=1 --timeout-ms=500 $work/stuck.hip > $out/fault-stuck.txt 2>&1
rc=$?
set -e
echo "exit $rc after $(( $(date +%s) - start )) s" >> $out/fault-stuck.txt
# 1b. The same in a DMA plan on CUDA streams (plain and graph): the run
# must fail after the timeout naming the unfinished queues, not hang.
scripts/gpu-ce-recheck.sh "$programs" "$out" > /dev/null || true
cat $out/fault-stuck-ce.txt >> $out/fault-stuck.txt
# 2. Corrupt every cache entry, then run again: detected, rebuilt, correct.
$check --sizes=1K,1M --iters=2 "$programs/all_gather_ring-4.hip" > $out/fault-cache.txt
for f in $SDMA_CACHE_DIR/*.bin; do printf 'garbage' | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null; done
$check --sizes=1K,1M --iters=2 "$programs/all_gather_ring-4.hip" >> $out/fault-cache.txt
cat $out/fault-stuck.txt $out/fault-cache.txt
