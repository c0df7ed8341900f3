#!/usr/bin/env python3
"""Translation validation of the lowering pipeline: compiles every schedule
for many rank counts, in every DMA variant, with and without prelaunch,
through `sdma-lower-dma verify-each=1`, which re-proves the schedule
(sdma-verify: races, deadlocks, postcondition) after every step, the
engine-level output of sdma-insert-sync and sdma-batch included. Any
diagnostic (a failed proof, or a pass that left a schedule unchanged) is a
failure.

usage: verify_each.py SDMA_OPT SCHEDULE...
"""
import subprocess
import sys

sdma_opt, schedules = sys.argv[1], sys.argv[2:]
failures, runs = [], 0
for schedule in schedules:
    for ranks in [2, 3, 4, 5, 7, 8, 16]:
        for variant in ["pcpy", "bcst", "swap", "b2b"]:
            for prelaunch in [0, 1]:
                options = (f"ranks={ranks} variant={variant} "
                           f"prelaunch={prelaunch} verify-each=1")
                result = subprocess.run(
                    [sdma_opt, schedule, f"--sdma-lower-dma={options}",
                     "-o", "/dev/null"], capture_output=True, text=True)
                runs += 1
                if result.returncode != 0 or result.stderr.strip():
                    failures.append(f"{schedule} {options}: "
                                    + result.stderr.strip()[:600])
for failure in failures:
    print("FAIL", failure)
print(f"{runs} compilations re-proved after every pass, "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
