#!/usr/bin/env python3
"""Writes a copy of a DMA plan whose first cross-queue poll (flag >= 2) asks
for one notify more than ever comes: the plan can never complete. The GPU
fault scripts use it to check that executors refuse or report it.

usage: make-stuck-plan.py PLAN.json OUT.json
"""
import json
import sys

plan = json.load(open(sys.argv[1]))
for stream in plan["streams"]:
    polls = [op for op in stream["ops"] if op["op"] == "poll" and op["flag"] >= 2]
    if polls:
        polls[0]["value"] += 1
        break
else:
    sys.exit(f"{sys.argv[1]}: no cross-queue poll to raise")
json.dump(plan, open(sys.argv[2], "w"))
