#!/usr/bin/env bash
# Times every hierarchical collective, phase by phase, on simulated nodes
# (sdma-node-job under mpirun: the CPU device within a node, MPI between
# nodes) at 2x2, 2x3 and 3x2 (nodes x local ranks), chunk sizes 1 KiB to
# 1 MiB; then fits the per-phase cost model and plots it.
#
#   bench/multinode/run.sh [BUILD_DIR]     # writes bench/multinode/results-cpu.*
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
csv=$here/results-cpu.csv
echo "schedule,nodes,local_ranks,transport,chunk_bytes,phase,kind,messages,bytes,median_us" > "$csv"
export SDMA_HEAP_BYTES=${SDMA_HEAP_BYTES:-128M} SDMA_DEVICE=cpu SDMA_CACHE_DIR=${SDMA_CACHE_DIR:-/tmp/sdma-bench-cache}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for s in all_gather all_to_all reduce_scatter all_reduce; do
  for shape in 4:2 6:3 6:2; do
    mpirun -np "${shape%:*}" "$build/bin/sdma-node-job" --local-ranks="${shape#*:}" \
      --sizes=1K,4K,16K,64K,256K,1M --runs=1 --bench=30 --csv="$csv" \
      "$here/../../schedules/hier/$s.mlir" | grep '^#bench' || { echo "FAILED: $s $shape"; exit 1; }
  done
done
"${PYTHON:-python3}" "$here/fit.py" "$csv" > "$here/results-cpu.md"
"${PYTHON:-python3}" "$here/plot.py" "$csv" "$here/results-cpu.png"
cat "$here/results-cpu.md"
