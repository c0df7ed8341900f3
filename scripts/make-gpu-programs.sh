#!/usr/bin/env bash
# Compiles every schedule and example for 2, 4 and 8 ranks into load/store
# programs (NAME-R.hip, specialised kernels; NAME-R.table.hip, the table
# kernel of the same schedule), DMA plans (but for reductions) (NAME-R.json: pcpy; NAME-R.V.json: the
# bcst, swap and b2b variants) for the GPU suite, and
# the back-to-back DMA plans (NAME-R-b2b.json) the benchmark runs.
#   scripts/make-gpu-programs.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
mkdir -p "$out"
# (Schedules with run-time counts, sdma.copyv, have no DMA plan: the
# communicator runs them; sdma-precompile writes their programs.)
# Schedules that reduce (sdma.reduce) have no DMA plan either: their
# load/store programs alone (NAME-R.hip, no NAME-R.json).
for f in $(grep -l sdma.reduce schedules/*.mlir); do
  n=$(basename "$f" .mlir)
  for r in 2 4 8; do
    build/bin/sdma-opt "$f" --sdma-unroll=ranks=$r --sdma-verify=report=0 |
      build/bin/sdma-translate --sdma-to-hip -o "$out/$n-$r.hip"
    build/bin/sdma-opt "$f" --sdma-unroll=ranks=$r |
      build/bin/sdma-translate --sdma-to-hip --sdma-hip-table-kernel \
        -o "$out/$n-$r.table.hip"
  done
done
for f in $(grep -L 'sdma.copyv\|sdma.reduce' schedules/*.mlir) \
    examples/tree_broadcast.mlir; do
  n=$(basename "$f" .mlir)
  for r in 2 4 8; do
    build/bin/sdma-run "$f" --ranks=$r -b 1K -e 1K --iters=1 --backend=sim \
      --emit-hip="$out/$n-$r.hip" --emit-plan="$out/$n-$r.json" > /dev/null
    build/bin/sdma-opt "$f" --sdma-unroll=ranks=$r |
      build/bin/sdma-translate --sdma-to-hip --sdma-hip-table-kernel \
        -o "$out/$n-$r.table.hip"
    # The other DMA variants (sdma-gpu-check runs NAME.VARIANT.json too).
    for v in bcst swap b2b; do
      build/bin/sdma-run "$f" --ranks=$r --variant=$v -b 1K -e 1K --iters=1 \
        --backend=sim --emit-plan="$out/$n-$r.$v.json" > /dev/null
    done
  done
done
# Schedules ordered only by their engines (fixed at 2 ranks): the ld/st
# kernel's engine phases, within a phase and across a wait.
for f in test/Target/HIP/engine-order.mlir test/Target/HIP/engine-order-wait.mlir; do
  n=$(basename "$f" .mlir)
  build/bin/sdma-run "$f" -b 1K -e 1K --iters=1 --backend=sim \
    --emit-hip="$out/$n-2.hip" --emit-plan="$out/$n-2.json" > /dev/null
  for v in bcst swap b2b; do
    build/bin/sdma-run "$f" --variant=$v -b 1K -e 1K --iters=1 \
      --backend=sim --emit-plan="$out/$n-2.$v.json" > /dev/null
  done
done
for n in all_gather_direct all_to_all_direct; do
  for r in 2 4 8; do
    build/bin/sdma-run "schedules/$n.mlir" --ranks=$r --variant=b2b -b 1K \
      -e 1K --iters=1 --backend=sim --emit-plan="$out/$n-$r-b2b.json" \
      > /dev/null
  done
done
