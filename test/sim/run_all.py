#!/usr/bin/env python3
"""Compiles every schedule for many rank counts in every DMA variant, runs
each plan on the CPU simulator (deterministic, and adversarial orders) and
checks every output byte; then runs the same compilation's AMD SDMA packet
program (ATOMIC completion at even rank counts, FENCE at odd; built for the
SDMA target profiles in turn; swaps for gfx942 or gfx950, which have them)
on the packet simulator, round robin and two random interleavings at two
chunk sizes, and compares every byte of every buffer with the reference
simulator.

usage: run_all.py BIN_DIR SCHEDULE...
"""
import os
import subprocess
import sys
import tempfile

bin_dir, schedules = sys.argv[1], sys.argv[2:]
ranks = [2, 3, 4, 5, 7, 8, 16]
variants = ["pcpy", "bcst", "swap", "b2b"]
targets = ["gfx9", "gfx942", "gfx950"]
failures = []
runs = 0
per_target = {t: 0 for t in targets}
with tempfile.TemporaryDirectory() as tmp:
    for schedule in schedules:
        name = os.path.splitext(os.path.basename(schedule))[0]
        with open(schedule) as f:
            swaps = "sdma.swap" in f.read()
        for i, r in enumerate(ranks):
            for j, variant in enumerate(variants):
                prelaunch = ["--prelaunch"] if r % 2 else []
                plan = os.path.join(tmp, f"{name}-{r}-{variant}.json")
                packets = os.path.join(tmp, f"{name}-{r}-{variant}.pk.json")
                completion = "fence" if r % 2 else "atomic"
                # Swaps (the variant's, or the schedule's own) need gfx942
                # or gfx950.
                target = (targets[1 + (i + j) % 2]
                          if variant == "swap" or swaps
                          else targets[(i + j) % 3])
                per_target[target] += 1
                command = [os.path.join(bin_dir, "sdma-run"), schedule,
                           f"--ranks={r}", f"--variant={variant}", "-b", "1K",
                           "-e", "64K", "-f", "8", "--iters=1", "--backend=sim",
                           f"--emit-plan={plan}", f"--emit-packets={packets}",
                           f"--packet-completion={completion}",
                           f"--sdma-target={target}"] + prelaunch
                result = subprocess.run(command, capture_output=True, text=True)
                runs += 1
                tag = f"{name} ranks={r} variant={variant} target={target}"
                if result.returncode != 0:
                    failures.append(f"{tag}: sdma-run exited {result.returncode}: "
                                    + result.stderr.strip()[-400:])
                    continue
                wrong = [line for line in result.stdout.splitlines()
                         if line and not line.startswith("#")
                         and line.split()[-1] != "0"]
                if wrong:
                    failures.append(f"{tag}: wrong bytes: {wrong[0]}")
                # Adversarial orders on the same plan (odd chunk size).
                result = subprocess.run(
                    [os.path.join(bin_dir, "sdma-sim"), plan, "--adversarial",
                     "--seeds=8", "--chunk-bytes=24"],
                    capture_output=True, text=True)
                if result.returncode != 0:
                    failures.append(f"{tag}: adversarial: {result.stdout.strip()[-300:]} "
                                    f"{result.stderr.strip()[-300:]}")
                result = subprocess.run(
                    [os.path.join(bin_dir, "sdma-packet-sim"), packets,
                     f"--reference={plan}", "--seeds=3",
                     "--chunk-bytes=64,4096"],
                    capture_output=True, text=True)
                if result.returncode != 0 or result.stdout.count("ok ") != 2:
                    failures.append(f"{tag}: packets ({completion}): "
                                    f"{result.stdout.strip()[-300:]} "
                                    f"{result.stderr.strip()[-300:]}")
print(f"{runs} compilations, {runs} deterministic + {runs * 8} adversarial runs")
print(f"{runs} packet programs, {runs * 6} packet-simulator runs equal to the reference")
print("packet programs per target: " +
      ", ".join(f"{t} {n}" for t, n in per_target.items()))
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
