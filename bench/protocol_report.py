#!/usr/bin/env python3
"""The call protocol's cost (issue 38) from a scripts/gpu-protocol.sh log:
every per-call row as CSV (mode,op,ranks,bytes,us_per_call,host_us_per_call;
mode is a program directory's name or "in-process"), a Markdown table of
each directory against the first and against the in-process executor, and
the plot bench/plot_capi.py draws.

usage: protocol_report.py LOG OUT_PREFIX DEVICE [FOCUS]
  writes OUT_PREFIX.csv, OUT_PREFIX-table.md and OUT_PREFIX.png; FOCUS (a
  directory's name; default the last) is the one compared with the
  in-process executor
"""
import csv
import re
import subprocess
import sys
from pathlib import Path

log, prefix, device = sys.argv[1], sys.argv[2], sys.argv[3]
focus = sys.argv[4] if len(sys.argv) > 4 else None
rows, section, modes = [], None, []
for line in Path(log).read_text().splitlines():
    if line.startswith("# capi "):
        section = line.split()[2]
        if section not in modes:
            modes.append(section)
        continue
    if line.startswith("# in-process"):
        section = "in-process"
        continue
    if line.startswith("# "):
        section = None
        continue
    m = re.match(r"(allgather|alltoall|allreduce),(\d+),(\d+),([\d.]+),"
                 r"([\d.]+)$", line)
    if m and section:
        rows.append({"mode": section, "op": m[1], "ranks": int(m[2]),
                     "bytes": int(m[3]), "us_per_call": float(m[4]),
                     "host_us_per_call": float(m[5])})
if not rows or not modes:
    sys.exit(f"{log}: no per-call rows")

with open(prefix + ".csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)

at = {(r["mode"], r["op"], r["ranks"], r["bytes"]): r for r in rows}
first = modes[0]
focus = focus or modes[-1]
if focus not in modes:
    sys.exit(f"{log}: no directory {focus} (have {', '.join(modes)})")
out = [f"Per call, us (median of 5 x ITERS back-to-back calls; host: the "
       f"time to enqueue them), {device}. Ratios against `{first}` and "
       f"against the in-process executor, same run.", ""]
head = "| op | ranks | bytes | in-process | " + " | ".join(
    f"{m} (host)" for m in modes) + " | " + " | ".join(
    f"{m} / {first}" for m in modes[1:]) + f" | {focus} / in-process |"
out += [head, "|" + "---|" * (head.count("|") - 1)]
for op in ("allgather", "alltoall", "allreduce"):
    for ranks in sorted({r["ranks"] for r in rows}):
        sizes = sorted({r["bytes"] for r in rows
                        if r["op"] == op and r["ranks"] == ranks})
        for b in sizes:
            cells = [at.get((m, op, ranks, b)) for m in modes]
            base = at.get(("in-process", op, ranks, b))
            if None in cells:
                continue
            mine = cells[modes.index(focus)]
            line = f"| {op} | {ranks} | {b} | " + (
                f"{base['us_per_call']:.2f}" if base else "-") + " | "
            line += " | ".join(f"{c['us_per_call']:.2f} ({c['host_us_per_call']:.2f})"
                               for c in cells) + " | "
            line += " | ".join(
                f"{c['us_per_call'] / cells[0]['us_per_call']:.2f}"
                for c in cells[1:]) + " | "
            line += (f"{mine['us_per_call'] / base['us_per_call']:.2f}"
                     if base else "-") + " |"
            out.append(line)
Path(prefix + "-table.md").write_text("\n".join(out) + "\n")
subprocess.run([sys.executable, str(Path(__file__).with_name("plot_capi.py")),
                prefix + ".csv", prefix + ".png", device], check=True)
