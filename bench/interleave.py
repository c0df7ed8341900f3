#!/usr/bin/env python3
"""Summarises interleaved runs of collective_bench (--interleave; one CSV per
process run, e.g. scripts/gpu-interleave.sh run several times): for every
(collective, ranks, bytes per rank) and program family (direct, bcast), the
paired ratio to the fused kernel of each variant in each run, the variant
whose median over runs is lowest ("the variant's best"), and the spread.

Writes a markdown table to stdout; with --plot OUT.png also a figure of
the best paired ratio against size, one line per (collective, ranks,
family), the runs' range shaded, and the 1.05 target.

usage: interleave.py [--plot OUT.png] [--target 1.05] RUN.csv...
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict


def family(variant):
    return "bcast" if "bcast" in variant else "direct"


def load(paths):
    """ratios[(collective, ranks, bytes, family)][variant] = [ratio per run];
    fused[(collective, ranks, bytes)] = [fused median per run]."""
    ratios = defaultdict(lambda: defaultdict(list))
    fused = defaultdict(list)
    for path in paths:
        for r in csv.DictReader(open(path)):
            ratio = float(r["paired_vs_fused"])
            if ratio < 0:
                sys.exit(f"{path}: not an interleaved run (paired_vs_fused "
                         "is -1)")
            if r["wrong_bytes"] != "0":
                sys.exit(f"{path}: {r['variant']} at {r['bytes_per_rank']} "
                         f"has {r['wrong_bytes']} wrong bytes")
            point = (r["collective"], int(r["ranks"]), int(r["bytes_per_rank"]))
            if r["variant"] == "fused-kernel":
                fused[point].append(float(r["median_us"]))
                continue
            ratios[point + (family(r["variant"]),)][r["variant"]].append(ratio)
    return ratios, fused


def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plot")
    parser.add_argument("--target", type=float, default=1.05)
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    ratios, fused = load(args.runs)
    print("| collective | ranks | bytes/rank | family | fused us (runs) | "
          "best variant | paired ratio, median of runs | runs |")
    print("|---|---|---|---|---|---|---|---|")
    best = {}
    over = []
    for key in sorted(ratios):
        collective, ranks, b, fam = key
        name, runs = min(ratios[key].items(),
                         key=lambda kv: statistics.median(kv[1]))
        m = statistics.median(runs)
        best[key] = (m, min(runs), max(runs))
        if m > args.target:
            over.append(key)
        f = fused[(collective, ranks, b)]
        print(f"| {collective} | {ranks} | {size(b)} | {fam} | "
              f"{statistics.median(f):.2f} ({len(f)}) | "
              f"{name.replace('sdma-ldst-', '')} | {m:.3f} | "
              f"{' '.join(f'{x:.3f}' for x in runs)} |")
    print()
    print(f"Points whose best is above {args.target}: "
          + (", ".join(f"{c} {r} ranks {size(b)} ({f})"
                       for c, r, b, f in over) if over else "none"))
    if args.plot:
        plot(best, args.plot, args.target)


def plot(best, out, target):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series = defaultdict(list)
    for (collective, ranks, b, fam), value in best.items():
        series[(collective, fam, ranks)].append((b, *value))
    collectives = sorted({k[0] for k in series})
    fig, axes = plt.subplots(1, len(collectives),
                             figsize=(7 * len(collectives), 5), squeeze=False)
    for col, collective in enumerate(collectives):
        ax = axes[0][col]
        for (c, fam, ranks), points in sorted(series.items()):
            if c != collective:
                continue
            points.sort()
            xs = [p[0] for p in points]
            line, = ax.plot(xs, [p[1] for p in points], marker="o",
                            linestyle="-" if fam == "direct" else "--",
                            label=f"{fam}, {ranks} ranks")
            ax.fill_between(xs, [p[2] for p in points],
                            [p[3] for p in points], alpha=0.15,
                            color=line.get_color())
        ax.axhline(target, color="red", linewidth=1)
        ax.axhline(1.0, color="grey", linewidth=0.5)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("time / fused kernel's, same round (median of runs)")
        ax.set_title(collective)
        ax.legend(fontsize=8)
    fig.suptitle("best load/store variant vs the fused kernel, interleaved "
                 "(shaded: range over process runs)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
