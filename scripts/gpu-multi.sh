#!/usr/bin/env bash
# The GPU suite with ranks spread over several GPUs (contiguous groups, peer
# access), then a short single-GPU pass to check nothing else changed.
#   scripts/gpu-multi.sh PROGRAM_DIR OUT_DIR DEVICES(e.g. 0,1)
set -euo pipefail
cd "$(dirname "$0")/.."
programs=$1 out=$2 devices=$3
json_include=()
[ -d .carry/include/nlohmann ] && json_include=(-DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.carry/include")
cmake -S runtime -B /tmp/sdmart-build -G Ninja -DCMAKE_BUILD_TYPE=Release "${json_include[@]}" > /tmp/sdmart-cmake.log
cmake --build /tmp/sdmart-build --target sdma-gpu-check > /tmp/sdmart-build.log
export SDMA_CACHE_DIR=/tmp/sdma-cache
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
nvidia-smi topo -m >> "$out/gpus.txt" 2>&1 || true
/tmp/sdmart-build/bin/sdma-gpu-check --devices="$devices" --sizes=1K,1M,16M --iters=5 \
  "$programs"/*.hip > "$out/gpu-suite-multi.txt" || true
/tmp/sdmart-build/bin/sdma-gpu-check --sizes=1K,1M --iters=5 \
  "$programs"/all_gather_ring-8.hip "$programs"/all_to_all_swap-8.hip \
  "$programs"/tree_broadcast-4.hip > "$out/gpu-suite-single.txt" || true
grep -v '^ok\|^kernel' "$out/gpu-suite-multi.txt" | tail -15
grep -c '^ok' "$out/gpu-suite-multi.txt"
tail -3 "$out/gpu-suite-single.txt"
