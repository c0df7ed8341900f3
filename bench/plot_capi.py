#!/usr/bin/env python3
"""Plots the C API's per-call latency against the in-process executor
(bench/results/capi-h200.csv: mode,op,ranks,bytes,us_per_call), one panel
per collective, one line per (mode, ranks).
usage: plot_capi.py RESULTS.csv OUT.png [DEVICE]
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
device = sys.argv[3] if len(sys.argv) > 3 else "one H200"
ops = sorted({r["op"] for r in rows})
fig, axes = plt.subplots(1, len(ops), figsize=(6 * len(ops), 4.5), squeeze=False)
for ax, op in zip(axes[0], ops):
    lines = defaultdict(list)
    for r in rows:
        if r["op"] == op:
            lines[(r["mode"], int(r["ranks"]))].append(
                (int(r["bytes"]), float(r["us_per_call"])))
    for (mode, ranks), points in sorted(lines.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points],
                "--" if mode == "in-process" else "-", marker="o", ms=3,
                label=f"{mode} R={ranks}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per rank (output)")
    ax.set_ylabel("us per call (median of 5 x 50 back-to-back calls)")
    ax.set_title(f"{op}, {device}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
