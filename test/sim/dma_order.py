#!/usr/bin/env python3
"""Checks that the DMA timing model picks DMA-Latte's published order of
variants as the message grows: back-to-back batches at small sizes,
broadcast (all-gather) or swap (all-to-all) copies in the middle, one copy
per peer at large sizes (8 ranks, prelaunched).

With BACKEND sdma-packets, the same is predicted from the AMD packet
programs themselves (patched, simulated for the bytes, timed by the model),
up to MAX bytes per rank (default 32M: 4 MiB per peer).

usage: dma_order.py BIN_DIR SCHEDULES_DIR [BACKEND [MAX]]
"""
import os
import re
import subprocess
import sys

bin_dir, schedules = sys.argv[1], sys.argv[2]
backend = sys.argv[3] if len(sys.argv) > 3 else "sdma-sim"
# Past the last switch (pcpy from 1 MiB per peer) three sizes show it stays
# best; larger ones only cost simulation time.
largest = sys.argv[4] if len(sys.argv) > 4 else "32M"
# The packet programs are built for MI300X (gfx942): all_to_all_swap's own
# swaps need COPY_LINEAR_SWAP, which the default target (gfx9) lacks.
packet_target = (["--sdma-target=gfx942"] if backend == "sdma-packets"
                 else [])


def predict(schedule, variant):
    out = subprocess.run(
        [os.path.join(bin_dir, "sdma-run"), os.path.join(schedules, schedule),
         "--ranks=8", f"--variant={variant}", "--prelaunch",
         f"--backend={backend}", "--iters=1", "-b", "8K", "-e", largest,
         "-f", "2"] + packet_target,
        capture_output=True, text=True, check=True).stdout
    times = {}
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cols = line.split()
        assert cols[-1] == "0", f"wrong bytes: {line}"
        times[int(cols[0])] = float(cols[3])
    return times


def order(candidates):
    series = {name: predict(*how) for name, how in candidates.items()}
    sizes = sorted(next(iter(series.values())))
    best = [min(series, key=lambda n: series[n][s]) for s in sizes]
    runs = [b for i, b in enumerate(best) if i == 0 or best[i - 1] != b]
    return sizes, best, runs


status = 0
for collective, candidates, expected in (
    ("all_gather", {"b2b": ("all_gather_direct.mlir", "b2b"),
                    "bcst": ("all_gather_direct.mlir", "bcst"),
                    "pcpy": ("all_gather_direct.mlir", "pcpy")},
     ["b2b", "bcst", "pcpy"]),
    ("all_to_all", {"b2b": ("all_to_all_direct.mlir", "b2b"),
                    "swap": ("all_to_all_swap.mlir", "pcpy"),
                    "pcpy": ("all_to_all_direct.mlir", "pcpy")},
     ["b2b", "swap", "pcpy"])):
    sizes, best, runs = order(candidates)
    ok = runs == expected
    status |= not ok
    print(f"{collective}: best by size: " +
          " ".join(f"{s // 8}:{b}" for s, b in zip(sizes, best)))
    print(f"{collective}: order {' -> '.join(runs)}: "
          f"{'matches' if ok else 'DOES NOT MATCH'} DMA-Latte")
sys.exit(status)
