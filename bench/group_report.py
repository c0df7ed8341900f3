#!/usr/bin/env python3
"""Groups over several communicators: one thread making every rank's call
in a group (one launch for the ranks sharing the GPU) against ranks as
threads (a launch each) and the in-process executor, from one GPU run's log.

  bench/group_report.py LOG OUT_STEM [--device=TEXT]

LOG sections ("== NAME", then the bench's CSV rows op,ranks,bytes,us,host):
  "group R" (sdma-comm-test --case=bench --group-ranks=R), "group R one
  stream" (SDMA_BENCH_ONE_STREAM=1), "group R no probe" (SDMA_GROUP_PROBE=0:
  every call on its communicator's thread, as before), "threads R" (--threads-as-ranks=R) and
  "in-process" (--case=baseline: every rank count). Writes OUT_STEM.csv (a
  row per op, ranks, bytes and mode), OUT_STEM.md (each mode against the
  in-process executor of the same run) and OUT_STEM.png.
"""
import argparse
import re
import sys

MODES = ["group", "group one stream", "group no probe", "threads",
         "in-process"]


def parse(text):
    """{(op, ranks, bytes): {mode: us}}"""
    data, mode, want = {}, None, None
    for line in text.splitlines():
        m = re.match(r"== (group|threads) (\d+)( one stream| no probe)?\s*$", line)
        if m:
            mode = m.group(1) + (m.group(3) or "")
            want = int(m.group(2))
            continue
        if line.startswith("== in-process"):
            mode, want = "in-process", None
            continue
        if line.startswith("=="):
            mode = None
            continue
        p = line.split(",")
        if mode and len(p) == 5 and p[0] in ("allgather", "alltoall"):
            ranks = int(p[1])
            if want is not None and ranks != want:
                continue
            data.setdefault((p[0], ranks, int(p[2])), {})[mode] = float(p[3])
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("out")
    ap.add_argument("--device", default="one GPU")
    a = ap.parse_args()
    data = parse(open(a.log).read())
    keys = sorted(k for k in data if len(data[k]) > 1)
    if not keys:
        sys.exit("no group rows beside a baseline in " + a.log)
    with open(a.out + ".csv", "w") as f:
        f.write("op,ranks,bytes,mode,us_per_call\n")
        for op, ranks, b in keys:
            for mode in MODES:
                if mode in data[(op, ranks, b)]:
                    f.write("%s,%d,%d,%s,%.2f\n" %
                            (op, ranks, b, mode, data[(op, ranks, b)][mode]))
    with open(a.out + ".md", "w") as f:
        f.write("# Groups over several communicators, %s\n\n" % a.device)
        f.write("Per call, median of 5 x N back-to-back calls then one wait "
                "(sdma-comm-test's bench), every mode in the same run. "
                "`group`: one thread makes every rank's call between "
                "sdmaGroupStart and sdmaGroupEnd (a stream per rank; "
                "`one stream`: all on one; `no probe`: SDMA_GROUP_PROBE=0, "
                "every call handed to its communicator's thread, as before "
                "replayed calls were made on the ending thread); `threads`: a thread per rank, "
                "each its own call; `in-process`: the executor's one launch "
                "for every rank. Ratios are to the in-process executor.\n\n")
        f.write("| op | ranks | bytes | group us | one stream us | no probe us "
                "| threads us | in-process us | group / in-process "
                "| one stream / in-process | threads / in-process "
                "|\n|---|---|---|---|---|---|---|---|---|---|---|\n")
        for op, ranks, b in keys:
            row = data[(op, ranks, b)]
            base = row.get("in-process")

            def cell(mode):
                return "%.2f" % row[mode] if mode in row else "-"

            def ratio(mode):
                if mode not in row or not base:
                    return "-"
                return "%.2fx" % (row[mode] / base)
            f.write("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s "
                    "|\n" %
                    (op, ranks, b, cell("group"), cell("group one stream"),
                     cell("group no probe"), cell("threads"),
                     cell("in-process"), ratio("group"),
                     ratio("group one stream"), ratio("threads")))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rankset = sorted({k[1] for k in keys})
    fig, axes = plt.subplots(2, len(rankset), figsize=(5 * len(rankset), 7),
                             squeeze=False)
    for i, op in enumerate(("allgather", "alltoall")):
        for j, ranks in enumerate(rankset):
            ax = axes[i][j]
            sizes = sorted(k[2] for k in keys if k[0] == op and k[1] == ranks)
            for mode in MODES:
                ys = [data[(op, ranks, b)].get(mode) for b in sizes]
                pts = [(b, y) for b, y in zip(sizes, ys) if y is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            marker="o", label=mode,
                            color="C%d" % MODES.index(mode))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title("%s, %d ranks on one GPU" % (op, ranks))
            ax.set_xlabel("bytes per call (all ranks' output)")
            ax.set_ylabel("us per call")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("Groups over several communicators, " + a.device)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)


if __name__ == "__main__":
    main()
