#!/usr/bin/env python3
"""Compiles every schedule for many rank counts in every DMA variant, runs
each plan on the CPU simulator (deterministic, and adversarial orders) and
checks every output byte; then runs the same compilation's AMD SDMA packet
program (ATOMIC completion at even rank counts, FENCE at odd) on the packet
simulator, round robin and two random interleavings at two chunk sizes, and
compares every byte of every buffer with the reference simulator.

usage: run_all.py BIN_DIR SCHEDULE...
"""
import os
import subprocess
import sys
import tempfile

bin_dir, schedules = sys.argv[1], sys.argv[2:]
ranks = [2, 3, 4, 5, 7, 8, 16]
variants = ["pcpy", "bcst", "swap", "b2b"]
failures = []
runs = 0
with tempfile.TemporaryDirectory() as tmp:
    for schedule in schedules:
        name = os.path.splitext(os.path.basename(schedule))[0]
        for r in ranks:
            for variant in variants:
                prelaunch = ["--prelaunch"] if r % 2 else []
                plan = os.path.join(tmp, f"{name}-{r}-{variant}.json")
                packets = os.path.join(tmp, f"{name}-{r}-{variant}.pk.json")
                completion = "fence" if r % 2 else "atomic"
                command = [os.path.join(bin_dir, "sdma-run"), schedule,
                           f"--ranks={r}", f"--variant={variant}", "-b", "1K",
                           "-e", "64K", "-f", "8", "--iters=1", "--backend=sim",
                           f"--emit-plan={plan}", f"--emit-packets={packets}",
                           f"--packet-completion={completion}"] + prelaunch
                result = subprocess.run(command, capture_output=True, text=True)
                runs += 1
                tag = f"{name} ranks={r} variant={variant}"
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
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
