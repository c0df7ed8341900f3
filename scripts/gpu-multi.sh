#!/usr/bin/env bash
# On a host with several GPUs: the GPU suite with the ranks spread over the
# GPUs (one per rank at 2 ranks on 2 GPUs; contiguous groups beyond), for
# the load/store executor and the three copy-engine modes, every byte
# checked; then the benchmark over the GPUs against NCCL.
#   scripts/gpu-multi.sh PROGRAM_DIR OUT_DIR DEVICES(e.g. 0,1) [RUNS] [MAX_MIB]
# SUITE_EXECUTORS (default ldst,ldst-staged,ce,ce-batch,ce-graph) narrows the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2 devices=$3 runs=${4:-50} max=${5:-256}
n=$(echo "$devices" | tr ',' '\n' | wc -l)
scripts/build-runtime.sh /tmp/sdmart-build sdma-gpu-check sdmart
export SDMA_CACHE_DIR=/tmp/sdma-cache NCCL_NVLS_ENABLE=0
stage() { echo "$(date -u +%T) $*" >> "$out/stages.txt"; }
stage built
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
nvidia-smi topo -m >> "$out/gpus.txt" 2>&1 || true
/tmp/sdmart-build/bin/sdma-gpu-check --devices="$devices" --sizes=1K,64K,1M,16M \
  --iters=5 --executors="${SUITE_EXECUTORS:-ldst,ldst-staged,ce,ce-batch,ce-graph}" "$programs"/*.hip \
  > "$out/gpu-suite-multi.txt" || true
stage suite done
grep -v '^ok\|^kernel' "$out/gpu-suite-multi.txt" | tail -15
grep -c '^ok' "$out/gpu-suite-multi.txt" || true
nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime/include bench/collective_bench.cu \
  /tmp/sdmart-build/libsdmart.a -ldl -lpthread -o /tmp/collective_bench
stamp=$(date -u +%Y-%m-%d)
csv="$out/collectives-h200x$n.csv"
/tmp/collective_bench "$programs" "$runs" --ranks="$n" --devices="$devices" \
  --max-mib="$max" > "$csv"
stage bench done
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_DEBUG_FILE=/tmp/nccl.%p.log \
  python3 bench/nccl_bench.py "$n" "$runs" "$max" | tee -a "$csv" | tail -3
stage nccl done
# How NCCL ran (channels = thread blocks, i.e. SMs, per collective).
cat /tmp/nccl.*.log | grep -i "channel\|NVLS\|P2P\|version" | sort -u | head -40 > "$out/nccl-channels.txt" || true
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "$n x $gpu; CUDA $(nvcc --version | grep -o 'release [0-9.]*'); torch $(python3 -c 'import torch; print(torch.__version__, "nccl", torch.cuda.nccl.version())'); $stamp; median of $runs runs" > "$out/collectives-h200x$n.txt"
python3 bench/plot.py "$csv" "$out/collectives-h200x$n.png" "$n x H200 (NVLink), $stamp, median of $runs" || true
