#!/usr/bin/env python3
"""Reads a benchmark CSV and reports issue 6's targets per size: each sdma
load/store variant against the fused-kernel baseline (target: within 1.1x)
and per-transfer cudaMemcpyAsync against sdma's direct schedule (target: at
least 30x faster at 64 KiB and below). Prints a Markdown table.

usage: targets.py RESULTS.csv
"""
import csv
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
t = defaultdict(dict)
for r in rows:
    t[(r["collective"], int(r["bytes_per_rank"]))][r["variant"]] = float(r["median_us"])
    assert r["wrong_bytes"] == "0", f"wrong bytes in {r}"
print("| collective | bytes/rank | fused kernel us | best sdma ld/st | us | vs fused (<= 1.1x) | memcpy-per-transfer us | memcpy / sdma direct (>= 30x at <= 64 KiB) |")
print("|---|---|---|---|---|---|---|---|")
for (collective, size), v in sorted(t.items()):
    sdma = {k: x for k, x in v.items() if k.startswith("sdma-ldst")}
    best = min(sdma, key=sdma.get)
    ratio = sdma[best] / v["fused-kernel"]
    direct = sdma.get("sdma-ldst-direct", sdma[best])
    speedup = v["memcpy-per-transfer"] / direct
    met1 = "met" if ratio <= 1.1 else "missed"
    met2 = ("met" if speedup >= 30 else "missed") if size <= 65536 else "-"
    print(f"| {collective} | {size} | {v['fused-kernel']:.1f} | {best[10:]} | {sdma[best]:.1f} | {ratio:.2f}x {met1} | {v['memcpy-per-transfer']:.1f} | {speedup:.1f}x {met2} |")
