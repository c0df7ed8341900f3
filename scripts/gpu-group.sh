#!/usr/bin/env bash
# Groups over several communicators on one GPU (issue 38): one thread makes
# every rank's call in a group (sdmaGroupStart/End: one launch for the ranks
# sharing the GPU), against ranks as threads (a launch each) and the
# in-process executor, all in this one run; then MoE dispatch and combine at
# 128 tokens made in groups. Each step under its own timeout; every log goes
# to OUT_DIR as it is written.
#   scripts/gpu-group.sh PRECOMPILED_DIR OUT_DIR [ITERS] [WHAT]
# WHAT (default "check,bench,moe"): check runs the group at 2 and 8 ranks
# (every byte checked) and, where the fused launch fails, the variants that
# tell why (one stream, no low-latency path, one launch per rank,
# compute-sanitizer), and the legacy default stream; bench the timed modes
# (bench/group_report.py reads OUT_DIR/group.txt; "profile R" runs print
# SDMA_GROUP_PROFILE's phases, up to 64 KiB; "no probe": SDMA_GROUP_PROBE=0, every call on
# its communicator's thread, to compare); moe the MoE group bench. PRECOMPILED_DIR:
# sdma-precompile's programs (--ranks=1,2,3,4,8; the MoE ones at 8 ranks).
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") out=$2 iters=${3:-200} what=${4:-check,bench,moe}
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-group-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader |
  tee "$out/device.txt"
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-comm-test || exit 1
T=$B/bin/sdma-comm-test

if [[ $what == *check* ]]; then
  log=$out/check.txt
  group_ok=1
  for R in 2 8; do
    logged "$log" 120 "group $R check" "bytes|failed|wrong" \
      $T --case=bench --group-ranks=$R --iters=3
    grep -A100 "== group $R check" "$log" | grep -q "^exit 0" || group_ok=0
  done
  # Every rank on the legacy default stream (refused once, session 61).
  logged "$log" 120 "group 2 legacy stream" "bytes|failed|wrong|handles" \
    env SDMA_BENCH_ONE_STREAM=legacy $T --case=bench --group-ranks=2 --iters=3
  if [ $group_ok = 0 ]; then
    logged "$log" 120 "group 2 one stream" "bytes|failed|wrong" \
      env SDMA_BENCH_ONE_STREAM=1 $T --case=bench --group-ranks=2 --iters=3
    logged "$log" 120 "group 2 no low-latency path" "bytes|failed|wrong" \
      env SDMA_LL_BYTES=0 $T --case=bench --group-ranks=2 --iters=3
    logged "$log" 120 "group 2 one launch per rank" "bytes|failed|wrong" \
      env SDMA_GROUP_LAUNCH=0 $T --case=bench --group-ranks=2 --iters=3
    TAIL=30 logged "$log" 200 "group 2 compute-sanitizer" \
      "ERROR|Invalid|cuLaunch|failed|=========" \
      /usr/local/cuda/bin/compute-sanitizer --tool memcheck \
      --show-backtrace device --print-limit 20 \
      $T --case=bench --group-ranks=2 --iters=1
  fi
fi

if [[ $what == *bench* ]]; then
  log=$out/group.txt
  for R in 2 8; do
    logged "$log" 200 "group $R" "^allgather,.*,1024,|^alltoall,.*,67108864," \
      $T --case=bench --group-ranks=$R --iters=$iters
    logged "$log" 200 "group $R one stream" "^allgather,.*,1024,|failed" \
      env SDMA_BENCH_ONE_STREAM=1 $T --case=bench --group-ranks=$R \
      --iters=$iters
    logged "$log" 200 "group $R no probe" "^allgather,.*,1024,|failed" \
      env SDMA_GROUP_PROBE=0 $T --case=bench --group-ranks=$R --iters=$iters
    logged "$log" 200 "threads $R" "^allgather,.*,1024,|^alltoall,.*,67108864," \
      $T --case=bench --threads-as-ranks=$R --iters=$iters
    # The phases, apart (timing them costs a little): up to 64 KiB.
    for s in "" 1; do
      TAIL=12 logged "$log" 100 "profile $R${s:+ one stream}" "group profile" \
        env SDMA_GROUP_PROFILE=1 SDMA_BENCH_ONE_STREAM=$s \
        SDMA_BENCH_MAX_BYTES=65536 $T --case=bench --group-ranks=$R \
        --iters=$iters
    done
  done
  logged "$log" 300 "in-process" "^allgather,.*,1024,|^alltoall,8,67108864," \
    $T --case=baseline --schedule="$pre" --iters=$iters
fi

if [[ $what == *moe* ]]; then
  log=$out/moe.txt
  for routing in uniform skewed; do
    for mode in threads group; do
      extra=()
      [ $mode = group ] && extra=(--group-ranks=8)
      logged "$log" 200 "moe 128 $routing $mode" "dispatch_us|failed|wrong" \
        env SDMA_HEAP_BYTES=$((6 << 30)) $T --case=moe-bench \
        --threads-as-ranks=8 --iters=100 --tokens=128 --routing=$routing \
        --layout=packed "${extra[@]}"
    done
    mkdir -p "$out/moe-$routing"
    step 300 "moe baselines $routing" python3 bench/moe_bench.py baselines \
      "$out/moe-$routing" --tokens 128 --routing $routing \
      > "$out/moe-baselines-$routing.txt" 2>&1
    tail -5 "$out/moe-baselines-$routing.txt"
  done
fi
