#!/usr/bin/env bash
# Nsight Compute where sdma's load/store kernels trail the hand-written
# ones at large sizes, 8 ranks on one GPU, per launch: duration, grid,
# registers, DRAM bytes read and written, DRAM and SM throughput, achieved
# occupancy, L2 hit rate; then the same points without the profiler
# (CUDA events).
#   all-gather 4 and 16 MiB (issue 16: direct 1.42-1.46x the fused copy
#     kernel): sdma_ldst (direct program, default grid) and fusedCopy;
#   all-reduce f32 16/64 MiB and bf16 16 MiB (issue 17: two-shot 1.11-1.26x):
#     sdma's one-shot and two-shot kernels (--quick: default and -2bpsm)
#     and fusedOneShot / fusedTwoShot, with the warp stall reasons and the
#     occupancy limits (WarpStateStats, Occupancy sections).
#   scripts/gpu-ncu-gaps.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
# (WHAT: ag, ar or both, default both.)
# (PROGRAM_DIR: scripts/make-gpu-programs.sh DIR on the compiler side.)
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-ncu-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
export SDMA_CACHE_DIR=/tmp/sdma-cache
build_benches $B collective_bench allreduce_bench || exit 1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,lts__t_sector_hit_rate.pct
what=${WHAT:-ag,ar}
[[ $what == *ag* ]] && for mib in 4 16; do
  step 120 "ncu all-gather $mib MiB" "$ncu" --csv --log-file "$out/ncu-ag-$mib.csv" \
    --kernel-name regex:'sdma_ldst|fusedCopy' --metrics "$metrics" \
    /tmp/collective_bench "$programs" 2 --ranks=8 --ldst-only --only=all_gather \
    --programs=all_gather_direct --min-mib=$mib --max-mib=$mib \
    > "$out/app-ag-$mib.csv"
done
[[ $what == *ag* ]] && step 60 "events all-gather 4-16 MiB" /tmp/collective_bench "$programs" 20 \
  --ranks=8 --ldst-only --only=all_gather --programs=all_gather_direct \
  --min-mib=4 --max-mib=16 > "$out/events-ag.csv"
[[ $what == *ar* ]] && for point in f32:16 f32:64 bf16:16; do
  type=${point%:*} mib=${point#*:}
  step 120 "ncu all-reduce $type $mib MiB" "$ncu" --csv \
    --log-file "$out/ncu-ar-$type-$mib.csv" \
    --kernel-name regex:'sdma_ldst|fusedOneShot|fusedTwoShot' --metrics "$metrics" \
    --section WarpStateStats --section Occupancy \
    /tmp/allreduce_bench "$programs" 2 --quick --types=$type --min-mib=$mib \
    --max-mib=$mib --check-max-mib=0 > "$out/app-ar-$type-$mib.csv"
  step 60 "events all-reduce $type $mib MiB" /tmp/allreduce_bench "$programs" 20 \
    --quick --types=$type --min-mib=$mib --max-mib=$mib --check-max-mib=0 \
    > "$out/events-ar-$type-$mib.csv"
done
