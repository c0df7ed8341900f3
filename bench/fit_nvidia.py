#!/usr/bin/python3
"""Fits the NVIDIA cost model (runtime/include/sdma/runtime/NvTimingModel.h)
to benchmark results, writes the profile, and reports how often the model's
pick among sdma's variants was the measured best.

For every sdma row of the given CSVs (one GPU and several), the plan that
variant ran is found in PROGRAM_DIR (scripts/make-gpu-programs.sh) and its
features at that size are computed by sdma-predict (the C++ model itself).
Each executor's coefficients are fitted by non-negative least squares on
relative error. Then, per (machine, collective, size), the predicted-fastest
variant is compared with the measured-fastest: in sample (the profile's own
fit), and held out (each point's pick made by a fit without that point).

usage: fit_nvidia.py SDMA_PREDICT PROGRAM_DIR PROFILE_OUT REPORT_OUT CSV...
       fit_nvidia.py --evaluate PROFILE SDMA_PREDICT PROGRAM_DIR REPORT_OUT CSV...
With --evaluate nothing is fitted: the given profile picks (what
`sdma-run --backend=auto` would run) for results it was not fitted on, and
the report says how often that pick was the measured best.
"""
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np
from scipy.optimize import nnls

evaluate = None
if sys.argv[1] == "--evaluate":
    evaluate = json.load(open(sys.argv[2]))
    predict_bin, programs, report_out = sys.argv[3:6]
    csvs = sys.argv[6:]
else:
    predict_bin, programs, profile_out, report_out = sys.argv[1:5]
    csvs = sys.argv[5:]
FEATURES = ["fixed", "queues", "commands", "syncs", "local_GB", "peer_GB",
            "queue_GB"]

# variant -> (plan name pattern, executor)
VARIANTS = {
    "sdma-ldst-direct": ("{c}_direct-{r}", "ldst"),
    "sdma-ldst-bcast": ("all_gather_bcast-{r}", "ldst"),
    "sdma-ldst-ring": ("all_gather_ring-{r}", "ldst"),
    "sdma-ce-pcpy": ("{c}_direct-{r}", "ce"),
    "sdma-ce-b2b": ("{c}_direct-{r}-b2b", "ce"),
    "sdma-ce-b2b-batch": ("{c}_direct-{r}-b2b", "ce-batch"),
    "sdma-ce-pcpy-graph": ("{c}_direct-{r}", "ce-graph"),
    "sdma-ce-b2b-graph": ("{c}_direct-{r}-b2b", "ce-graph"),
}

cache = {}


def features(plan, executor, devices, chunk):
    key = (plan, executor, devices, chunk)
    if key not in cache:
        out = subprocess.run(
            [predict_bin, os.path.join(programs, plan + ".json"),
             f"--executor={executor}", f"--devices={devices}",
             f"--chunk-bytes={chunk}"],
            check=True, capture_output=True, text=True).stdout.splitlines()
        cache[key] = [float(x) for x in out[1].split(",")[1:]]
    return cache[key]


def input_chunks(plan):
    p = json.load(open(os.path.join(programs, plan + ".json")))
    name = p["collective"]["input"]
    return next(b["chunks"] for b in p["buffers"] if b["name"] == name)


rows = []
for path in csvs:
    for r in csv.DictReader(open(path)):
        if r["variant"] not in VARIANTS:
            continue
        pattern, executor = VARIANTS[r["variant"]]
        ranks = int(r["ranks"])
        devices = r["gpus"].count("+") + 1
        plan = pattern.format(c=r["collective"], r=ranks)
        size = int(r["bytes_per_rank"])
        chunk = size // input_chunks(plan)
        rows.append(dict(machine=f"{ranks} ranks on {devices} GPU(s)",
                         devices=devices,
                         source=os.path.basename(path),
                         collective=r["collective"], size=size,
                         variant=r["variant"], executor=executor,
                         us=float(r["median_us"]),
                         x=features(plan, executor, devices, chunk)))

def pick_table(rows):
    """Per (machine, collective, size): measured best vs the predicted best."""
    groups = defaultdict(list)
    for r in rows:
        groups[(r["machine"], r["collective"], r["size"])].append(r)
    lines = ["| machine | collective | bytes/rank | measured best | us | "
             "predicted best | its measured us | pick / best |",
             "|---|---|---|---|---|---|---|---|"]
    hits, regrets = 0, []
    for key in sorted(groups):
        g = groups[key]
        best = min(g, key=lambda r: r["us"])
        pick = min(g, key=lambda r: r["pred"])
        hits += pick is best
        regrets.append(pick["us"] / best["us"])
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {best['variant'][5:]} | "
                     f"{best['us']:.1f} | {pick['variant'][5:]} | {pick['us']:.1f} | "
                     f"{pick['us'] / best['us']:.2f}x |")
    return groups, hits, regrets, lines


if evaluate:
    for r in rows:
        table = evaluate.get("by_devices", {}).get(str(r["devices"]), evaluate)
        c = table["executors"][r["executor"]]["coefficients"]
        r["pred"] = float(np.dot([c[f] for f in FEATURES], r["x"]))
    groups, hits, regrets, lines = pick_table(rows)
    summary = (f"Out of sample (profile fitted on {', '.join(evaluate['sources'])}): "
               f"pick = measured best in {hits} of {len(groups)} cases; the pick "
               f"was on average {np.mean(regrets):.2f}x and at worst "
               f"{max(regrets):.2f}x the measured best time.")
    with open(report_out, "w") as f:
        f.write("# NVIDIA cost model on results it was not fitted on\n\n")
        f.write(f"Results: {', '.join(os.path.basename(c) for c in csvs)}.\n\n")
        f.write(summary + "\n\n" + "\n".join(lines) + "\n")
    print(summary)
    sys.exit(0)


