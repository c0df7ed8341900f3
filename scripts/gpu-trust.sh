#!/usr/bin/env bash
# The one-GPU trust run: every schedule and example x every executor x 2, 4
# and 8 ranks sharing one GPU, every byte checked against the CPU simulator
# and the collective; then the copy-engine fault paths.
#   scripts/gpu-trust.sh PROGRAM_DIR OUT_DIR
# PROGRAM_DIR comes from scripts/make-gpu-programs.sh (on the compiler side):
# NAME-R.hip (ld/st) and NAME-R.json + NAME-R.{bcst,swap,b2b}.json (DMA).
#  1. suite: ldst and ldst-staged on every program; ce, ce-batch and
#     ce-graph on every program's four DMA plans; sizes 1 KiB - 16 MiB;
#  2. a plan whose first poll asks for one notify more than ever comes:
#     refused before anything is enqueued (events), in plain and graph mode;
#  3. the value-wait path (ce-value: flags + cuStreamWaitValue64, what a
#     signaller in another process needs) on the 8-rank ring, which
#     deadlocks with 16 streams on 8 hardware queues: it must time out,
#     report and exit, not hang.
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2
mkdir -p "$out"
t0=$(date +%s)
scripts/build-runtime.sh /tmp/sdmart-trust sdma-gpu-check || exit 1
check=/tmp/sdmart-trust/bin/sdma-gpu-check
export SDMA_CACHE_DIR=/tmp/sdma-trust-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
echo "build: $(( $(date +%s) - t0 )) s" | tee "$out/stages.txt"

# Six processes share the GPU (the host-side simulation and byte checks
# dominate); correctness is the point here, not the times.
rm -rf /tmp/sdma-trust-parts; mkdir -p /tmp/sdma-trust-parts
ls "$programs"/*.hip | SDMA_CHECK=$check timeout 480 xargs -P 6 -I{} sh -c \
  '$SDMA_CHECK --executors=ldst,ldst-staged,ce,ce-batch,ce-graph \
     --sizes=1K,64K,1M,16M --iters=3 {} > /tmp/sdma-trust-parts/$(basename {}).txt 2>&1'
echo "suite: exit $? after $(( $(date +%s) - t0 )) s" | tee -a "$out/stages.txt"
for f in $(ls "$programs"/*.hip); do
  cat /tmp/sdma-trust-parts/$(basename $f).txt
done > "$out/suite.txt"
echo "suite: $(grep -c '^ok' "$out/suite.txt") ok, $(grep -c '^FAIL' "$out/suite.txt") FAIL lines, $(grep -c '^PASSED' "$out/suite.txt") of $(ls "$programs"/*.hip | wc -l) programs passed" | tee -a "$out/stages.txt"

work=/tmp/sdma-trust-stuck; mkdir -p $work
cp "$programs/all_gather_ring-2.hip" $work/stuck-ce.hip
scripts/make-stuck-plan.py "$programs/all_gather_ring-2.json" $work/stuck-ce.json
for mode in ce ce-graph ce-value; do
  start=$(date +%s)
  timeout 60 $check --sizes=1K --iters=1 --timeout-ms=500 --executors=$mode \
    $work/stuck-ce.hip >> "$out/faults.txt" 2>&1
  echo "stuck plan, $mode: exit $? after $(( $(date +%s) - start )) s" >> "$out/faults.txt"
done
cp "$programs/all_gather_ring-8.hip" $work/ring8.hip
cp "$programs/all_gather_ring-8.json" $work/ring8.json
start=$(date +%s)
timeout 60 $check --sizes=1K --iters=1 --timeout-ms=1000 \
  --executors=ce-value,ce $work/ring8.hip >> "$out/faults.txt" 2>&1
echo "ring-8, ce-value then ce: exit $? after $(( $(date +%s) - start )) s" >> "$out/faults.txt"
start=$(date +%s)
timeout 60 $check --sizes=1K,1M --iters=3 --executors=ce,ce-batch,ce-graph \
  $work/ring8.hip >> "$out/faults.txt" 2>&1
echo "ring-8, events: exit $? after $(( $(date +%s) - start )) s" >> "$out/faults.txt"
cut -c1-400 "$out/faults.txt"
echo "all: $(( $(date +%s) - t0 )) s" | tee -a "$out/stages.txt"
