#!/usr/bin/env bash
# The communicator's DMA path (runtime/lib/cuda/CudaDmaKernel.h: copy-engine
# copies, stream-memory notifies, a one-thread sync kernel for every wait)
# on one NVIDIA GPU, processes sharing it (same-GPU copies run on SMs: one
# GPU checks the protocol and every byte, not what copy engines free):
#   every collective, every root, in place and not, two rounds and a user
#   schedule, each call required to report the DMA path, at 2, 4 and 8
#   processes; DMA-Latte's b2b and swap variants at 4; both paths on one
#   program (SDMA_DMA_MIN_BYTES); AllGather captured in a CUDA graph on the
#   DMA path; a rank that leaves (bounded, named); the auto choice logged.
# Every step runs under its own timeout and prints its exit status.
#
#   scripts/gpu-dma.sh PRECOMPILED_DIR [checks,bench]
# PRECOMPILED_DIR: build/bin/sdma-precompile --ranks=1,2,3,4,5,6,7,8
# --dma-variants=pcpy,b2b,swap DIR on the compiler side (programs, and the
# plans NAME-R.VARIANT.plan.json beside them).
set -uo pipefail
cd "$(dirname "$0")/.."
pre=$(realpath "$1") what=${2:-checks,bench}
B=/tmp/sdma-dma-build
export SDMA_PROGRAM_DIR=$pre SDMA_CACHE_DIR=/tmp/sdma-cache SDMA_PATH_LOG=1
export CUDA_DEVICE_MAX_CONNECTIONS=32
source scripts/gpu-step.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF -DPython3_EXECUTABLE=$(command -v python3)" \
  scripts/build-runtime.sh $B sdma-comm-test sdma-launch sdmart _sdma || exit 1
launch="$B/bin/sdma-launch --timeout-s=200 --nproc-per-node"
test_bin=$B/bin/sdma-comm-test
dma="env SDMA_PATH=dma SDMA_EXPECT_PATH=dma"

if [[ $what == *checks* ]]; then
# The load/store kernel changed (its call tag): it again, first.
for n in 2 4; do
  step 300 "load/store: every collective, $n processes" \
    env SDMA_PATH=ldst SDMA_EXPECT_PATH=ldst $launch=$n "$test_bin" \
    --counts=1,1000,300000 --schedule=schedules/all_gather_ring.mlir
done
step 200 "load/store in a CUDA graph, 2 processes" $launch=2 "$test_bin" \
  --case=graph
for p in ldst dma; do
  step 120 "ranks making different calls ($p), 3 processes" \
    env SDMA_PATH=$p SDMA_LL_BYTES=0 $launch=3 "$test_bin" --case=other-buffer
done
for n in 2 4 8; do
  step 300 "DMA path: every collective, $n processes" $dma $launch=$n \
    "$test_bin" --counts=1,1000,300000 --schedule=schedules/all_gather_ring.mlir
done
for v in b2b swap; do
  step 200 "DMA path, variant $v, 4 processes" \
    env SDMA_PATH=dma SDMA_DMA_VARIANT=$v SDMA_EXPECT_PATH="dma $v" \
    $launch=4 "$test_bin" --counts=1,1000
done
step 200 "both paths on one program, 4 processes" \
  env SDMA_PATH=dma SDMA_DMA_MIN_BYTES=4000 $launch=4 "$test_bin" --counts=1,1000
step 200 "DMA path in a CUDA graph, 2 processes" $dma $launch=2 "$test_bin" \
  --case=graph
step 120 "DMA path: a rank leaves, 3 processes" \
  env SDMA_PATH=dma SDMA_CHECK_CALLS=0 SDMA_TIMEOUT_MS=3000 $launch=3 \
  "$test_bin" --case=exit-early
step 200 "auto (logged), 4 processes" $launch=4 "$test_bin" --counts=1,1000
fi
[[ $what == *bench* ]] || exit 0

# The overlap benchmark's harness (bench/overlap.py) on the shared GPU, small:
# it validates the harness; one GPU cannot show what copy engines free.
mkdir -p bench/results/gpu-runs
# (NCCL refuses two ranks on one GPU: its row is one process.)
for impl in sdma-ldst:2 sdma-dma:2 nccl:1; do
  n=${impl#*:} impl=${impl%:*}
  step 400 "overlap harness, $impl, $n processes" \
    env SDMA_PYTHON=$B/python torchrun --nproc-per-node=$n bench/overlap.py \
    --impl=$impl --gemm=moe,decode --collective=all_gather,all_to_all \
    --sizes=64K,8M --iters=50 --csv=/tmp/overlap-$impl.csv
  cat /tmp/overlap-$impl.csv
done

# Per-call latency, load/store against DMA, same run (2 processes sharing
# the GPU: DMA's same-GPU copies are SM copies here; what copy engines cost
# and free needs several GPUs). CSV on rank 0.
for p in ldst dma; do
  step 300 "per-call latency, path $p, 2 processes" env SDMA_PATH=$p \
    $launch=2 "$test_bin" --case=bench --iters=50
done
