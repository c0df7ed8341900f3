#!/usr/bin/env python3
"""Compile cost against rank count, stage by stage (the compiler-cost bench).

For each schedule, DMA variant and rank count, runs

    sdma-opt SCHEDULE --sdma-lower-dma="variant=V ranks=R" --mlir-timing

and records every pass's wall time (MLIR's own timing, the pipeline's
passes in order) and the process's peak memory (getrusage of the child),
then the load/store path (sdma-unroll + sdma-translate --sdma-to-hip). A
configuration that exceeds --timeout seconds stops that series (larger
rank counts would too). Writes OUT.csv (one row per stage), OUT.png (time
per stage against ranks, log-log) and prints, per stage, the exponent of
a least-squares fit of log(time) on log(ranks) over the points above
--floor seconds: 2 means quadratic in ranks, i.e. linear in the R^2
transfers of a direct schedule.

    scripts/compile-scaling.py BUILD_DIR OUT [--ranks 8,16,...] [--timeout 120]
                               [--max-ops N]
"""
import argparse
import math
import os
import re
import resource
import subprocess
import sys
import time

LINE = re.compile(r"^\s*([\d.]+)\s+\(\s*[\d.]+%\)\s+(.*\S)\s*$")


GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def run(cmd, timeout, stdin=None):
    """(seconds, peak RSS in MiB, stdout, stderr) or None on timeout. The
    peak is the child's own with GNU time (Debian's `time` package), else
    the largest of all children so far (runs go in increasing size)."""
    if GNU_TIME:
        cmd = [GNU_TIME, "-f", "SDMA_MAXRSS_KB %M"] + cmd
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - start
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr.decode()[-2000:]))
    m = re.search(rb"SDMA_MAXRSS_KB (\d+)", p.stderr)
    kb = int(m.group(1)) if m else \
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, kb / 1024.0, p.stdout, p.stderr


def stages(timing):
    """Pass name -> seconds from --mlir-timing-display=list output."""
    out = {}
    for line in timing.decode().splitlines():
        m = LINE.match(line)
        if m and m.group(2) not in ("Total", "Rest", "root"):
            name = m.group(2)
            out[name] = out.get(name, 0.0) + float(m.group(1))
    return out


def fit(points):
    """Least-squares slope of log(y) on log(x)."""
    if len(points) < 2:
        return float("nan")
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("--ranks", default="8,16,32,64,128,256")
    p.add_argument("--schedules", default="all_to_all_direct,all_gather_direct")
    p.add_argument("--variants", default="pcpy,bcst,swap,b2b,ldst")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--floor", type=float, default=0.05)
    # sdma-unroll's op budget (default 1M: all_gather_direct at 1024 ranks
    # has 1,048,576 copies).
    p.add_argument("--max-ops", type=int, default=4000000)
    a = p.parse_args()
    opt = os.path.join(a.build, "bin", "sdma-opt")
    translate = os.path.join(a.build, "bin", "sdma-translate")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "schedules")
    rows = []
    for schedule in a.schedules.split(","):
        path = os.path.join(src, schedule + ".mlir")
        for variant in a.variants.split(","):
            for ranks in [int(r) for r in a.ranks.split(",")]:
                if variant == "ldst":
                    cmd = [opt, path, "--sdma-unroll=ranks=%d max-ops=%d"
                           % (ranks, a.max_ops),
                           "--sdma-verify=report=false", "--mlir-timing",
                           "--mlir-timing-display=list"]
                else:
                    cmd = [opt, path,
                           "--sdma-lower-dma=variant=%s ranks=%d max-ops=%d"
                           % (variant, ranks, a.max_ops), "--mlir-timing",
                           "--mlir-timing-display=list"]
                r = run(cmd, a.timeout)
                if r is None:
                    print("%s %s %d: over %gs, series stopped"
                          % (schedule, variant, ranks, a.timeout), flush=True)
                    rows.append((schedule, variant, ranks, "timeout",
                                 a.timeout, 0))
                    break
                wall, rss, ir, timing = r
                per = stages(timing)
                total = wall
                if variant == "ldst":
                    t = run([translate, "--sdma-to-hip"], a.timeout, stdin=ir)
                    if t is None:
                        rows.append((schedule, variant, ranks, "timeout",
                                     a.timeout, 0))
                        break
                    per["sdma-translate --sdma-to-hip"] = t[0]
                    total += t[0]
                    rss = max(rss, t[1])
                ops = ir.count(b"sdma.copy") + ir.count(b"sdma.bcast") + \
                    ir.count(b"sdma.swap")
                for stage, sec in per.items():
                    rows.append((schedule, variant, ranks, stage, sec, rss))
                rows.append((schedule, variant, ranks, "whole", total, rss))
                print("%s %s %d: %.2fs, %.0f MiB, %d data ops"
                      % (schedule, variant, ranks, total, rss, ops),
                      flush=True)
    with open(a.out + ".csv", "w") as f:
        f.write("schedule,variant,ranks,stage,seconds,peak_rss_mib\n")
        for row in rows:
            f.write("%s,%s,%d,\"%s\",%.4f,%.0f\n" % row)
    # Exponents per (schedule, variant, stage).
    series = {}
    for s, v, r, stage, sec, _ in rows:
        if stage != "timeout" and sec >= a.floor:
            series.setdefault((s, v, stage), []).append((r, sec))
    print("\n| schedule | variant | stage | ranks fitted | exponent in ranks |")
    print("|---|---|---|---|---|")
    for (s, v, stage), pts in sorted(series.items()):
        if len(pts) >= 2:
            print("| %s | %s | %s | %d-%d | %.2f |" % (
                s, v, stage, pts[0][0], pts[-1][0], fit(pts)))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot")
        return
    schedules = a.schedules.split(",")
    fig, axes = plt.subplots(1, len(schedules), figsize=(6 * len(schedules), 4.5))
    if len(schedules) == 1:
        axes = [axes]
    for ax, s in zip(axes, schedules):
        for (s2, v, stage), pts in sorted(series.items()):
            if s2 != s or (stage != "whole" and v not in ("bcst", "ldst")):
                continue
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o",
                    label="%s: %s (%.2f)" % (v, stage, fit(pts)))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("seconds (2-core machine)")
        ax.set_title("%s: compile time by stage (fitted exponent)" % s,
                     fontsize=9)
        ax.legend(fontsize=5)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=120)


if __name__ == "__main__":
    main()
