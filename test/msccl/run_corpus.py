#!/usr/bin/env python3
"""Imports every MSCCL XML algorithm of the corpus (schedules/msccl), proves
it (sdma-verify: race-free, no deadlock, the declared collective), lowers it
to the load/store kernel (HIP source) and, where it only moves data, to a
DMA plan and AMD SDMA packets; runs it on the reference simulator (moving
data), the packet simulator (checked against it) and the load/store kernel
on the CPU (every algorithm; reductions checked by the exact evaluator),
every output byte checked at three sizes. Then the wrong algorithms
(schedules/msccl/wrong): each must be rejected, by the import (a deadlock)
or by the proof (a race, a wrong chunk), with the XML line named.

usage: run_corpus.py BIN_DIR CORPUS_DIR
"""
import glob
import os
import subprocess
import sys
import tempfile

bin_dir, corpus = sys.argv[1], sys.argv[2]
failures = []
counts = {"imported": 0, "proved": 0, "hip": 0, "sim": 0, "packets": 0,
          "ldst-cpu": 0}


def tool(name, *args):
    return subprocess.run([os.path.join(bin_dir, name)] + list(args),
                          capture_output=True, text=True)


def all_zero(stdout):
    rows = [l for l in stdout.splitlines() if l.strip() and
            not l.startswith("#")]
    return rows and all(l.split()[-1] == "0" for l in rows)


with tempfile.TemporaryDirectory() as tmp:
    for xml in sorted(glob.glob(os.path.join(corpus, "*.xml"))):
        name = os.path.splitext(os.path.basename(xml))[0]
        mlir = os.path.join(tmp, name + ".mlir")
        r = tool("sdma-translate", "--import-msccl-xml", xml, "-o", mlir)
        if r.returncode:
            failures.append("%s: import: %s" % (name, r.stderr[-400:]))
            continue
        counts["imported"] += 1
        r = tool("sdma-opt", mlir, "--sdma-verify")
        if r.returncode or "remark: proved" not in r.stderr:
            failures.append("%s: verify: %s" % (name, r.stderr[-400:]))
            continue
        counts["proved"] += 1
        r = tool("sdma-translate", "--sdma-to-hip", mlir, "-o",
                 os.path.join(tmp, name + ".hip"))
        if r.returncode:
            failures.append("%s: --sdma-to-hip: %s" % (name, r.stderr[-400:]))
        else:
            counts["hip"] += 1
        with open(mlir) as f:
            reduces = "sdma.reduce" in f.read()
        sizes = ["-b", "1K", "-e", "64K", "-f", "8", "--iters=1"]
        backends = ["ldst-cpu"] if reduces else ["sim", "sdma-packets",
                                                 "ldst-cpu"]
        for backend in backends:
            extra = ["--sdma-target=gfx942"] if backend == "sdma-packets" \
                else []
            r = tool("sdma-run", mlir, "--backend=" + backend, *sizes, *extra)
            if r.returncode or not all_zero(r.stdout):
                failures.append("%s on %s: %s %s" % (
                    name, backend, r.stdout[-300:], r.stderr[-300:]))
                continue
            counts["packets" if backend == "sdma-packets" else backend] += 1
    rejected = 0
    for xml in sorted(glob.glob(os.path.join(corpus, "wrong", "*.xml"))):
        name = os.path.splitext(os.path.basename(xml))[0]
        mlir = os.path.join(tmp, name + ".mlir")
        r = tool("sdma-translate", "--import-msccl-xml",
                 "--mlir-print-debuginfo", xml, "-o", mlir)
        why = r.stderr
        if r.returncode == 0:
            r = tool("sdma-opt", mlir, "--sdma-verify")
            why = r.stderr
            if r.returncode == 0:
                failures.append("%s: accepted, but it is wrong" % name)
                continue
        first = why.strip().splitlines()[0] if why.strip() else ""
        if os.path.basename(xml) + ":" not in first:
            failures.append("%s: rejected without naming the XML line: %s"
                            % (name, first))
            continue
        rejected += 1
        print("rejected %s: %s" % (name, first.split(": error: ", 1)[-1]))
print("%(imported)d imported, %(proved)d proved, %(hip)d lowered to HIP; "
      "runs with every byte checked: %(sim)d on the simulator, %(packets)d "
      "on the packet simulator, %(ldst-cpu)d on the load/store kernel (CPU)"
      % counts)
print("%d wrong algorithms rejected" % rejected)
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
