#!/usr/bin/env python3
"""Buffers shared for a call against staging them (the NCCL drop-in's two
ways with plain memory) and against symmetric memory: sdma-comm-test's bench
output (scripts/gpu-shared-bench.sh's console: one "== bench R threads,
buffers MODE, SDMA_SHARED_BYTES=S" header per run, then its CSV rows) into
PREFIX.csv, PREFIX-table.md and PREFIX.png (where matplotlib is present).

  bench/shared_report.py LOG PREFIX "DEVICE"
"""
import csv
import re
import sys
from collections import defaultdict

NAMES = {("symmetric", "0"): "symmetric",
         ("staged", "0"): "staged",
         ("plain", "1"): "shared",
         ("symmetric", "1"): "symmetric+exchange"}


def read(path):
    rows, variant = [], None
    header = re.compile(r"== bench (\d+) threads, buffers (\w+), "
                        r"SDMA_SHARED_BYTES=(\d+)")
    for line in open(path, errors="replace"):
        m = header.match(line)
        if m:
            variant = NAMES.get((m.group(2), m.group(3)))
            continue
        parts = line.strip().split(",")
        if variant and len(parts) == 5 and parts[0] in (
                "allgather", "alltoall", "allreduce"):
            rows.append(dict(variant=variant, op=parts[0], ranks=int(parts[1]),
                             bytes=int(parts[2]), us=float(parts[3]),
                             host_us=float(parts[4])))
    return rows


def main():
    log, prefix, device = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = read(log)
    if not rows:
        sys.exit("no bench rows in " + log)
    with open(prefix + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    at = {(r["variant"], r["op"], r["ranks"], r["bytes"]): r["us"]
          for r in rows}
    keys = sorted({(r["ranks"], r["op"], r["bytes"]) for r in rows})
    out = ["# Shared, staged and symmetric buffers (%s)" % device, "",
           "us per call (median of 5 x 20 back-to-back calls, ranks as "
           "threads of one process, one run; low-latency calls off, SDMA_LL_BYTES=0, so every call takes the barrier path). shared: the caller's cuMemAlloc'd "
           "buffers, exchanged for each call (SDMA_SHARED_BYTES); staged: the "
           "same buffers copied into symmetric memory and out around each call "
           "(the drop-in without sharing); symmetric: sdmaMemAlloc'd buffers, "
           "no exchange.", "",
           "| ranks | op | bytes | symmetric | staged | shared | shared / staged "
           "| shared / symmetric |", "|---|---|---|---|---|---|---|---|"]
    for ranks, op, size in keys:
        sym = at.get(("symmetric", op, ranks, size))
        st = at.get(("staged", op, ranks, size))
        sh = at.get(("shared", op, ranks, size))
        ratio = lambda a, b: "%.2fx" % (a / b) if a and b else "-"
        fmt = lambda v: "%.1f" % v if v else "-"
        shown = "%d MiB" % (size >> 20) if size >= 1 << 20 else \
            "%d KiB" % (size >> 10)
        out.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
            ranks, op, shown, fmt(sym), fmt(st), fmt(sh), ratio(sh, st),
            ratio(sh, sym)))
    open(prefix + "-table.md", "w").write("\n".join(out) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot")
        return
    ranks = sorted({r["ranks"] for r in rows})
    fig, axes = plt.subplots(1, len(ranks), figsize=(6 * len(ranks), 4.5))
    for ax, R in zip(axes if len(ranks) > 1 else [axes], ranks):
        series = defaultdict(list)
        for r in rows:
            if r["ranks"] == R and r["op"] in ("allgather", "alltoall"):
                series[(r["variant"], r["op"])].append((r["bytes"], r["us"]))
        for (variant, op), pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] >> 20 for p in pts], [p[1] for p in pts],
                    marker="o", linestyle="-" if op == "allgather" else "--",
                    label="%s %s" % (variant, op))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes (MiB)")
        ax.set_ylabel("us per call")
        ax.set_title("%d ranks as threads, %s" % (R, device))
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=120)


if __name__ == "__main__":
    main()
