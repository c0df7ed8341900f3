#!/usr/bin/env bash
# Kernel-triggered copy engines on one NVIDIA GPU (it needs no MLIR): builds
# the runtime and test/gpu/ce_trigger.cu, then runs each plan's copies
# prelaunched behind the launch flags a computing kernel writes, every byte
# checked, and a trigger one short (the run must stay waiting, named); then
# the copy-engine executors (plain, batch, graph, each also with -k: the
# device-local copies of a run as one kernel) on every variant of the same
# schedules through sdma-gpu-check, as a regression check.
#   scripts/gpu-ce-trigger.sh PROGRAM_DIR OUT_DIR
# (PROGRAM_DIR: scripts/make-gpu-programs.sh DIR on the compiler side.)
set -uo pipefail
cd "$(dirname "$0")/.."
programs=$(realpath "$1") out=$2
mkdir -p "$out"
out=$(realpath "$out")
B=/tmp/sdma-trigger-build
source scripts/gpu-step.sh
# More hardware queues than the plans have streams: a blocked value wait
# must not share a connection with the triggering kernel.
export CUDA_DEVICE_MAX_CONNECTIONS=32
# Lazy module loading synchronizes the context when a kernel is first
# launched: with queues blocked on the trigger, that would deadlock (the
# test also loads its kernel before launching the copies).
export CUDA_MODULE_LOADING=EAGER
SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
  scripts/build-runtime.sh $B sdma-gpu-check sdmart || exit 1
nvcc -O2 -arch=sm_90 -std=c++17 -Iruntime/include test/gpu/ce_trigger.cu \
  $B/libsdmart.a -ldl -lpthread -o /tmp/ce_trigger || exit 1
plans=()
for p in all_gather_direct-2 all_gather_direct-4 all_to_all_direct-4 \
  all_to_all_direct-8.b2b all_gather_ring-8.b2b all_gather_ring-4 broadcast-4 \
  all_gather_bcast-4.bcst all_to_all_direct-4.swap scatter-4 gather-4; do
  plans+=("$programs/$p.json")
done
step 120 "kernel-triggered copies" /tmp/ce_trigger "${plans[@]}" | tee "$out/ce-trigger.txt"
# (sdma-gpu-check runs NAME.json and its variants NAME.V.json for NAME.hip.)
step 420 "copy-engine executors, every variant" "$B/bin/sdma-gpu-check" \
  --sizes=1K,1M --iters=3 \
  --executors=ce,ce-batch,ce-graph,ce-k,ce-batch-k,ce-graph-k \
  "$programs"/{all_gather_direct,all_to_all_direct,all_gather_ring,broadcast,all_gather_bcast,all_to_all_swap,scatter,gather}-{2,4}.hip \
  > "$out/ce-check.txt"
tail -n 3 "$out/ce-check.txt"
grep '^FAIL' "$out/ce-check.txt" | head
