#!/usr/bin/env python3
"""Splits each hierarchical schedule across nodes at several (nodes, local
ranks) shapes and runs the split program symbolically, as the runtime runs
it: phase by phase, a local phase as each node's part (a schedule of G
ranks, re-proved by sdma-verify, its ranks shifted back by node * G), a
network phase as every transfer at once (all read before any writes). Each
chunk is the sorted tuple of the input chunks summed into it (one, until a
reduce adds another's); the collective the schedule declares is then
checked on every rank, chunk by chunk.

usage: run_node_plans.py BIN_DIR SCHEDULE...
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "diff"))
import sdmair  # noqa: E402

SHAPES = [(2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (2, 4), (1, 4)]


def run(cmd, stdin=None):
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + result.stderr.strip()[-600:])
    return result.stdout


def expected(kind, rank, ranks, sizes, inp, out):
    """The output tokens a collective leaves on `rank`."""
    if kind == "all_gather":
        c = sizes[inp]
        return [((p, inp, i),) for p in range(ranks) for i in range(c)]
    if kind == "all_to_all":
        c = sizes[out] // ranks
        return [((p, inp, rank * c + i),) for p in range(ranks) for i in range(c)]
    if kind == "reduce_scatter":
        c = sizes[out]
        return [tuple((p, inp, rank * c + i) for p in range(ranks))
                for i in range(c)]
    if kind == "all_reduce":
        return [tuple((p, inp, i) for p in range(ranks))
                for i in range(sizes[out])]
    raise ValueError("unchecked collective " + kind)


def check(bin_dir, schedule, nodes, local):
    ranks = nodes * local
    flat = run([os.path.join(bin_dir, "sdma-opt"), schedule,
                f"--sdma-unroll=ranks={ranks} local-ranks={local}"])
    plan = json.loads(run([os.path.join(bin_dir, "sdma-translate"),
                           "--sdma-to-node-plan"], flat))
    assert plan["nodes"] == nodes and plan["local_ranks"] == local
    sizes = {b["name"]: b["chunks"] for b in plan["buffers"]}
    mem = {(r, b): [((r, b, i),) for i in range(n)]
           for r in range(ranks) for b, n in sizes.items()}
    network = 0
    for phase in plan["phases"]:
        if phase["kind"] == "network":
            moves = []
            for t in phase["transfers"]:
                s, d = t["src"], t["dst"]
                assert s["rank"] // local != d["rank"] // local, t
                data = mem[(s["rank"], s["buffer"])][s["offset"]:s["offset"] + s["count"]]
                moves.append((d, data))
                network += 1
            for d, data in moves:
                mem[(d["rank"], d["buffer"])][d["offset"]:d["offset"] + d["count"]] = data
            continue
        assert len(phase["schedules"]) == nodes
        for node, text in enumerate(phase["schedules"]):
            if not text:
                continue
            run([os.path.join(bin_dir, "sdma-opt"), "--sdma-verify", "-"], text)
            head, ops = sdmair.parse_flat(text)
            assert head["ranks"] == local
            base = node * local
            for op in ops:
                if op["op"] not in ("copy", "reduce"):
                    continue
                s, d = op["src"], op["dst"]
                data = mem[(s[0] + base, s[1])][s[2]:s[2] + s[3]]
                dst = mem[(d[0] + base, d[1])]
                if op["op"] == "reduce":
                    data = [tuple(sorted(a + b))
                            for a, b in zip(dst[d[2]:d[2] + d[3]], data)]
                dst[d[2]:d[2] + d[3]] = data
    coll = plan["collective"]
    wrong = 0
    for r in range(ranks):
        want = expected(coll["kind"], r, ranks, sizes, coll["input"], coll["output"])
        wrong += sum(1 for a, b in zip(mem[(r, coll["output"])], want) if a != b)
    return wrong, network


failures, runs = [], 0
bin_dir, schedules = sys.argv[1], sys.argv[2:]
for schedule in schedules:
    name = os.path.splitext(os.path.basename(schedule))[0]
    for nodes, local in SHAPES:
        try:
            wrong, network = check(bin_dir, schedule, nodes, local)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name} {nodes}x{local}: {e}")
            continue
        runs += 1
        print(f"{name} {nodes}x{local}: {network} network transfers, "
              f"{wrong} wrong chunks")
        if wrong:
            failures.append(f"{name} {nodes}x{local}: {wrong} wrong chunks")
print(f"{runs} split programs run")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
