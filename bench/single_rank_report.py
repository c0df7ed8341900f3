#!/usr/bin/env python3
"""One-rank calls: the C API's copy kernel against the device copy, the
in-process executor and NCCL's world-size-1 call, from one GPU run's log.

  bench/single_rank_report.py LOG OUT_STEM [--kernel-bytes=DEFAULT]

LOG sections (each followed by the bench's CSV rows op,ranks,bytes,us[,host]):
  "# C API one rank, copy-kernel bytes K" (K: default, 0 = always the device
  copy, a huge number = always the kernel), "# in-process executor" (its
  one-rank rows) and "# nccl world size 1 (torch)". Writes OUT_STEM.csv,
  OUT_STEM.md (a table) and OUT_STEM.png.
"""
import argparse
import re
import sys

COLUMNS = [("default", "auto (default)"), ("0", "device copy"),
           ("kernel", "copy kernel"), ("in-process", "in-process executor"),
           ("nccl", "NCCL ws=1")]


def parse(text):
    data, key = {}, None
    for line in text.splitlines():
        m = re.match(r"# C API one rank, copy-kernel bytes (\S+)", line)
        if m:
            k = m.group(1)
            key = k if k in ("default", "0") else "kernel"
            continue
        if line.startswith("# in-process"):
            key = "in-process"
            continue
        if line.startswith("# nccl"):
            key = "nccl"
            continue
        if line.startswith("#"):
            key = None
            continue
        p = line.split(",")
        if key and len(p) in (4, 5) and p[0] in ("allgather", "alltoall") \
                and p[1] == "1":
            data.setdefault((p[0], int(p[2])), {})[key] = float(p[3])
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("out")
    ap.add_argument("--device", default="one GPU")
    a = ap.parse_args()
    data = parse(open(a.log).read())
    if not data:
        sys.exit("no one-rank rows in " + a.log)
    keys = sorted(data)
    with open(a.out + ".csv", "w") as f:
        f.write("op,bytes," + ",".join(k for k, _ in COLUMNS) + "\n")
        for op, b in keys:
            row = data[(op, b)]
            f.write("%s,%d,%s\n" % (op, b, ",".join(
                "%.2f" % row[k] if k in row else "" for k, _ in COLUMNS)))
    with open(a.out + ".md", "w") as f:
        f.write("| op | bytes | " + " | ".join(n + " us" for _, n in COLUMNS)
                + " | auto / in-process | auto / NCCL |\n")
        f.write("|---" * (len(COLUMNS) + 4) + "|\n")
        for op, b in keys:
            row = data[(op, b)]
            cells = ["%.2f" % row[k] if k in row else "" for k, _ in COLUMNS]
            ratio = lambda x, y: ("%.2f" % (row[x] / row[y])
                                  if x in row and y in row else "")
            f.write("| %s | %d | %s | %s | %s |\n" % (
                op, b, " | ".join(cells), ratio("default", "in-process"),
                ratio("default", "nccl")))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot")
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, op in zip(axes, ("allgather", "alltoall")):
        sizes = [b for o, b in keys if o == op]
        for k, name in COLUMNS:
            ys = [data[(op, b)].get(k) for b in sizes]
            pts = [(b, y) for b, y in zip(sizes, ys) if y is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                        label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title("%s, one rank (%s)" % (op, a.device))
        ax.set_xlabel("bytes")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("us per call (median)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)


if __name__ == "__main__":
    main()
