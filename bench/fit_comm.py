#!/usr/bin/env python3
"""What the communicator's call adds to the NVIDIA cost model's executors.

The profile (runtime/profiles/h200-nvidia.json) is fitted on the in-process
executors: one launch for every rank, no job barriers, no sync kernels. A
communicator's call adds its job barriers (load/store) or its sync kernels
and forked streams (the DMA path). This reads the C API's per-call latency
on one GPU, ranks as threads, both paths forced (sdma-comm-test --case=bench
--threads-as-ranks=N, SDMA_PATH=ldst|dma, SDMA_LL_BYTES=0), predicts the
same calls with the profile's one-GPU fit (sdma-predict on the precompiled
pcpy plans), and takes the median of measured - predicted over the calls of
at most --max-bytes at --ranks (default 1 and 2: the fewest ranks sharing
the GPU) as each path's extra. With --write it stores them in the
profile's "communicator" section, which PathChoice.cpp adds to its
predictions.

  bench/fit_comm.py LOG PLAN_DIR [--predict=build/bin/sdma-predict]
      [--profile=runtime/profiles/h200-nvidia.json] [--write] [--md=OUT.md]
      [--csv=OUT.csv]

LOG: the GPU run's output, whose sections start "# C API N ranks as
threads, path P" (or "## N ranks, P", the older logs') and hold the bench's
CSV rows (op,ranks,bytes,us[,host_us]).
"""
import argparse
import csv
import io
import json
import re
import statistics
import subprocess
import sys

PLANS = {"allgather": "all_gather_direct", "alltoall": "all_to_all_direct"}


def sections(text):
    """{(ranks, path): [(op, bytes, us)]} from the log."""
    out, key = {}, None
    for line in text.splitlines():
        m = (re.match(r"# C API (\d+) ranks as threads, path (\w+)", line) or
             re.match(r"## (\d+) ranks, (\w+)$", line))
        if m:
            key = (int(m.group(1)), m.group(2))
            out[key] = []
            continue
        if line.startswith("#"):
            key = None  # another section ("== step" lines are inside one)
            continue
        parts = line.split(",")
        if key and len(parts) in (4, 5) and parts[0] in PLANS:
            out[key].append((parts[0], int(parts[2]), float(parts[3])))
    return out


def predict(tool, profile, plan, chunks, executor):
    """{chunk: us} or {} where the executor does not apply."""
    args = [tool, plan, "--executor=" + executor, "--devices=1",
            "--profile=" + profile,
            "--chunk-bytes=" + ",".join(str(c) for c in chunks)]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        if "does not apply" in run.stderr:  # ce-batch on a plan without runs
            return {}
        print("warning: %s: %s" % (" ".join(args), run.stderr.strip()),
              file=sys.stderr)
        return {}
    rows = csv.DictReader(io.StringIO(run.stdout))
    return {int(r["chunk_bytes"]): float(r["predicted_us"]) for r in rows
            if r.get("predicted_us")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("plans")
    ap.add_argument("--predict", default="build/bin/sdma-predict")
    ap.add_argument("--profile", default="runtime/profiles/h200-nvidia.json")
    ap.add_argument("--max-bytes", type=int, default=1 << 20)
    # Where the fewest ranks share the GPU: the nearest a one-GPU run comes
    # to one rank per GPU (at four, contention dominates both paths).
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--md")
    ap.add_argument("--csv")
    a = ap.parse_args()
    data = sections(open(a.log).read())
    if not data:
        sys.exit("no '# C API N ranks as threads, path P' sections in " + a.log)
    rows, extra = [], {"ldst": [], "dma": []}
    fitted = {int(r) for r in a.ranks.split(",")}
    for (ranks, path), points in sorted(data.items()):
        for op in PLANS:
            mine = [(b, us) for o, b, us in points
                    if o == op and b <= a.max_bytes]
            if not mine:
                continue
            plan = "%s/%s-%d.pcpy.plan.json" % (a.plans, PLANS[op], ranks)
            chunks = [max(4, b // ranks // 4 * 4) for b, _ in mine]
            executors = ["ldst"] if path == "ldst" else ["ce", "ce-batch"]
            got = [predict(a.predict, a.profile, plan, chunks, e)
                   for e in executors]
            for (b, us), c in zip(mine, chunks):
                pred = [g[c] for g in got if c in g]
                if not pred:
                    continue
                p = min(pred)
                rows.append((ranks, path, op, b, us, p, us - p))
                if ranks in fitted:
                    extra[path].append(us - p)
    if not extra["ldst"] or not extra["dma"]:
        sys.exit("need points of both paths")
    ldst = max(0.0, statistics.median(extra["ldst"]))
    dma = max(0.0, statistics.median(extra["dma"]))
    note = ("median of measured - predicted (one-GPU fit) over %d load/store "
            "and %d DMA calls of at most %d bytes at %s rank(s) as threads on "
            "one GPU (bench/fit_comm.py %s)" % (
                len(extra["ldst"]), len(extra["dma"]), a.max_bytes, a.ranks,
                a.log.split("/")[-1]))
    print("ldst extra %.1f us, dma extra %.1f us" % (ldst, dma))
    if a.csv:
        with open(a.csv, "w") as f:
            w = csv.writer(f)
            w.writerow(["ranks", "path", "op", "bytes", "measured_us",
                        "predicted_us", "extra_us"])
            for r in rows:
                w.writerow(list(r[:4]) + ["%.2f" % x for x in r[4:]])
    if a.md:
        with open(a.md, "w") as f:
            f.write("| ranks | path | op | bytes | measured us | predicted us "
                    "(executor, 1 GPU) | extra us |\n|---|---|---|---|---|---|"
                    "---|\n")
            for r in rows:
                f.write("| %d | %s | %s | %d | %.1f | %.1f | %.1f |\n" % r)
            f.write("\nExtra per call: load/store %.1f us, DMA %.1f us (%s).\n"
                    % (ldst, dma, note))
    if a.write:
        profile = json.load(open(a.profile))
        profile["communicator"] = {"ldst": round(ldst, 2),
                                   "ce": round(dma, 2),
                                   "ce-batch": round(dma, 2),
                                   "measured": note}
        with open(a.profile, "w") as f:
            json.dump(profile, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