def fit(sel):
    X = np.array([r["x"] for r in sel])
    y = np.array([r["us"] for r in sel])
    w = 1.0 / y
    coef, _ = nnls(X * w[:, None], y * w)
    return coef


def fit_executors(sel_rows, key):
    """One coefficient set per executor; each row's prediction into r[key]."""
    entries = {}
    for executor in ["ldst", "ce", "ce-batch", "ce-graph"]:
        sel = [r for r in sel_rows if r["executor"] == executor]
        if not sel:
            continue
        X = np.array([r["x"] for r in sel])
        y = np.array([r["us"] for r in sel])
        coef = fit(sel)
        pred = X @ coef
        rel = np.abs(pred - y) / y
        entry = {"coefficients": {f: round(float(c), 6)
                                  for f, c in zip(FEATURES, coef)},
                 "fit": {"points": len(sel),
                         "median_relative_error": round(float(np.median(rel)), 3),
                         "max_relative_error": round(float(np.max(rel)), 3)}}
        for f, name in (("local_GB", "local_GBps"), ("peer_GB", "peer_GBps"),
                        ("queue_GB", "queue_GBps")):
            c = entry["coefficients"][f]
            entry["fit"][name] = round(1e6 / c, 1) if c > 0 else None
        entries[executor] = entry
        for r, p in zip(sel, pred):
            r[key] = float(p)
    return entries


sizes = sorted({r["devices"] for r in rows})
profile = {"target": "NVIDIA H200 (one GPU; two and four GPUs over NVLink)",
           "model": "time_us = sum(coefficient x feature), per executor; "
                    "see runtime/include/sdma/runtime/NvTimingModel.h; "
                    "by_devices: a fit per GPU count, used where the count "
                    "matches, else executors (all sizes together)",
           "sources": sorted({r["source"] for r in rows}),
           "fitted_by": "bench/fit_nvidia.py (non-negative least squares on "
                        "relative error)",
           "executors": fit_executors(rows, "pred_joint"),
           "by_devices": {str(d): {"executors": fit_executors(
               [r for r in rows if r["devices"] == d], "pred")}
               for d in sizes}}
# The communicator's extra cost per path is bench/fit_comm.py's: kept.
try:
    with open(profile_out) as f:
        kept = json.load(f).get("communicator")
    if kept:
        profile["communicator"] = kept
except (OSError, ValueError):
    pass
with open(profile_out, "w") as f:
    json.dump(profile, f, indent=1)
    f.write("\n")

# How often was the pick the measured best? With the joint fit first (what
# a GPU count without its own fit gets), then with each size's own fit.
for r in rows:
    r["pred_size"] = r["pred"]
    r["pred"] = r["pred_joint"]
_, joint_hits, joint_regrets, _ = pick_table(rows)
for r in rows:
    r["pred"] = r["pred_size"]
groups, hits, regrets, lines = pick_table(rows)
# Held out: each group's pick from coefficients fitted without it (on the
# same GPU count).
cv_hits, cv_regrets = 0, []
for key in sorted(groups):
    g = groups[key]
    d = g[0]["devices"]
    rest = [r for r in rows if r["devices"] == d and
            (r["machine"], r["collective"], r["size"]) != key]
    coefs = {e: fit([r for r in rest if r["executor"] == e])
             for e in {r["executor"] for r in g}}
    pick = min(g, key=lambda r: float(np.dot(coefs[r["executor"]], r["x"])))
    best = min(g, key=lambda r: r["us"])
    cv_hits += pick is best
    cv_regrets.append(pick["us"] / best["us"])
summary = (f"With a fit per GPU count ({', '.join(map(str, sizes))}): pick = "
           f"measured best in {hits} of {len(groups)} cases; the pick was on "
           f"average {np.mean(regrets):.2f}x and at worst {max(regrets):.2f}x "
           f"the measured best time. Held out (each point picked by a fit "
           f"without it): {cv_hits} of {len(groups)}, on average "
           f"{np.mean(cv_regrets):.2f}x, at worst {max(cv_regrets):.2f}x. "
           f"With one fit over all sizes: {joint_hits} of {len(groups)}, "
           f"{np.mean(joint_regrets):.2f}x on average, "
           f"{max(joint_regrets):.2f}x at worst.")
fits = ["| GPUs | executor | points | median rel. error | max rel. error | "
        + " | ".join(FEATURES) + " |",
        "|---|---|---|---|---|" + "---|" * len(FEATURES)]
tables = [(d, profile["by_devices"][d]["executors"]) for d in profile["by_devices"]]
tables.append(("all", profile["executors"]))
for d, e, entry in [(d, e, entry) for d, t in tables for e, entry in t.items()]:
    fits.append(f"| {d} | {e} | {entry['fit']['points']} | "
                f"{entry['fit']['median_relative_error']:.2f} | "
                f"{entry['fit']['max_relative_error']:.2f} | "
                + " | ".join(f"{entry['coefficients'][f]:.4g}" for f in FEATURES)
                + " |")
with open(report_out, "w") as f:
    f.write("# NVIDIA cost model: fit and pick accuracy\n\n")
    f.write("Coefficients in us per unit of each feature (GB for bytes).\n\n")
    f.write("\n".join(fits) + "\n\n" + summary + "\n\n" + "\n".join(lines) + "\n")
print(summary)
