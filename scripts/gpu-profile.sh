#!/usr/bin/env bash
# Nsight Compute on one GPU: the generated load/store kernels and the
# hand-written fused copy kernel of the benchmark, 1 KiB to 1 MiB per rank
# at 8 ranks, kernel duration, grid, registers and SM activity per launch.
# With the benchmark's CUDA-event medians of the same run, the gap between
# them splits into time in the kernel and time around it; then stall
# reasons per source line of the generated kernel.
#   scripts/gpu-profile.sh PROGRAM_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2
scripts/build-runtime.sh /tmp/sdmart-build sdmart
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Iruntime/include bench/collective_bench.cu \
  /tmp/sdmart-build/libsdmart.a -ldl -lpthread -o /tmp/collective_bench
export SDMA_CACHE_DIR=/tmp/sdma-cache
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --csv --log-file "$out/ncu-small.csv" --kernel-name regex:'sdma_ldst|fusedCopy' \
  --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum,lts__t_bytes.sum \
  /tmp/collective_bench "$programs" 3 --max-mib=1 > "$out/ncu-app.csv" 2>&1
# The same sizes timed without the profiler (CUDA events, median of 50).
/tmp/collective_bench "$programs" 50 --max-mib=1 > "$out/events-small.csv"
# Where the generated kernel's time goes, line by line: warp stall reasons
# per source line of three small launches (1 KiB all-gather, the first
# sizes the bench runs), as a report file and as CSV.
"$ncu" --set full --import-source yes --kernel-name sdma_ldst --launch-count 3 \
  -o "$out/ncu-ldst-source" /tmp/collective_bench "$programs" 1 --max-mib=1 > /dev/null 2>&1 || true
[ -f "$out/ncu-ldst-source.ncu-rep" ] &&
  "$ncu" --import "$out/ncu-ldst-source.ncu-rep" --page source --csv \
    --print-source sass > "$out/ncu-ldst-source.csv" 2>&1 || true
