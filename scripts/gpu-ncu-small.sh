#!/usr/bin/env bash
# Nsight Compute where sdma's specialised load/store kernels trail the
# hand-written copy kernel below 1 MiB (issue 16, item 2), 8 ranks on one
# GPU: the full section set (warp states, scheduler, instruction and memory
# statistics, source counters) of sdma_ldst (all_gather_direct and
# all_to_all_direct, default variant) and fusedCopy at 1 and 64 KiB per
# rank, exported as CSV (details page, and per SASS instruction with its
# stall samples); then every load/store program's default variant at 2, 4
# and 8 ranks, 1 KiB-1 MiB, without the profiler (CUDA events, median of 50).
#   scripts/gpu-ncu-small.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-ncu-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
export SDMA_CACHE_DIR=/tmp/sdma-cache
build_benches $B collective_bench || exit 1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for c in all_gather all_to_all; do
  step 240 "ncu $c 1K,64K" "$ncu" --set full --import-source yes -f \
    -o "$out/small-$c" --kernel-name regex:'sdma_ldst|fusedCopy' \
    /tmp/collective_bench "$programs" 2 --ranks=8 --ldst-only --only=$c \
    --programs=${c}_direct --variants=default --sizes=1K,64K \
    > "$out/app-$c.csv"
  step 60 "details $c" "$ncu" --import "$out/small-$c.ncu-rep" --csv \
    --page details > "$out/details-$c.csv"
  step 120 "sass $c" "$ncu" --import "$out/small-$c.ncu-rep" --csv \
    --page source --print-source sass > "$out/sass-$c.csv"
done
for r in 2 4 8; do
  step 150 "events $r ranks 1K-1M" /tmp/collective_bench "$programs" 50 \
    --ranks=$r --ldst-only --variants=default \
    --sizes=1K,4K,16K,64K,256K,1M > "$out/events-$r.csv"
done
