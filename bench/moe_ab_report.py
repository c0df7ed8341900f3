#!/usr/bin/python3
"""Side-by-side MoE all-to-allv runs (program sets A/B/... in one device
call) as CSV, a plot and a markdown table.

The GPU scripts (.gpu/sNNx.sh, scripts/gpu-moe2d.sh's moe step) print one
line per run:

    round 1 old expert 128 skewed      dispatch   167.9 combine   289.9 (slowest of 8, exit 0)
    large new expert 4096 uniform      dispatch  2684.0 combine  2714.6 (slowest of 8, exit 0)

each time the slowest rank's median of the bench's calls. Usage:

    moe_ab_report.py OUT_PREFIX BASELINE_SET LOG[:CALL] [LOG[:CALL] ...]
        [--fused JSON ... [--fused-call CALL]] [--rename CALL:SET=NAME ...]

Writes OUT_PREFIX.csv (call, round, set, layout, tokens, routing,
dispatch_us, combine_us), OUT_PREFIX.png (each set's mean over rounds per
case, relative to BASELINE_SET in the same call) and prints a markdown
table of means and ratios. --fused adds the fused kernel's times
(bench/moe_bench.py baselines' JSON) as the last columns.
"""
import argparse
import json
import re
import statistics
from collections import defaultdict

LINE = re.compile(r"^(round \d+|large)\s+(\S+)\s+(packed|expert)\s+(\d+)\s+"
                  r"(\S+)\s+dispatch\s+([\d.]+)\s+combine\s+([\d.]+)")


def read(logs, rename):
    rows = []
    for spec in logs:
        path, _, call = spec.partition(":")
        call = call or path
        for line in open(path, errors="replace"):
            m = LINE.match(line)
            if not m:
                continue
            label, name, layout, tokens, routing, d, c = m.groups()
            name = rename.get((call, name), name)
            rows.append(dict(call=call, round=label, set=name, layout=layout,
                             tokens=int(tokens), routing=routing,
                             dispatch_us=float(d), combine_us=float(c)))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("prefix")
    p.add_argument("baseline")
    p.add_argument("logs", nargs="+")
    p.add_argument("--fused", nargs="*", default=[])
    p.add_argument("--fused-call", default=None,
                   help="the call the fused times were measured in (others "
                   "get no ratio to them)")
    p.add_argument("--rename", nargs="*", default=[])
    a = p.parse_args()
    rename = {}
    for r in a.rename:
        key, _, new = r.partition("=")
        call, _, old = key.rpartition(":")
        rename[(call, old)] = new
    rows = read(a.logs, rename)
    with open(a.prefix + ".csv", "w") as f:
        keys = ["call", "round", "set", "layout", "tokens", "routing",
                "dispatch_us", "combine_us"]
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(str(r[k]) for k in keys) + "\n")
    fused = {}
    for path in a.fused:
        j = json.load(open(path))
        fused[(j["tokens"], j["routing"])] = (j["dispatch_fused_us"],
                                              j["combine_fused_us"])
    # (call, layout, tokens, routing) -> set -> [(dispatch, combine)]
    cases = defaultdict(lambda: defaultdict(list))
    for r in rows:
        key = (r["call"], r["layout"], r["tokens"], r["routing"])
        cases[key][r["set"]].append((r["dispatch_us"], r["combine_us"]))
    head = ("| call | case | set | runs | dispatch (us) | vs %s | combine (us)"
            " | vs %s |" % (a.baseline, a.baseline))
    if fused:
        head += " combine / fused |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    bars = []
    for key in sorted(cases, key=lambda k: (k[0], k[1], k[2], k[3])):
        call, layout, tokens, routing = key
        sets = cases[key]
        base = sets.get(a.baseline)
        bd = statistics.mean(x[0] for x in base) if base else None
        bc = statistics.mean(x[1] for x in base) if base else None
        for name, vals in sets.items():
            d = statistics.mean(x[0] for x in vals)
            c = statistics.mean(x[1] for x in vals)
            line = "| %s | %s %d %s | %s | %d | %.1f | %s | %.1f | %s |" % (
                call, layout, tokens, routing, name, len(vals), d,
                "%.2fx" % (d / bd) if bd else "-", c,
                "%.2fx" % (c / bc) if bc else "-")
            if fused:
                f = fused.get((tokens, routing))
                if a.fused_call and call != a.fused_call:
                    f = None
                line += " %s |" % ("%.2fx" % (c / f[1]) if f else "-")
            print(line)
            if bd:
                bars.append(("%s %s %d %s" % (call, layout, tokens, routing),
                             name, d / bd, c / bc))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = list(dict.fromkeys(b[0] for b in bars))
    names = list(dict.fromkeys(b[1] for b in bars))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5), sharey=True)
    width = 0.8 / max(1, len(names))
    for ax, col, title in ((axes[0], 2, "dispatch"), (axes[1], 3, "combine")):
        for i, name in enumerate(names):
            xs, ys = [], []
            for g, group in enumerate(groups):
                for b in bars:
                    if b[0] == group and b[1] == name:
                        xs.append(g + i * width)
                        ys.append(b[col])
            ax.bar(xs, ys, width, label=name)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks([g + width * (len(names) - 1) / 2
                       for g in range(len(groups))])
        ax.set_xticklabels(groups, fontsize=7, rotation=35, ha="right")
        ax.set_title("%s, time relative to %s (lower is faster)" %
                     (title, a.baseline), fontsize=9)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.prefix + ".png", dpi=110)


if __name__ == "__main__":
    main()
