#!/usr/bin/env python3
"""The NCCL drop-in's cost per call (issue 37 item 7): nccl-tests through
libsdma-nccl.so (LD_PRELOAD) beside sdma's own C API and the real NCCL, all
at world size 1 on one GPU in one run (scripts/gpu-shim-bench.sh).

Inputs in DIR:
  capi.csv           sdma-comm-test --case=bench (op,ranks,bytes,us_per_call:
                     ITERS calls back to back, one wait, median of 5)
  shim-OP.txt        nccl-tests OP_perf under LD_PRELOAD, -N cycles
                     (cudaMalloc'd buffers: staged through sdma's
                     symmetric memory, a copy in and out per call)
  shim-OP-registered.txt  the same with -R 2 (ncclMemAlloc'd buffers
                     registered as symmetric windows: run in place)
  nccl-OP.txt        the same binary on the real NCCL
for OP in allgather (all_gather_perf) and alltoall (alltoall_perf).
nccl-tests times ITERS launches back to back and one synchronize per cycle;
the median over the cycles of the out-of-place time is taken.

Writes OUT.csv (op,bytes,capi_us,registered_us,staged_us,nccl_us,
overhead_us: registered - C API), OUT.md (the table and the target: the
drop-in on registered buffers within 1 us of the C API) and OUT.png.

usage: shim_bench.py DIR OUT_PREFIX [GPU_NAME]
"""
import csv
import statistics
import sys
from collections import defaultdict


def nccl_tests(path):
    """bytes -> median out-of-place us over the cycles; every #wrong 0 or N/A."""
    times = defaultdict(list)
    for line in open(path):
        f = line.split()
        if len(f) < 13 or line.startswith("#") or not f[0].isdigit():
            continue
        if f[8] not in ("0", "N/A") or f[12] not in ("0", "N/A"):
            sys.exit(f"{path}: wrong results at {f[0]} bytes")
        times[int(f[0])].append(float(f[5]))
    return {b: statistics.median(t) for b, t in times.items()}


def main():
    src, out = sys.argv[1], sys.argv[2]
    gpu = sys.argv[3] if len(sys.argv) > 3 else "one GPU"
    capi = defaultdict(dict)
    for r in csv.DictReader(open(f"{src}/capi.csv")):
        if int(r["ranks"]) == 1:
            capi[r["op"]][int(r["bytes"])] = float(r["us_per_call"])
    rows = []
    for op in ("allgather", "alltoall"):
        staged = nccl_tests(f"{src}/shim-{op}.txt")
        registered = nccl_tests(f"{src}/shim-{op}-registered.txt")
        real = nccl_tests(f"{src}/nccl-{op}.txt")
        for b in sorted(capi[op]):
            if b in staged and b in registered and b in real:
                rows.append({"op": op, "bytes": b, "capi_us": capi[op][b],
                             "registered_us": registered[b],
                             "staged_us": staged[b], "nccl_us": real[b],
                             "overhead_us":
                                 round(registered[b] - capi[op][b], 2)})
    if not rows:
        sys.exit("no size measured by all three")
    with open(f"{out}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    worst = max(r["overhead_us"] for r in rows)
    with open(f"{out}.md", "w") as f:
        f.write(f"# The NCCL drop-in's cost per call, world size 1, {gpu}\n\n"
                "nccl-tests (`-c 0`, cycles of back-to-back calls, median "
                "cycle) through `libsdma-nccl.so` on registered buffers "
                "(`-R 2`: ncclMemAlloc, symmetric windows, run in place) and "
                "on cudaMalloc'd ones (staged: a copy into sdma's symmetric "
                "memory and one out per call), sdma's C API "
                "(`sdma-comm-test --case=bench`, median of 5 x ITERS "
                "back-to-back calls) and the real NCCL under the same "
                "nccl-tests binary, one run (`scripts/gpu-shim-bench.sh`).\n\n"
                "| op | bytes | C API us | drop-in, registered us | "
                "drop-in, staged us | NCCL us | registered - C API us |\n"
                "|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['op']} | {r['bytes']} | {r['capi_us']:.2f} | "
                    f"{r['registered_us']:.2f} | {r['staged_us']:.2f} | "
                    f"{r['nccl_us']:.2f} | {r['overhead_us']:+.2f} |\n")
        f.write(f"\nTarget: the drop-in on registered buffers within 1 us "
                f"of the C API per call: "
                f"**{'met' if worst <= 1.0 else 'not met'}** (worst "
                f"{worst:+.2f} us).\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, op in zip(axes, ("allgather", "alltoall")):
        pts = [r for r in rows if r["op"] == op]
        for key, label in (("capi_us", "sdma C API"),
                           ("registered_us", "drop-in, registered buffers"),
                           ("staged_us", "drop-in, cudaMalloc (staged)"),
                           ("nccl_us", "NCCL")):
            ax.plot([r["bytes"] for r in pts], [r[key] for r in pts],
                    marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes (output)")
        ax.set_ylabel("us per call")
        ax.set_title(f"{op}, world size 1, {gpu}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}.png", dpi=110)


if __name__ == "__main__":
    main()
