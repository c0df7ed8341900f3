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

import numpy as np

rows = list(csv.DictReader(open(sys.argv[1])))
net = [r for r in rows if r["kind"] == "network"]
a = np.array([[float(r["messages"]), float(r["bytes"])] for r in net])
t = np.array([float(r["median_us"]) for r in net])
(alpha, inv_beta), *_ = np.linalg.lstsq(a, t, rcond=None)
pred = a @ np.array([alpha, inv_beta])
err = np.abs(pred - t) / t
print("# Hierarchical collectives per phase: simulated nodes (CPU device + MPI)\n")
print(f"Network phase model (busiest sender): alpha = {alpha:.2f} us per "
      f"message, beta = {1 / inv_beta / 1e3:.2f} GB/s "
      f"(median error {100 * np.median(err):.0f}%, max {100 * err.max():.0f}% "
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
