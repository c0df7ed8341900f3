#!/usr/bin/env python3
"""Plots bench/multinode's CSV: per collective, each phase kind's time (node,
network) and the total against the chunk size, one line style per shape.

usage: plot.py RESULTS.csv OUT.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
collectives = sorted({r["schedule"] for r in rows})
fig, axes = plt.subplots(1, len(collectives), figsize=(4.2 * len(collectives), 3.8),
                         sharey=True)
styles = {"node": "-", "network": "--", "total": ":"}
for ax, s in zip(axes, collectives):
    lines = defaultdict(lambda: defaultdict(float))
    for r in rows:
        if r["schedule"] != s:
            continue
        shape = f"{r['nodes']}x{r['local_ranks']}"
        lines[(shape, r["kind"])][int(r["chunk_bytes"])] += float(r["median_us"])
    colors = {}
    for (shape, kind), points in sorted(lines.items()):
        color = colors.setdefault(shape, f"C{len(colors)}")
        xs = sorted(points)
        ax.plot(xs, [points[x] for x in xs], styles[kind], color=color,
                label=f"{shape} {kind}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title(s)
    ax.set_xlabel("chunk bytes")
    ax.grid(True, alpha=0.3)
axes[0].set_ylabel("median us (slowest rank)")
axes[-1].legend(fontsize=7)
fig.suptitle("Hierarchical collectives per phase, simulated nodes (CPU device, MPI)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
