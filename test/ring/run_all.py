#!/usr/bin/env python3
"""GPU-initiated SDMA, simulated: compiles every schedule in every DMA
variant to an AMD SDMA packet plan (3 and 4 ranks in turn; prelaunched with
FENCE completion at 3 ranks, ATOMIC at 4; the target profiles in turn, swaps
on the targets that have them), lowers each plan to its ring writer kernel
and runs the kernel on the CPU against simulated engines (sdma-ring): in the
smallest ring the plan takes (starting one dword before its end, so it
wraps at once; engines that lag until their ring has filled, so that writers
wait for ring space whatever the thread scheduling) and in a 4 KiB ring, at two chunk sizes, every output byte
checked.

usage: run_all.py BIN_DIR SCHEDULE...
"""
import os
import re
import subprocess
import sys
import tempfile

bin_dir, schedules = sys.argv[1], sys.argv[2:]
variants = ["pcpy", "bcst", "swap", "b2b"]
targets = ["gfx9", "gfx942", "gfx950"]
failures = []
plans = runs = wrapped = pressed = outgrown = 0
per_target = {t: 0 for t in targets}
line = re.compile(r"^ok   chunk (\d+) ring (\d+): (\d+) packets, (\d+) NOPs, "
                  r"(\d+) wraps, (\d+) doorbells, (\d+) full-ring waits "
                  r"\(longest queue (\d+) bytes\)")
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, SDMA_CACHE_DIR=tmp)
    for i, schedule in enumerate(schedules):
        name = os.path.splitext(os.path.basename(schedule))[0]
        with open(schedule) as f:
            swaps = "sdma.swap" in f.read()
        for j, variant in enumerate(variants):
            r = 3 + (i + j) % 2
            target = (targets[1 + (i + j) % 2] if variant == "swap" or swaps
                      else targets[(i + j) % 3])
            packets = os.path.join(tmp, f"{name}-{r}-{variant}.json")
            command = [os.path.join(bin_dir, "sdma-run"), schedule,
                       f"--ranks={r}", f"--variant={variant}", "-b", "1K",
                       "-e", "1K", "--iters=1", "--backend=sim",
                       f"--emit-packets={packets}",
                       f"--packet-completion={'fence' if r % 2 else 'atomic'}",
                       f"--sdma-target={target}"] + (
                           ["--prelaunch"] if r % 2 else [])
            tag = f"{name} ranks={r} variant={variant} target={target}"
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode:
                failures.append(f"{tag}: sdma-run: {result.stderr[-300:]}")
                continue
            plans += 1
            per_target[target] += 1
            # A 4 KiB ring from its start; the smallest ring the plan takes,
            # starting one dword before its end (as a ring left by earlier
            # work might), so every queue's first packet wraps, with engines
            # that lag until their ring has filled (deterministic: a time
            # delay was not, on a loaded 2-core CI machine), so that writers
            # wait for ring space.
            out, oks = "", []
            for ring in (["--ring-bytes=4096"],
                         ["--ring-bytes=min", "--start-before-end=4",
                          "--engine-lag"]):
                result = subprocess.run(
                    [os.path.join(bin_dir, "sdma-ring"), packets,
                     "--chunk-bytes=64,4096", "--writers=4"] + ring,
                    capture_output=True, text=True, env=env)
                out += result.stderr + result.stdout
                oks += [m for m in map(line.match, result.stdout.splitlines())
                        if m] if result.returncode == 0 else []
            if len(oks) != 4:
                failures.append(f"{tag}: sdma-ring: {out[-500:]}")
                continue
            runs += len(oks)
            small = [m for m in oks if int(m.group(2)) < 4096]
            wrapped += all(int(m.group(5)) > 0 for m in small)
            # Writers must wait wherever a queue outgrows its ring (the
            # pad before the first packet included).
            if int(small[0].group(8)) + 4 > int(small[0].group(2)):
                outgrown += 1
                if all(int(m.group(7)) > 0 for m in small):
                    pressed += 1
                else:
                    failures.append(f"{tag}: a queue outgrows its ring but "
                                    "no writer waited for ring space")
print(f"{plans} packet plans, {runs} ring runs, every output byte checked")
print(f"smallest rings: {wrapped} of {plans} plans wrapped, "
      f"in {pressed} of the {outgrown} whose longest queue outgrows the ring "
      "writers waited for ring space")
print("plans per target: " + ", ".join(f"{t} {n}" for t, n in per_target.items()))
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
