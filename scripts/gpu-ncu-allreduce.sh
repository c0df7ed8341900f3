#!/usr/bin/env bash
# Nsight Compute on sdma's all-reduce against the hand-written fused
# kernels at the sizes where it trails them (issue 17: two-shot 1.11x bf16
# at 16 MiB, 1.15-1.26x f32 at 16-64 MiB): 8 ranks on one GPU, sdma's
# one-shot and two-shot specialised kernels (--quick) and fusedOneShot /
# fusedTwoShot, per launch: duration, grid, registers, DRAM bytes read and
# written, DRAM and SM throughput, achieved occupancy, L2 hit rate.
#   scripts/gpu-ncu-allreduce.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
# (PROGRAM_DIR: scripts/make-gpu-programs.sh DIR on the compiler side.)
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-ncu-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
export SDMA_CACHE_DIR=/tmp/sdma-cache
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdmart || exit 1
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Iruntime/include \
  bench/allreduce_bench.cu $B/libsdmart.a -ldl -lpthread \
  -o /tmp/allreduce_bench || exit 1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,lts__t_sector_hit_rate.pct
for point in f32:16 f32:64 bf16:16; do
  type=${point%:*} mib=${point#*:}
  step 150 "ncu $type $mib MiB" "$ncu" --csv --log-file "$out/ncu-$type-$mib.csv" \
    --kernel-name regex:'sdma_ldst|fusedOneShot|fusedTwoShot' --metrics "$metrics" \
    /tmp/allreduce_bench "$programs" 3 --quick --types=$type --min-mib=$mib \
    --max-mib=$mib --check-max-mib=0 > "$out/app-$type-$mib.csv"
  # The same point without the profiler (CUDA events, median of 20).
  step 60 "events $type $mib MiB" /tmp/allreduce_bench "$programs" 20 --quick \
    --types=$type --min-mib=$mib --max-mib=$mib --check-max-mib=0 \
    > "$out/events-$type-$mib.csv"
done
