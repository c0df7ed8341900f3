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
variants = sorted({r["variant"] for r in rows})


def style(variant):
    """One colour per variant, the line style by family: baselines dashed,
    sdma load/store solid, sdma copy engines dash-dotted."""
    if not variant.startswith("sdma-"):
        return "--"
    return "-" if variant.startswith("sdma-ldst") else "-."


palette = plt.get_cmap("tab20").colors
color = {v: palette[i % len(palette)] for i, v in enumerate(variants)}
fig, axes = plt.subplots(2, len(collectives), figsize=(7 * len(collectives) + 3, 9),
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
        for row, k in ((0, 1), (1, 2)):
            axes[row][col].plot(x, [p[k] for p in points], style(variant),
                                color=color[variant], marker="o", markersize=3,
                                label=variant)
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
# One legend for all panels, outside them.
handles = {}
for ax in axes.flat:
    for h, l in zip(*ax.get_legend_handles_labels()):
        handles.setdefault(l, h)
fig.legend([handles[v] for v in variants if v in handles],
           [v for v in variants if v in handles], loc="center right",
           fontsize=9, frameon=False)
fig.suptitle(title)
fig.tight_layout(rect=(0, 0, 1 - 2.6 / (7 * len(collectives) + 3), 1))
fig.savefig(sys.argv[2], dpi=110)
