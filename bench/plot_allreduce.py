#!/usr/bin/env python3
"""Plots bench/results/allreduce-h200.csv (bench/allreduce_bench.cu): time
against bytes per rank for f32 and bf16, one line per variant, and the
ratio of sdma's best program to the best hand-written fused kernel; writes
the same ratio as a Markdown table.

usage: plot_allreduce.py RESULTS.csv OUT.png OUT.md [TITLE]
"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
title = sys.argv[4] if len(sys.argv) > 4 else ""
types = [t for t in ("f32", "bf16") if any(r["type"] == t for r in rows)]
times = defaultdict(dict)  # (type, bytes) -> variant -> us
for r in rows:
    times[(r["type"], int(r["bytes_per_rank"]))][r["variant"]] = \
        float(r["median_us"])


def best(entry, prefix):
    return min((us, v) for v, us in entry.items() if v.startswith(prefix))


fig, axes = plt.subplots(2, len(types), figsize=(7 * len(types), 9),
                         squeeze=False)
table = ["| type | bytes per rank | best fused kernel (us) | best sdma (us) "
         "| ratio |", "|---|---:|---|---|---:|"]
for col, t in enumerate(types):
    sizes = sorted(s for (ty, s) in times if ty == t)
    variants = sorted({v for (ty, s) in times if ty == t
                       for v in times[(ty, s)]})
    for v in variants:
        pts = [(s, times[(t, s)][v]) for s in sizes if v in times[(t, s)]]
        axes[0][col].plot([p[0] for p in pts], [p[1] for p in pts],
                          "-" if v.startswith("sdma") else "--", marker="o",
                          markersize=3, label=v)
    ratios = []
    for s in sizes:
        fused, fv = best(times[(t, s)], "fused")
        sdma, sv = best(times[(t, s)], "sdma")
        ratios.append(sdma / fused)
        table.append("| %s | %d | %.1f (%s) | %.1f (%s) | %.2f |"
                     % (t, s, fused, fv, sdma, sv, sdma / fused))
    axes[1][col].plot(sizes, ratios, marker="o")
    axes[1][col].axhline(1.1, color="red", linestyle=":", label="target 1.1x")
    axes[0][col].set_title("all-reduce %s, %s ranks" % (t, rows[0]["ranks"]))
    axes[1][col].set_title("best sdma / best fused kernel")
    for row in (0, 1):
        axes[row][col].set_xscale("log", base=2)
        axes[row][col].set_xlabel("bytes per rank")
        axes[row][col].grid(True, which="both", alpha=0.3)
        axes[row][col].legend(fontsize=8)
    axes[0][col].set_yscale("log")
    axes[0][col].set_ylabel("median us")
    axes[1][col].set_ylabel("ratio")
if title:
    fig.suptitle(title)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
open(sys.argv[3], "w").write("\n".join(table) + "\n")
