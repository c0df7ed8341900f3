#!/usr/bin/env python3
"""Replays every input in a folder through sdma-opt and sdma-translate.

Each must end with exit status 0 or 1 within the time limit: a signal (crash,
ASan abort) or a hang fails the test. Files named malformed-* must be
rejected: exit status 1 and an 'error:' diagnostic on stderr.

usage: replay.py BIN_DIR INPUT_DIR
"""
import os
import subprocess
import sys

bin_dir, input_dir = sys.argv[1], sys.argv[2]
commands = [
    [os.path.join(bin_dir, "sdma-opt"), "--sdma-unroll=ranks=4", "-canonicalize"],
    [os.path.join(bin_dir, "sdma-translate"), "--sdma-to-json"],
]
failures = []
names = sorted(os.listdir(input_dir))
for name in names:
    path = os.path.join(input_dir, name)
    for command in commands:
        try:
            result = subprocess.run(command + [path], capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            failures.append(f"{name}: {command[0]} timed out")
            continue
        tool = os.path.basename(command[0])
        if result.returncode not in (0, 1):
            failures.append(f"{name}: {tool} exited with {result.returncode}")
        elif name.startswith("malformed-") and (
            result.returncode != 1 or b"error:" not in result.stderr
        ):
            failures.append(f"{name}: {tool} accepted a malformed input")
print(f"replayed {len(names)} inputs")
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
