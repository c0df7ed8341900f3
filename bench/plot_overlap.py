#!/usr/bin/env python3
"""bench/overlap.py's CSVs (one per implementation) as one CSV, a table and
a plot: per GEMM, the GEMM's slowdown beside each collective and the
fraction of the ideal overlap, by bytes per rank.

  bench/plot_overlap.py OUT_STEM TITLE CSV...
"""
import csv
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    stem, title, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    rows = []
    for name in files:
        with open(name) as f:
            rows += list(csv.DictReader(f))
    if not rows:
        sys.exit("no rows")
    fields = list(rows[0].keys())
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    impls = sorted({r["impl"] for r in rows})
    gemms = [g for g in ("compute", "moe", "decode")
             if any(r["gemm"] == g for r in rows)]
    colls = sorted({r["collective"] for r in rows})
    with open(stem + ".md", "w") as f:
        f.write("| GEMM | collective | bytes/rank | " + " | ".join(
            "%s: GEMM slowdown / coll. slowdown / fraction of ideal" % i
            for i in impls) + " |\n")
        f.write("|---" * (3 + len(impls)) + "|\n")
        for g in gemms:
            for c in colls:
                sizes = sorted({int(r["bytes"]) for r in rows
                                if r["gemm"] == g and r["collective"] == c})
                for b in sizes:
                    cells = []
                    for i in impls:
                        m = [r for r in rows if (r["impl"], r["gemm"],
                             r["collective"], int(r["bytes"])) == (i, g, c, b)]
                        cells.append("%.2f / %.1f / %.2f" % (
                            float(m[0]["gemm_slowdown"]),
                            float(m[0]["coll_slowdown"]),
                            float(m[0]["fraction_of_ideal"])) if m else "")
                    f.write("| %s | %s | %d | %s |\n" % (g, c, b,
                                                         " | ".join(cells)))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot")
        return
    fig, axes = plt.subplots(2, len(gemms), figsize=(4.2 * len(gemms), 7),
                             squeeze=False)
    for col, g in enumerate(gemms):
        for row, (metric, label) in enumerate(
                (("gemm_slowdown", "GEMM time overlapped / alone"),
                 ("fraction_of_ideal", "fraction of ideal overlap"))):
            ax = axes[row][col]
            for i in impls:
                for c in colls:
                    pts = sorted((int(r["bytes"]), float(r[metric]))
                                 for r in rows if r["impl"] == i and
                                 r["gemm"] == g and r["collective"] == c)
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts],
                                marker="o", linestyle="-" if c == colls[0]
                                else "--", label="%s %s" % (i, c))
            ax.set_xscale("log", base=2)
            ax.set_title("%s GEMM" % g)
            ax.set_xlabel("bytes per rank")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=100)


if __name__ == "__main__":
    main()
