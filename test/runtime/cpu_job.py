"""Compiles every schedule and example for 2, 3, 4 and 8 ranks and runs each
as a job of that many processes with sdma-cpu-job; prints one line per job
and a summary (the lit test checks the summary).

usage: cpu_job.py BIN_DIR SCHEDULE_DIR EXAMPLE_DIR OUT_DIR"""
import glob
import os
import subprocess
import sys

bin_dir, schedules, examples, out = sys.argv[1:5]
# Schedules with run-time counts (sdma.copyv) or reductions (sdma.reduce)
# have no plan for the simulator to check against: comm-alltoallv.test and
# comm-reduce.test run them through the communicator.
sources = [s for s in sorted(glob.glob(os.path.join(schedules, "*.mlir")))
           if "sdma.copyv" not in open(s).read()
           and "sdma.reduce" not in open(s).read()] + [
    os.path.join(examples, "tree_broadcast.mlir")]
jobs = passed = 0
for source in sources:
    name = os.path.splitext(os.path.basename(source))[0]
    for ranks in (2, 3, 4, 8):
        base = os.path.join(out, f"{name}-{ranks}")
        subprocess.run([os.path.join(bin_dir, "sdma-run"), source,
                        f"--ranks={ranks}", "-b", "1K", "-e", "1K",
                        "--iters=1", "--backend=sim",
                        f"--emit-plan={base}.json", f"--emit-hip={base}.hip"],
                       check=True, stdout=subprocess.DEVNULL)
        job = subprocess.run([os.path.join(bin_dir, "sdma-cpu-job"),
                              f"--ranks={ranks}", "--sizes=1K,16K",
                              "--runs=2", "--timeout-ms=60000",
                              base + ".json", base + ".hip"],
                             capture_output=True, text=True, timeout=300)
        ok = job.returncode == 0 and f"PASSED: {ranks} processes" in job.stdout
        checked = job.stdout.count(" 0 differ from the simulator")
        # every rank, both sizes, both runs
        ok = ok and checked == ranks * 2 * 2
        jobs += 1
        passed += ok
        print(f"{'ok  ' if ok else 'FAIL'} {name} {ranks} processes: "
              f"{checked} rank-runs byte-checked")
        if not ok:
            print(job.stdout[-2000:], job.stderr[-2000:])
print(f"{jobs} jobs, {passed} passed")
