#!/usr/bin/env python3
"""Plots bench/results/*.csv: time and bus bandwidth against bytes per rank,
one line per variant, one column per collective.

usage: plot.py RESULTS.csv OUT.png [TITLE]
"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
title = sys.argv[3] if len(sys.argv) > 3 else ""
collectives = sorted({r["collective"] for r in rows})
fig, axes = plt.subplots(2, len(collectives), figsize=(7 * len(collectives), 9),
                         squeeze=False)
for col, collective in enumerate(collectives):
    series = defaultdict(list)
    for r in rows:
        if r["collective"] == collective:
            series[r["variant"]].append((int(r["bytes_per_rank"]),
                                         float(r["median_us"]),
                                         float(r["busbw_GBps"])))
    for variant, points in sorted(series.items()):
        points.sort()
        x = [p[0] for p in points]
        style = "--" if variant in ("memcpy-per-transfer", "fused-kernel", "nccl") else "-"
        axes[0][col].plot(x, [p[1] for p in points], style, marker="o", label=variant)
        axes[1][col].plot(x, [p[2] for p in points], style, marker="o", label=variant)
    for row, label in ((0, "median time (us), log"), (1, "bus bandwidth (GB/s)")):
        ax = axes[row][col]
        ax.set_xscale("log", base=2)
        if row == 0:
            ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel(label)
        r0 = next(r for r in rows if r["collective"] == collective)
        ranks = r0.get("ranks", "8")
        gpus = r0.get("gpus", "0")
        where = "one GPU" if "+" not in gpus else f"{gpus.count('+') + 1} GPUs"
        ax.set_title(f"{collective}, {ranks} ranks on {where}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
fig.suptitle(title)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
