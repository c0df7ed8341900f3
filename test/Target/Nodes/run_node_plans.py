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
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "diff"))
import sdmair  # noqa: E402

SHAPES = [(2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (2, 4), (1, 4)]
# all_to_allv: rows per chunk (a slot's capacity), and a capacity-slot
# copyv as the flat schedule prints it.
ROWS = 3
COPYV = re.compile(r'sdma\.copyv %(\w+)\[(\d+)\] on (\d+) -> %(\w+)\[(\d+)\] '
                   r'on (\d+), count %(\w+)\[(\d+)\] on (\d+) max (\d+)$')


def run(cmd, stdin=None):
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + result.stderr.strip()[-600:])
    return result.stdout


def expected(kind, rank, ranks, sizes, inp, out, root=0):
    """The output tokens a collective leaves on `rank` (its own where it
    leaves the output untouched)."""
    if kind == "broadcast":
        return [((root, inp, i),) for i in range(sizes[out])]
    if kind == "scatter":
        return [((root, inp, rank * sizes[out] + i),)
                for i in range(sizes[out])]
    if kind == "gather":
        if rank != root:
            return [((rank, out, i),) for i in range(sizes[out])]
        c = sizes[inp]
        return [((p, inp, i),) for p in range(ranks) for i in range(c)]
    if kind == "reduce":
        if rank != root:
            return [((rank, out, i),) for i in range(sizes[out])]
        return [tuple((p, inp, i) for p in range(ranks))
                for i in range(sizes[out])]
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


def plan_counts(plan, name):
    return any(b["name"] == name and b.get("counts") for b in plan["buffers"])


def copyvs(text):
    """The text without its copyv lines, and the copyvs as tuples. They run
    after the phase's other ops: right for these schedules, whose copyvs
    read nothing another op of their phase writes (the verifier proved the
    phase race-free, and a node part has no barrier inside)."""
    rest, ops = [], []
    for line in text.splitlines():
        m = COPYV.match(line.strip())
        if m:
            g = m.groups()
            ops.append(((int(g[2]), g[0], int(g[1])), (int(g[5]), g[3], int(g[4])),
                        (int(g[8]), g[6], int(g[7])), int(g[9])))
        elif line.strip().startswith("sdma.copyv"):
            raise ValueError("unchecked copyv form: " + line.strip())
        else:
            rest.append(line)
    return "\n".join(rest), ops


def run_copyv(mem, op, base):
    (sr, sb, si), (dr, db, di), (cr, cb, ci), most = op
    assert most == 1, op
    n = mem[(cr + base, cb)][ci]
    src, dst = mem[(sr + base, sb)], mem[(dr + base, db)]
    if not isinstance(n, int) or not 0 <= n <= ROWS:
        n = 0  # a bad count moves nothing (the kernel reports it)
    dst[di] = tuple(src[si][:n]) + tuple(dst[di][n:])


def check_alltoallv(mem, ranks, coll, counts):
    """Rows, their count, and nothing past the count, on every receiver."""
    wrong = 0
    for p in range(ranks):
        for r in range(ranks):
            n = counts[(r, p)]
            got = mem[(p, coll["output"])][r]
            want = tuple((r, coll["input"], p, i) for i in range(n))
            wrong += got[:n] != want or any(x is not None for x in got[n:])
            wrong += mem[(p, coll["recv_counts"])][r] != n
    return wrong


def check(bin_dir, schedule, nodes, local):
    ranks = nodes * local
    # A rooted schedule: rooted at the last rank (another node's, not on
    # rail 0) where there is one.
    with open(schedule) as f:
        rooted = " root 0 {" in f.read()
    root = ranks - 1 if rooted else None
    flat = run([os.path.join(bin_dir, "sdma-opt"), schedule,
                f"--sdma-unroll=ranks={ranks} local-ranks={local}" +
                (f" root={root}" if rooted else "")])
    plan = json.loads(run([os.path.join(bin_dir, "sdma-translate"),
                           "--sdma-to-node-plan"], flat))
    assert plan["nodes"] == nodes and plan["local_ranks"] == local
    assert not rooted or plan["collective"].get("root") == root, \
        "the plan is not rooted where asked"
    sizes = {b["name"]: b["chunks"] for b in plan["buffers"]}
    mem = {(r, b): [((r, b, i),) for i in range(n)]
           for r in range(ranks) for b, n in sizes.items()}
    coll = plan["collective"]
    counts = {}
    if coll["kind"] == "all_to_allv":
        # Rows of C per chunk, counts 0..C (zeros and full slots included).
        rng = random.Random(ranks * 31 + local)
        counts = {(r, p): rng.randint(0, ROWS)
                  for r in range(ranks) for p in range(ranks)}
        for (r, b), chunks in mem.items():
            for i in range(len(chunks)):
                chunks[i] = ((tuple((r, b, i, j) for j in range(ROWS)))
                             if b == coll["input"] else (None,) * ROWS)
            if b == coll["send_counts"]:
                mem[(r, b)] = [counts[(r, p)] for p in range(ranks)]
            elif plan_counts(plan, b):
                mem[(r, b)] = [None] * sizes[b]
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
            text, vops = copyvs(text)
            head, ops = sdmair.parse_flat(text)
            assert head["ranks"] == local
            base = node * local
            for op in ops:
                if op["op"] in ("bcast", "swap"):
                    raise ValueError("no symbolic run of " + op["op"] +
                                     " here; the hierarchical schedules "
                                     "use none")
                if op["op"] not in ("copy", "reduce"):
                    continue
                s, d = op["src"], op["dst"]
                data = mem[(s[0] + base, s[1])][s[2]:s[2] + s[3]]
                dst = mem[(d[0] + base, d[1])]
                if op["op"] == "reduce":
                    data = [tuple(sorted(a + b))
                            for a, b in zip(dst[d[2]:d[2] + d[3]], data)]
                dst[d[2]:d[2] + d[3]] = data
            for op in vops:
                run_copyv(mem, op, base)
    if coll["kind"] == "all_to_allv":
        return check_alltoallv(mem, ranks, coll, counts), network
    wrong = 0
    for r in range(ranks):
        want = expected(coll["kind"], r, ranks, sizes, coll["input"],
                        coll["output"], coll.get("root", 0))
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
