#!/usr/bin/env bash
# Issue 16, item 2: the load/store programs against the hand-written fused
# kernel, interleaved (collective_bench --interleave: each round times the
# fused kernel and every variant once, the order rotated round by round;
# paired_vs_fused = median over rounds of variant / fused in the same
# round), all-gather (direct, bcast) and all-to-all (direct) at 2, 4 and 8
# ranks sharing one GPU, 1 KiB-64 MiB per rank.
#   scripts/gpu-interleave.sh PROGRAM_DIR OUT_DIR [BUILD_DIR]
# PROGRAM_DIR from scripts/make-gpu-programs.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2 B=${3:-/tmp/sdma-interleave-build}
mkdir -p "$out"
out=$(realpath "$out")
source scripts/gpu-step.sh
export SDMA_CACHE_DIR=/tmp/sdma-cache
build_benches $B collective_bench || exit 1
bench=/tmp/collective_bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm \
  --format=csv,noheader > "$out/gpu.txt"
run() { # RANKS RUNS SIZES SUFFIX
  step 240 "interleave $1 $4" $bench "$programs" $2 --ranks=$1 --ldst-only \
    --interleave --programs=all_gather_direct,all_gather_bcast,all_to_all_direct \
    --variants=default,u2,r2,untiled --sizes=$3 > "$out/interleave-$1-$4.csv"
}
for r in 2 4 8; do
  run $r 100 1K,4K,16K,64K,256K,1M,2M,4M small
  run $r 30 16M,64M large
done
