#!/usr/bin/env python3
"""Specialised against table kernels, both against the hand-written fused
kernel of the same run: one Markdown row per (collective, type, size) from
bench/collective_bench.cu and bench/allreduce_bench.cu CSVs.

Columns: the best fused kernel, the best specialised sdma program (variants
without "-table"; "-inline" ones are the specialised kernel with its
segment routines inlined, the default for schedules of <= 32 segments), the
best table-kernel program ("-table", "-table-staged"), and each over the
fused kernel.

usage: specialised_table.py OUT.md CSV...
"""
import csv
import sys
from collections import defaultdict

out, paths = sys.argv[1], sys.argv[2:]
times = defaultdict(dict)  # (collective, type, bytes) -> variant -> us
for path in paths:
    for r in csv.DictReader(open(path)):
        key = (r["collective"], r.get("type", "-"), int(r["bytes_per_rank"]))
        times[key][r["variant"]] = float(r["median_us"])


def best(entry, keep):
    found = [(us, v) for v, us in entry.items() if keep(v)]
    return min(found) if found else None


rows = ["| collective | type | bytes/rank | fused us | specialised us "
        "(variant) | table us (variant) | specialised / fused | "
        "table / fused |", "|---|---|---:|---:|---|---|---:|---:|"]
for key in sorted(times):
    entry = times[key]
    fused = best(entry, lambda v: v.startswith("fused"))
    spec = best(entry, lambda v: v.startswith("sdma") and "table" not in v
                and "ring" not in v)
    table = best(entry, lambda v: v.startswith("sdma") and "table" in v
                 and "ring" not in v)
    if not fused or not spec:
        continue
    cell = lambda b: "-" if not b else f"{b[0]:.1f} ({b[1]})"
    ratio = lambda b: "-" if not b else f"{b[0] / fused[0]:.2f}x"
    rows.append(f"| {key[0]} | {key[1]} | {key[2]} | {fused[0]:.1f} | "
                f"{cell(spec)} | {cell(table)} | {ratio(spec)} | "
                f"{ratio(table)} |")
open(out, "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
