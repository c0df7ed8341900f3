#!/usr/bin/env python3
"""Imports every MSCCL XML algorithm of the corpus (schedules/msccl), proves
it (sdma-verify: race-free, no deadlock, the declared collective), lowers it
to the load/store kernel (HIP source) and, where it only moves data, to a
DMA plan and AMD SDMA packets; runs it on the reference simulator (moving
data), the packet simulator (checked against it) and the load/store kernel
on the CPU (every algorithm; reductions checked by the exact evaluator),
every output byte checked at three sizes. Then the wrong algorithms
(schedules/msccl/wrong): each must be rejected, by the import (a deadlock)
or by the proof (a race, a wrong chunk), with the XML line named. Round
trips: each imported algorithm, and each sdma SCHEDULE unrolled at 3 and 4
ranks, written back as MSCCL XML (--sdma-to-msccl-xml), imported again,
proved and run on the load/store kernel (CPU), every byte checked.

The same for the MSCCL++ execution plans of PLANS_DIR
(--import-mscclpp-json; their round trip is through MSCCL XML too).

usage: run_corpus.py BIN_DIR CORPUS_DIR PLANS_DIR [SCHEDULE...]
"""
import glob
import os
import subprocess
import sys
import tempfile

bin_dir, corpus, plans, schedules = (sys.argv[1], sys.argv[2], sys.argv[3],
                                     sys.argv[4:])
failures = []
counts = {"imported": 0, "proved": 0, "hip": 0, "sim": 0, "packets": 0,
          "ldst-cpu": 0, "round trips": 0}


def tool(name, *args):
    return subprocess.run([os.path.join(bin_dir, name)] + list(args),
                          capture_output=True, text=True)


def all_zero(stdout):
    rows = [l for l in stdout.splitlines() if l.strip() and
            not l.startswith("#")]
    return rows and all(l.split()[-1] == "0" for l in rows)


def round_trip(tmp, name, mlir):
    """Writes `mlir` as MSCCL XML, imports it again, proves it and runs it
    on the load/store kernel."""
    xml = os.path.join(tmp, name + ".out.xml")
    again = os.path.join(tmp, name + ".again.mlir")
    r = tool("sdma-translate", "--sdma-to-msccl-xml", mlir, "-o", xml)
    if r.returncode == 0:
        r = tool("sdma-translate", "--import-msccl-xml", xml, "-o", again)
    if r.returncode == 0:
        r = tool("sdma-opt", again, "--sdma-verify")
        if r.returncode == 0 and "remark: proved" not in r.stderr:
            r.returncode = 1
    if r.returncode == 0:
        r = tool("sdma-run", again, "--backend=ldst-cpu", "-b", "1K", "-e",
                 "16K", "-f", "16", "--iters=1")
        if r.returncode == 0 and not all_zero(r.stdout):
            r.returncode = 1
    if r.returncode:
        failures.append("%s round trip: %s %s" % (name, r.stdout[-300:],
                                                  r.stderr[-300:]))
    else:
        counts["round trips"] += 1


with tempfile.TemporaryDirectory() as tmp:
    for schedule in schedules:
        base = os.path.splitext(os.path.basename(schedule))[0]
        for ranks in (3, 4):
            name = "%s-%d" % (base, ranks)
            flat = os.path.join(tmp, name + ".mlir")
            r = tool("sdma-opt", schedule, "--sdma-unroll=ranks=%d" % ranks,
                     "-o", flat)
            if r.returncode:
                failures.append("%s: unroll: %s" % (name, r.stderr[-300:]))
                continue
            round_trip(tmp, name, flat)
    inputs = [(f, "--import-msccl-xml")
              for f in sorted(glob.glob(os.path.join(corpus, "*.xml")))]
    inputs += [(f, "--import-mscclpp-json")
               for f in sorted(glob.glob(os.path.join(plans, "*.json")))]
    for xml, importer in inputs:
        name = os.path.splitext(os.path.basename(xml))[0]
        mlir = os.path.join(tmp, name + ".mlir")
        r = tool("sdma-translate", importer, xml, "-o", mlir)
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
        round_trip(tmp, name, mlir)
    rejected = 0
    wrong = [(f, "--import-msccl-xml")
             for f in sorted(glob.glob(os.path.join(corpus, "wrong", "*.xml")))]
    wrong += [(f, "--import-mscclpp-json") for f in
              sorted(glob.glob(os.path.join(plans, "wrong", "*.json")))]
    for xml, importer in wrong:
        name = os.path.splitext(os.path.basename(xml))[0]
        mlir = os.path.join(tmp, name + ".mlir")
        r = tool("sdma-translate", importer,
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
print("%d wrong algorithms and plans rejected" % rejected)
print("%d round trips through MSCCL XML proved and run" %
      counts["round trips"])
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
