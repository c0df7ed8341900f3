#!/usr/bin/env python3
"""Plots bench/results/python-h200.csv (path,bytes,us_per_call): the torch
op, the torch op replayed from a CUDA graph, and the C API, per call.
usage: plot_python.py RESULTS.csv OUT.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

lines = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    lines[r["path"]].append((int(r["bytes"]), float(r["us_per_call"])))
fig, ax = plt.subplots(figsize=(6.5, 4.5))
for path, points in sorted(lines.items()):
    points.sort()
    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
            ms=3, label=path)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("bytes (all-gather output, one rank)")
ax.set_ylabel("us per call (median of 5 runs, back to back)")
ax.set_title("sdma from Python vs the C API, one H200")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
