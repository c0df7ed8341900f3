#!/usr/bin/env python3
"""Plots bench/moe_bench.py's expert-major report (PREFIX-expert.csv, where
the GPU machine has no matplotlib): per token count and routing, the
dispatch and the combine of sdma's expert-major pair against the fused
Triton permutation kernel and sdma's rank-level op followed by the
permutation, medians of the slowest rank.

usage: plot_moe_expert.py CSV PNG TITLE
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
rows.sort(key=lambda r: (int(r["tokens"]), r["routing"]))
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, phase in zip(axes, ("dispatch", "combine")):
    x = range(len(rows))
    for i, (name, key) in enumerate((
            ("sdma expert-major (all_to_all_vdev_2d%s)"
             % ("" if phase == "dispatch" else "_offset"),
             "sdma_expert_%s_us"),
            ("fused permutation kernel (Triton), same layout", "%s_fused_us"),
            ("sdma rank-level + permutation", "rank_plus_permute_%s_us"))):
        ax.bar([v + 0.27 * (i - 1) for v in x],
               [float(r[key % phase]) for r in rows], width=0.27, label=name)
    ax.set_xticks(list(x))
    ax.set_xticklabels(["%s %s" % (r["tokens"], r["routing"]) for r in rows])
    ax.set_yscale("log")
    ax.set_ylabel("microseconds per call (median, slowest rank)")
    ax.set_title("MoE " + phase, fontsize=9)
    ax.legend(fontsize=7)
fig.suptitle(sys.argv[3], fontsize=9)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
