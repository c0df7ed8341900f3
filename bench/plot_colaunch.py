#!/usr/bin/env python3
"""Ranks as threads on one GPU: each rank's kernel alone against one launch
per call (CoLaunch), from scripts' console output (lines "-- tN colaunch=C
graphs=G rep R" then one line of op,ranks,bytes,us,host_us rows; "-- in-process
executor" then its rows). Writes CSV, a markdown table and a plot.

  bench/plot_colaunch.py CONSOLE.txt OUT_PREFIX [DEVICE]

DEVICE names the GPU in the table and plot (default "one H100").
"""
import csv
import re
import sys
from collections import defaultdict
from statistics import median


def parse(path):
    rows, mode = [], None
    for line in open(path):
        line = line.strip()
        m = re.match(r"-- t(\d+) colaunch=(\d)(?: marks=(\d))?"
                     r"(?: graphs=(\d))?(?: mode=(\w+))?", line)
        if m:
            if m.group(2) == "1" and m.group(5) == "ordered":
                mode = "ordered"
                continue
            mode = ("co-launch" if m.group(2) == "1" else "alone") + (
                " + own marks" if m.group(3) == "1" else "") + (
                " + graphs" if m.group(4) == "1" else "")
            continue
        if line.startswith("-- in-process"):
            mode = "in-process executor"
            continue
        if line.startswith("--") or line.startswith("=="):
            mode = None
            continue
        if mode is None:
            continue
        for tok in line.split():
            f = tok.split(",")
            if len(f) == 5 and f[0] in ("allgather", "alltoall", "allreduce"):
                rows.append({"mode": mode, "op": f[0], "ranks": int(f[1]),
                             "bytes": int(f[2]), "us": float(f[3]),
                             "host_us": float(f[4])})
    return rows


def main():
    rows = parse(sys.argv[1])
    out = sys.argv[2]
    device = sys.argv[3] if len(sys.argv) > 3 else "one H100"
    with open(out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["mode", "op", "ranks", "bytes", "us",
                                          "host_us"])
        w.writeheader()
        w.writerows(rows)
    # Median over repetitions per (mode, op, ranks, bytes).
    cell = defaultdict(list)
    for r in rows:
        cell[(r["mode"], r["op"], r["ranks"], r["bytes"])].append(r["us"])
    found = {r["mode"] for r in rows}
    modes = [m for m in ["alone", "ordered", "co-launch",
                         "co-launch + own marks", "co-launch + graphs",
                         "co-launch + own marks + graphs",
                         "in-process executor"] if m in found]
    with open(out + ".md", "w") as f:
        f.write("us per call: the median of 5 repetitions of 200 calls back "
                "to back (" + device + ", one run; ranks as threads, each its own "
                "stream; \"alone\": each rank's kernel launched alone, which "
                "times out in some runs)\n\n| op | ranks | bytes | " +
                " | ".join(modes) + " |\n|" + "---|" * (3 + len(modes)) + "\n")
        keys = sorted({(k[1], k[2], k[3]) for k in cell
                       if k[0] != "in-process executor"})
        for op, ranks, size in keys:
            vals = []
            for m in modes:
                v = cell.get((m, op, ranks, size))
                vals.append("%.2f" % median(v) if v else "")
            f.write("| %s | %d | %d | %s |\n" % (op, ranks, size,
                                                  " | ".join(vals)))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: CSV and table only")
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, ranks in zip(axes, (2, 8)):
        for m in modes:
            pts = sorted((k[3], median(v)) for k, v in cell.items()
                         if k[0] == m and k[1] == "allgather" and k[2] == ranks)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=m)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes")
        ax.set_ylabel("us per all-gather")
        ax.set_title("%d ranks as threads, %s" % (ranks, device))
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=120)


if __name__ == "__main__":
    main()
