#!/usr/bin/env python3
"""Compiles the load/store kernel of every schedule for NVIDIA and AMD
without a GPU: NVRTC for sm_90, hipRTC for gfx90a, clang-22 for gfx942;
each schedule's program as emitted (specialised) and its table kernel
with SDMA_STAGED_OPS.

usage: compile_all.py BIN_DIR TARGET SCHEDULE...   TARGET: nvrtc|hiprtc|clang
"""
import os
import subprocess
import sys
import tempfile

bin_dir, target, schedules = sys.argv[1], sys.argv[2], sys.argv[3:]
failures = []
compiled = 0
with tempfile.TemporaryDirectory() as tmp:
    for schedule in schedules:
        name = os.path.splitext(os.path.basename(schedule))[0]
        for ranks in (2, 8):
            program = os.path.join(tmp, f"{name}-{ranks}.hip")
            text = open(schedule).read()
            # An MoE schedule: 3 local experts, groups padded to 4 rows.
            unroll = f"ranks={ranks}" + (" experts=3 major-align=4"
                                         if "sdma.experts" in text else "")
            if "sdma.copyv" in text or "sdma.reduce" in text:
                # Run-time counts or reductions: no DMA plan, so no sdma-run;
                # the program straight from the unrolled schedule.
                run = subprocess.run(
                    f"{bin_dir}/sdma-opt {schedule} --sdma-unroll='{unroll}'"
                    f" | {bin_dir}/sdma-translate --sdma-to-hip -o {program}",
                    shell=True, capture_output=True, text=True)
            else:
                run = subprocess.run(
                    [os.path.join(bin_dir, "sdma-run"), schedule,
                     f"--ranks={ranks}", "--backend=sim", "-b", "1K", "-e", "1K",
                     "--iters=1", f"--emit-hip={program}"],
                    capture_output=True, text=True)
            if run.returncode:
                failures.append(f"{name}-{ranks}: sdma-run: {run.stderr[-300:]}")
                continue
            # The program as emitted (specialised where the schedule allows),
            # then the same schedule's table kernel with SDMA_STAGED_OPS.
            table = os.path.join(tmp, f"{name}-{ranks}.table.hip")
            run = subprocess.run(
                f"{bin_dir}/sdma-opt {schedule} --sdma-unroll='{unroll}'"
                f" | {bin_dir}/sdma-translate --sdma-to-hip"
                f" --sdma-hip-table-kernel -o {table}",
                shell=True, capture_output=True, text=True)
            if run.returncode:
                failures.append(f"{name}-{ranks}: table kernel: {run.stderr[-300:]}")
                continue
            tool = os.path.join(bin_dir, "sdma-ldst-compile")
            for program, staged in ((program, []), (table, ["--staged"])):
                if target == "nvrtc":
                    command = [tool, program, "--nvrtc=sm_90"] + staged
                elif target == "hiprtc":
                    command = [tool, program, "--hiprtc=gfx90a"] + staged
                else:
                    source = os.path.join(tmp, f"{name}-{ranks}-clang.hip")
                    with open(source, "w") as out:
                        subprocess.run([tool, program, "--print=hip-clang"] + staged,
                                       stdout=out, check=True)
                    command = ["clang-22", "-x", "hip", "-nogpulib", "-nogpuinc",
                               "--offload-arch=gfx942", "--offload-device-only",
                               "-O3", "-S", source, "-o",
                               os.path.join(tmp, f"{name}-{ranks}.s")]
                result = subprocess.run(command, capture_output=True, text=True)
                if result.returncode:
                    failures.append(f"{name}-{ranks}{staged}: {result.stderr[-600:]}")
                    continue
                if target == "clang":
                    asm = open(os.path.join(tmp, f"{name}-{ranks}.s")).read()
                    if "sdma_ldst" not in asm or "dwordx4" not in asm:
                        failures.append(f"{name}-{ranks}: no sdma_ldst kernel with "
                                        "16-byte accesses in the gfx942 assembly")
                        continue
                compiled += 1
print(f"{target}: compiled {compiled} kernels")
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
