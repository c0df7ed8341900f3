#!/usr/bin/env python3
"""Issue 7's targets from a multi-GPU benchmark CSV: below 1 MiB per rank,
sdma's best latency at least 1.3x lower than NCCL's (both NCCL variants:
called each run, and replayed from a CUDA graph); above 32 MiB, the
copy-engine executor's bus bandwidth at least NCCL's, with its cross-GPU
copies needing no SM (sm_free_us far below the 200 ms SM blocker).
Prints a Markdown table.

usage: targets_multi.py RESULTS.csv
"""
import csv
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
t = defaultdict(dict)
for r in rows:
    assert r["wrong_bytes"] == "0", f"wrong bytes in {r}"
    t[(r["collective"], int(r["bytes_per_rank"]))][r["variant"]] = r
print("| collective | bytes/rank | nccl us | nccl-graph us | best sdma | us | vs nccl | vs nccl-graph | target | best sdma-ce | ce busbw GB/s | nccl busbw (best) | ce cross-GPU copies with all SMs held, us | target |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (collective, size), v in sorted(t.items()):
    us = lambda k: float(v[k]["median_us"])
    bw = lambda k: float(v[k]["busbw_GBps"])
    sdma = [k for k in v if k.startswith("sdma-")]
    best = min(sdma, key=us)
    ce = max((k for k in v if k.startswith("sdma-ce")), key=bw)
    n, g = us("nccl"), us("nccl-graph")
    lat = "-"
    if size < (1 << 20):
        lat = "met" if min(n, g) / us(best) >= 1.3 else ("met vs eager only" if n / us(best) >= 1.3 else "missed")
    bwt = "-"
    nccl_bw = max(bw("nccl"), bw("nccl-graph"))
    sm_free = float(v[ce]["sm_free_us"])
    if size > (32 << 20):
        bwt = "met" if bw(ce) >= nccl_bw and 0 <= sm_free < 100000 else "missed"
    print(f"| {collective} | {size} | {n:.1f} | {g:.1f} | {best[5:]} | {us(best):.1f} | {n / us(best):.2f}x | {g / us(best):.2f}x | {lat} | {ce[8:]} | {bw(ce):.0f} | {nccl_bw:.0f} | {sm_free:.1f} | {bwt} |")
