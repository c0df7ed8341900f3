#!/usr/bin/env python3
"""The per-phase cost model of hierarchical collectives, fitted on
bench/multinode's measurements: a network phase costs, on its busiest
sender, alpha x messages + bytes / beta (least squares over every network
phase measured); a node phase is the node's own program (reported as
measured, with its share of the call). Prints markdown: the fit, then per
collective, shape and size the measured and predicted network time and the
share of each phase kind.

usage: fit.py RESULTS.csv
"""
import csv
import sys
from collections import defaultdict


rows = list(csv.DictReader(open(sys.argv[1])))
net = [r for r in rows if r["kind"] == "network"]
m = [float(r["messages"]) for r in net]
b = [float(r["bytes"]) for r in net]
t = [float(r["median_us"]) for r in net]
# Least squares of t = alpha m + b / beta: the 2x2 normal equations.
smm = sum(x * x for x in m)
smb = sum(x * y for x, y in zip(m, b))
sbb = sum(y * y for y in b)
smt = sum(x * z for x, z in zip(m, t))
sbt = sum(y * z for y, z in zip(b, t))
det = smm * sbb - smb * smb
alpha = (smt * sbb - sbt * smb) / det
inv_beta = (sbt * smm - smt * smb) / det
pred = [alpha * x + inv_beta * y for x, y in zip(m, b)]
err = sorted(abs(p - z) / z for p, z in zip(pred, t))
print("# Hierarchical collectives per phase: simulated nodes (CPU device + MPI)\n")
print(f"Network phase model (busiest sender): alpha = {alpha:.2f} us per "
      f"message, beta = {1 / inv_beta / 1e3:.2f} GB/s "
      f"(median error {100 * err[len(err) // 2]:.0f}%, max {100 * err[-1]:.0f}% "
      f"over {len(net)} phases).\n")
print("Medians of 30 calls, the slowest rank's per phase; host times on one "
      "2-core machine, MPI over shared memory: the structure, not a "
      "real network.\n")
print("| collective | N x G | chunk | total us | node us | network us | "
      "network predicted us | network share |")
print("|---|---|---|---|---|---|---|---|")
calls = defaultdict(lambda: {"node": 0.0, "network": 0.0, "pred": 0.0,
                             "total": 0.0})
for r in rows:
    key = (r["schedule"], int(r["nodes"]), int(r["local_ranks"]),
           int(r["chunk_bytes"]))
    us = float(r["median_us"])
    if r["kind"] == "total":
        calls[key]["total"] = us
    else:
        calls[key][r["kind"]] += us
    if r["kind"] == "network":
        calls[key]["pred"] += alpha * float(r["messages"]) + \
            inv_beta * float(r["bytes"])
for (s, n, g, chunk), c in sorted(calls.items()):
    share = c["network"] / c["total"] if c["total"] else 0
    print(f"| {s} | {n}x{g} | {chunk} | {c['total']:.1f} | {c['node']:.1f} | "
          f"{c['network']:.1f} | {c['pred']:.1f} | {100 * share:.0f}% |")
