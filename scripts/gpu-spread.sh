#!/usr/bin/env bash
# The op-spread segments on one NVIDIA GPU (issue 16, item 2;
# bench/results/spread-h200.md), ranks sharing the GPU:
#  1. grid: the direct programs on grids of 1, 2 and 4 units per thread;
#  2. variants: all-to-all 1-4 MiB with 1/2/4 units in flight (r2, r4),
#     untiled, 4 blocks per SM;
#  3. ncu: kernel durations and instructions of the default program, the
#     previous compiler's (NAME-R.prev.hip beside it, when there) and the
#     fused kernel; full sections at all-to-all 4 ranks 1 MiB;
#  4. bench: all-gather and all-to-all at 2, 4 and 8 ranks against the
#     fused kernel and -prev.
#   scripts/gpu-spread.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
# PROGRAM_DIR from scripts/make-gpu-programs.sh (copy the previous
# compiler's NAME-R.hip there as NAME-R.prev.hip for the A/B).
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-spread-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
export SDMA_CACHE_DIR=/tmp/sdma-cache
build_benches $B collective_bench || exit 1
bench=/tmp/collective_bench
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
for r in 2 4; do
  step 90 "grid $r" $bench "$programs" 50 --ranks=$r --ldst-only \
    --programs=all_gather_direct,all_to_all_direct --variants=default,u2,u4 \
    --sizes=256K,1M,2M,4M,16M > "$out/grid-$r.csv"
  step 90 "variants $r" $bench "$programs" 50 --ranks=$r --ldst-only \
    --only=all_to_all --programs=all_to_all_direct \
    --variants=default,u4,r2,r4,untiled,4bpsm --sizes=1M,2M,4M > "$out/var-$r.csv"
done
M="gpu__time_duration.sum,smsp__inst_executed.sum,launch__grid_size,launch__registers_per_thread"
ncu_points() { # NAME RANKS COLLECTIVE PROGRAM SIZES
  step 100 "ncu $1" "$ncu" --metrics $M --csv --kernel-name regex:'sdma_ldst|fusedCopy' \
    $bench "$programs" 5 --ranks=$2 --ldst-only --only=$3 --programs=$4 \
    --variants=default,prev --sizes=$5 > "$out/ncu-$1.csv" 2>&1
}
ncu_points a2a-4 4 all_to_all all_to_all_direct 1M,2M
ncu_points a2a-8 8 all_to_all all_to_all_direct 16K,64K,1M
ncu_points ag-8 8 all_gather all_gather_direct 4K,64K,1M
step 200 "ncu full a2a 4 1M" "$ncu" --set full -f -o "$out/a2a-4-1m" \
  --kernel-name regex:'sdma_ldst|fusedCopy' $bench "$programs" 2 --ranks=4 \
  --ldst-only --only=all_to_all --programs=all_to_all_direct \
  --variants=default,u4 --sizes=1M > /dev/null
step 60 "details" "$ncu" --import "$out/a2a-4-1m.ncu-rep" --csv --page details \
  > "$out/details-a2a-4-1m.csv"
for r in 2 4 8; do
  step 130 "bench $r" $bench "$programs" $([ $r = 8 ] && echo 30 || echo 50) \
    --ranks=$r --ldst-only --variants=default,prev \
    --programs=all_gather_direct,all_gather_bcast,all_to_all_direct \
    --sizes=1K,4K,16K,64K,256K,1M,2M,4M,16M > "$out/bench-$r.csv"
done
