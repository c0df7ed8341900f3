#!/usr/bin/env python3
"""Plots bench/launch_cost.cu's CSV: the host's microseconds per launch
against the parameter block's size, one line per mode (one stream, the
group's join, a graph, T threads at once), and writes a markdown table.

  bench/plot_launch_cost.py CSV OUT_PREFIX   (writes OUT_PREFIX.png, .md)
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("out")
    args = parser.parse_args()
    with open(args.csv) as f:
        device = f.readline().lstrip("# ").split(",")[0]
        rows = list(csv.DictReader(f))
    lines = {}
    for r in rows:
        name = r["mode"] + ("" if r["mode"] != "threads" else
                            " x%s" % r["threads"])
        lines.setdefault(name, []).append(
            (int(r["param_bytes"]), float(r["host_us"])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, points in lines.items():
        if len(points) < 2:
            continue
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("kernel parameter bytes")
    ax.set_ylabel("host us per launch (median of 7 x 2000)")
    ax.set_title("Launch cost on the host, %s" % device)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out + ".png", dpi=120)
    with open(args.out + ".md", "w") as out:
        out.write("Host us per launch, %s (bench/launch_cost.cu; each row "
                  "the median of 7 repeats of 2000 launches; threads: each "
                  "thread's own launches).\n\n" % device)
        sizes = sorted({b for p in lines.values() for b, _ in p})
        out.write("| mode | " + " | ".join("%d B" % s for s in sizes) +
                  " |\n|---|" + "---|" * len(sizes) + "\n")
        for name, points in lines.items():
            by = dict(points)
            out.write("| %s | " % name + " | ".join(
                "%.2f" % by[s] if s in by else "" for s in sizes) + " |\n")


if __name__ == "__main__":
    main()
