#!/usr/bin/env python3
"""Writes schedules/msccl/: MSCCL XML algorithms, laid out as MSCCLang's
generators lay them out (msccl-tools' ir_to_xml and the hand-written
generators of microsoft/msccl): one thread block per (send peer, receive
peer, channel), a send matched in order by the receive of its connection,
extra dependencies as nop steps, hasdep="1" on every step another depends
on, -1 for a slice a step does not use, every attribute the MSCCL runtime
requires. sdma imports each (sdma-translate --import-msccl-xml), proves it
and runs it (test/msccl/corpus.test).

Also three wrong ones under schedules/msccl/wrong/, which the import or the
proof must reject: a ring all-gather forwarding the wrong chunk, a
deadlocking exchange, a race between two thread blocks.

And MSCCL++ execution plans (the JSON its DSL writes) in OUT_DIR + "pp"
(schedules/mscclpp): all-gather and all-to-all by puts and signal/wait,
all-reduce and reduce-scatter by read-reduce (rre) with a barrier of
thread blocks; wrong ones: a put into the wrong slot, a missing barrier (a
race), waits before signals (a deadlock).

usage: msccl_corpus.py [OUT_DIR]   (default: schedules/msccl)
"""
import json
import os
import sys


class Tb:
    def __init__(self, gpu, tid, send, recv, chan):
        self.gpu, self.id, self.send, self.recv, self.chan = (gpu, tid, send,
                                                              recv, chan)
        self.steps = []

    def step(self, kind, src=None, dst=None, cnt=1, dep=None):
        """Adds a step; src/dst are (buffer, chunk) or None; dep is
        (tb, step) on the same gpu. Returns (tb id, step index)."""
        if dep is not None:
            self.gpu.tbs[dep[0]].steps[dep[1]]["hasdep"] = 1
        self.steps.append(dict(type=kind, src=src, dst=dst, cnt=cnt,
                               dep=dep, hasdep=0))
        return (self.id, len(self.steps) - 1)

    def after(self, deps, kind, **kw):
        """A step after several dependencies: nops for all but the last."""
        deps = list(deps)
        for d in deps[:-1]:
            self.step("nop", dep=d)
        return self.step(kind, dep=deps[-1] if deps else None, **kw)


class Gpu:
    def __init__(self, gid, i, o, s):
        self.id, self.i, self.o, self.s = gid, i, o, s
        self.tbs = []

    def tb(self, send=-1, recv=-1, chan=0):
        t = Tb(self, len(self.tbs), send, recv, chan)
        self.tbs.append(t)
        return t


class Algo:
    def __init__(self, name, coll, ngpus, chunks, inplace=0, channels=1,
                 proto="Simple"):
        self.name, self.coll, self.ngpus, self.chunks = (name, coll, ngpus,
                                                         chunks)
        self.inplace, self.channels, self.proto = inplace, channels, proto
        self.gpus = []

    def gpu(self, i, o, s=0):
        g = Gpu(len(self.gpus), i, o, s)
        self.gpus.append(g)
        return g

    def xml(self):
        out = ['<algo name="%s" proto="%s" nchannels="%d" nchunksperloop="%d"'
               ' ngpus="%d" coll="%s" inplace="%d" outofplace="%d"'
               ' minBytes="0" maxBytes="0">'
               % (self.name, self.proto, self.channels, self.chunks,
                  self.ngpus, self.coll, self.inplace, 1 - self.inplace)]
        for g in self.gpus:
            out.append('  <gpu id="%d" i_chunks="%d" o_chunks="%d" '
                       's_chunks="%d">' % (g.id, g.i, g.o, g.s))
            for t in g.tbs:
                out.append('    <tb id="%d" send="%d" recv="%d" chan="%d">'
                           % (t.id, t.send, t.recv, t.chan))
                for k, s in enumerate(t.steps):
                    src = s["src"] or ("i", -1)
                    dst = s["dst"] or ("o", -1)
                    dep = s["dep"] or (-1, -1)
                    out.append(
                        '      <step s="%d" type="%s" srcbuf="%s" srcoff="%d"'
                        ' dstbuf="%s" dstoff="%d" cnt="%d" depid="%d"'
                        ' deps="%d" hasdep="%d"/>'
                        % (k, s["type"], src[0], src[1], dst[0], dst[1],
                           s["cnt"], dep[0], dep[1], s["hasdep"]))
                out.append('    </tb>')
            out.append('  </gpu>')
        out.append('</algo>')
        return "\n".join(out) + "\n"


def allgather_ring(R, channels=1):
    """Ring all-gather; with two channels the input's halves go round the
    ring in opposite directions."""
    a = Algo("allgather_ring_%d_ch%d" % (R, channels), "allgather", R,
             R * channels, channels=channels)
    for r in range(R):
        g = a.gpu(channels, R * channels)
        for c in range(channels):
            step = 1 if c == 0 else -1
            nxt, prv = (r + step) % R, (r - step) % R
            t = g.tb(send=nxt, recv=prv, chan=c)
            t.step("s", src=("i", c), dst=("o", r * channels + c))
            for k in range(1, R - 1):
                owner = (r - step * k) % R
                t.step("rcs", dst=("o", owner * channels + c))
            t.step("r", dst=("o", ((r - step * (R - 1)) % R) * channels + c))
        own = g.tb()
        own.step("cpy", src=("i", 0), dst=("o", r * channels), cnt=channels)
    return a


def allreduce_ring(R):
    """Ring all-reduce in place: reduce-scatter (rrs), the owner's rrcs,
    then all-gather (rcs)."""
    a = Algo("allreduce_ring_%d" % R, "allreduce", R, R, inplace=1)
    for r in range(R):
        g = a.gpu(R, R)
        t = g.tb(send=(r + 1) % R, recv=(r - 1) % R)
        t.step("s", src=("i", r))
        for k in range(1, R - 1):
            c = (r - k) % R
            t.step("rrs", src=("i", c))
        c = (r + 1) % R
        t.step("rrcs", src=("i", c), dst=("i", c))
        for j in range(R - 2):
            t.step("rcs", dst=("i", (r - j) % R))
        t.step("r", dst=("i", (r - (R - 2)) % R))
    return a


def allreduce_allpairs(R):
    """All-pairs all-reduce (as microsoft/msccl's allpair generator): chunk
    j to gpu j's scratch, a reducing thread block sums what arrived once
    each receive is done (its dependencies), then every gpu sends its
    reduced chunk to all."""
    a = Algo("allreduce_allpairs_%d" % R, "allreduce", R, R)
    for g_id in range(R):
        g = a.gpu(R, R, R)
        peers = [j for j in range(R) if j != g_id]
        tbs = {j: g.tb(send=j, recv=j) for j in peers}
        got = {}
        for j in peers:
            tbs[j].step("s", src=("i", j), dst=("s", g_id))
            got[j] = tbs[j].step("r", dst=("s", j))
        red = g.tb()
        red.step("cpy", src=("i", g_id), dst=("o", g_id))
        last = None
        for j in peers:
            last = red.step("re", src=("s", j), dst=("o", g_id), dep=got[j])
        for j in peers:
            tbs[j].step("s", src=("o", g_id), dep=last)
            tbs[j].step("r", dst=("o", j))
    return a


def allreduce_hierarchical(nodes, local):
    """Two-level all-reduce over nodes x local gpus: all-pairs
    reduce-scatter inside each node, the shard all-reduced across nodes by
    the gpus of one local index (rrc, received into scratch), all-pairs
    all-gather inside the node."""
    R = nodes * local
    a = Algo("allreduce_hier_%dx%d" % (nodes, local), "allreduce", R, local)
    for g_id in range(R):
        n, l = divmod(g_id, local)
        g = a.gpu(local, local, local + nodes)
        mates = [n * local + m for m in range(local) if m != l]
        remote = [m * local + l for m in range(nodes) if m != n]
        tbs = {p: g.tb(send=p, recv=p) for p in mates + remote}
        got = {}
        for p in mates:
            tbs[p].step("s", src=("i", p % local))
            got[p] = tbs[p].step("r", dst=("s", p % local))
        red = g.tb()
        red.step("cpy", src=("i", l), dst=("o", l))
        last = None
        for p in mates:
            last = red.step("re", src=("s", p % local), dst=("o", l),
                            dep=got[p])
        # Across nodes: each remote peer's local sum of shard l arrives
        # into a scratch slot of its node and is added, one at a time.
        for p in remote:
            tbs[p].step("s", src=("o", l), dep=last)
            tbs[p].step("r", dst=("s", local + p // local))
        for p in remote:
            last = red.step("re", src=("s", local + p // local),
                            dst=("o", l), dep=(tbs[p].id, 1))
        for p in mates:
            tbs[p].step("s", src=("o", l), dep=last)
            tbs[p].step("r", dst=("o", p % local))
    return a


def alltoall_direct(R):
    a = Algo("alltoall_direct_%d" % R, "alltoall", R, R)
    for g_id in range(R):
        g = a.gpu(R, R)
        for j in range(R):
            if j == g_id:
                continue
            t = g.tb(send=j, recv=j)
            t.step("s", src=("i", j), dst=("o", g_id))
            t.step("r", dst=("o", j))
        g.tb().step("cpy", src=("i", g_id), dst=("o", g_id))
    return a


def alltoall_two_step(nodes, local):
    """Two-step all-to-all over 2 x local gpus: everything for the other
    node goes to the gpu of the same local index there in one message (cnt
    local), which forwards each chunk to its local owner; chunks within the
    node go directly."""
    assert nodes == 2
    R = 2 * local
    a = Algo("alltoall_twostep_2x%d" % local, "alltoall", R, R)
    for g_id in range(R):
        n, l = divmod(g_id, local)
        g = a.gpu(R, R, local)
        cross = (1 - n) * local + l
        x = g.tb(send=cross, recv=cross)
        x.step("s", src=("i", (1 - n) * local), dst=("s", 0), cnt=local)
        arrived = x.step("r", dst=("s", 0), cnt=local)
        for m in range(local):
            if m == l:
                continue
            p = n * local + m
            t = g.tb(send=p, recv=p)
            t.step("s", src=("i", p), dst=("o", g_id))
            t.step("r", dst=("o", p))
            t.step("s", src=("s", m), dep=arrived)
            t.step("r", dst=("o", (1 - n) * local + m))
        own = g.tb()
        own.step("cpy", src=("i", g_id), dst=("o", g_id))
        own.step("cpy", src=("s", l), dst=("o", cross), dep=arrived)
    return a


def reducescatter_ring(R):
    a = Algo("reducescatter_ring_%d" % R, "reducescatter", R, R)
    for r in range(R):
        g = a.gpu(R, 1)
        t = g.tb(send=(r + 1) % R, recv=(r - 1) % R)
        t.step("s", src=("i", (r - 1) % R))
        for k in range(1, R - 1):
            t.step("rrs", src=("i", (r - 1 - k) % R))
        t.step("rrc", src=("i", r), dst=("o", 0))
    return a


def wrong_allgather_ring(R):
    """Forwards the chunk it received one step too late: the second rcs
    sends a chunk other than the one just received (the chunk index is off
    by one), so an output chunk ends up with the wrong rank's data."""
    a = allgather_ring(R)
    a.name = "wrong_allgather_ring_%d" % R
    for r, g in enumerate(a.gpus):
        st = g.tbs[0].steps
        st[1]["dst"] = ("o", (r - 2) % R)
    return a


def wrong_deadlock():
    """Each gpu receives before it sends: neither receive can complete."""
    a = Algo("wrong_deadlock", "allgather", 2, 2)
    for r in range(2):
        g = a.gpu(1, 2)
        t = g.tb(send=1 - r, recv=1 - r)
        t.step("r", dst=("o", 1 - r))
        t.step("s", src=("i", 0))
        g.tb().step("cpy", src=("i", 0), dst=("o", r))
    return a


def wrong_race():
    """Two thread blocks of gpu 1 write o[0] with no dependency between
    them: the received chunk and a local copy race."""
    a = Algo("wrong_race", "allgather", 2, 2)
    g0 = a.gpu(1, 2)
    g0.tb(send=1, recv=1).step("s", src=("i", 0))
    g0.tbs[0].step("r", dst=("o", 1))
    g0.tb().step("cpy", src=("i", 0), dst=("o", 0))
    g1 = a.gpu(1, 2)
    t = g1.tb(send=0, recv=0)
    t.step("s", src=("i", 0))
    t.step("r", dst=("o", 0))
    g1.tb().step("cpy", src=("i", 0), dst=("o", 0))
    return a


# -- MSCCL++ execution plans ------------------------------------------------


class Plan:
    """An MSCCL++ execution plan (the JSON its DSL writes): per gpu its
    memory channels to every peer (channel k of the list goes to peers[k]),
    the peers' buffers it writes or reads, and thread blocks of ops."""

    def __init__(self, name, collective, R, i, o, s=0, inplace=False):
        self.name, self.collective, self.R = name, collective, R
        self.inplace = inplace
        self.gpus = []
        for g in range(R):
            peers = [p for p in range(R) if p != g]
            self.gpus.append(dict(
                id=g, input_chunks=i, output_chunks=o, scratch_chunks=s,
                threadblocks=[], peers=peers,
                channels=[dict(channel_type="memory", connected_to=peers)],
                remote_buffers=[]))

    def remote(self, g, rank, kind):
        """The index of (rank, kind) among gpu g's remote buffers."""
        bufs = self.gpus[g]["remote_buffers"]
        for k, b in enumerate(bufs):
            if b["rank"] == rank and b["type"] == kind:
                return k
        bufs.append(dict(rank=rank, type=kind,
                         access_channel_types=["memory"]))
        return len(bufs) - 1

    def tb(self, g, peers=(), remotes=()):
        """A thread block of gpu g using the channels to `peers` and the
        remote buffers `remotes` ((rank, type) pairs, in order)."""
        gpu = self.gpus[g]
        t = dict(id=len(gpu["threadblocks"]), ops=[], channels=[],
                 remote_buffer_refs=[])
        if peers:
            t["channels"].append(dict(
                channel_type="memory",
                channel_ids=[gpu["peers"].index(p) for p in peers]))
        if remotes:
            t["remote_buffer_refs"].append(dict(
                access_channel_type="memory",
                remote_buffer_ids=[self.remote(g, r, k) for r, k in remotes]))
        gpu["threadblocks"].append(t)
        return t

    def json(self):
        gpus = [{k: v for k, v in g.items() if k != "peers"}
                for g in self.gpus]
        return json.dumps(dict(name=self.name, collective=self.collective,
                               protocol="Simple", inplace=self.inplace,
                               gpus=gpus, num_threads_per_block=1024,
                               reuse_resources=False,
                               use_double_scratch_buffer=False,
                               min_message_size=0,
                               max_message_size=2**64 - 1), indent=1) + "\n"


def local(kind, index, size=1):
    return dict(type=kind, index=index, size=size)


def far(buffer_id, index, size=1):
    return dict(buffer_id=buffer_id, index=index, size=size)


def pp_allgather(R, wrong=False):
    """Each gpu puts its input into every peer's output, signals, and waits
    for every peer's signal; a local copy for its own chunk."""
    p = Plan("%sallgather_put_%d" % ("wrong_" if wrong else "", R),
             "allgather", R, 1, R)
    for g in range(R):
        peers = p.gpus[g]["peers"]
        t = p.tb(g, peers, [(q, "o") for q in peers])
        for k, q in enumerate(peers):
            slot = q if wrong and g == 0 else g  # the wrong one: rank 0
            t["ops"].append(dict(name="put", src_buff=[local("i", 0)],
                                 dst_buff=[far(k, slot)],
                                 channel_type="memory"))
        t["ops"].append(dict(name="signal", channel_ids=list(range(len(peers))),
                             channel_type="memory"))
        t["ops"].append(dict(name="wait", channel_ids=list(range(len(peers))),
                             channel_type="memory"))
        own = p.tb(g)
        own["ops"].append(dict(name="copy", src_buff=[local("i", 0)],
                               dst_buff=[local("o", g)]))
    return p


def pp_alltoall(R):
    p = Plan("alltoall_put_%d" % R, "alltoall", R, R, R)
    for g in range(R):
        for q in p.gpus[g]["peers"]:
            t = p.tb(g, [q], [(q, "o")])
            t["ops"] += [dict(name="put", src_buff=[local("i", q)],
                              dst_buff=[far(0, g)], channel_type="memory"),
                         dict(name="signal", channel_ids=[0],
                              channel_type="memory"),
                         dict(name="wait", channel_ids=[0],
                              channel_type="memory")]
        p.tb(g)["ops"].append(dict(name="copy", src_buff=[local("i", g)],
                                   dst_buff=[local("o", g)]))
    return p


def pp_allreduce(R, barrier=True):
    """Read-reduce then put: gpu g sums chunk g of every input (rre reads
    the peers' inputs, which nobody writes), then, after a barrier of its
    thread blocks, puts the sum into every peer's output and signals; waits
    for every peer's sum. Without the barrier the puts race with the
    reduction."""
    p = Plan("%sallreduce_rre_%d" % ("" if barrier else "wrong_", R),
             "allreduce", R, R, R)
    for g in range(R):
        peers = p.gpus[g]["peers"]
        red = p.tb(g, (), [(q, "i") for q in peers])
        red["ops"].append(dict(
            name="rre", src_buff=[local("i", g)] +
            [far(k, g) for k in range(len(peers))],
            dst_buff=[local("o", g)], channel_type="memory",
            reduce_op="sum"))
        ts = [p.tb(g, [q], [(q, "o")]) for q in peers]
        if barrier:
            for t in [red] + ts:
                t["ops"].append(dict(name="barrier", barrier_id=0,
                                     num_threadblocks=R))
        for t in ts:
            t["ops"] += [dict(name="put", src_buff=[local("o", g)],
                              dst_buff=[far(0, g)], channel_type="memory"),
                         dict(name="signal", channel_ids=[0],
                              channel_type="memory"),
                         dict(name="wait", channel_ids=[0],
                              channel_type="memory")]
    return p


def pp_reducescatter(R):
    p = Plan("reducescatter_rre_%d" % R, "reducescatter", R, R, 1)
    for g in range(R):
        peers = p.gpus[g]["peers"]
        t = p.tb(g, (), [(q, "i") for q in peers])
        t["ops"].append(dict(
            name="rre", src_buff=[local("i", g)] +
            [far(k, g) for k in range(len(peers))],
            dst_buff=[local("o", 0)], channel_type="memory",
            reduce_op="sum"))
    return p


def pp_deadlock():
    """Each gpu waits for the other before it signals."""
    p = Plan("wrong_deadlock_plan", "allgather", 2, 1, 2)
    for g in range(2):
        t = p.tb(g, [1 - g], [(1 - g, "o")])
        t["ops"] += [dict(name="wait", channel_ids=[0], channel_type="memory"),
                     dict(name="put", src_buff=[local("i", 0)],
                          dst_buff=[far(0, g)], channel_type="memory"),
                     dict(name="signal", channel_ids=[0],
                          channel_type="memory")]
        p.tb(g)["ops"].append(dict(name="copy", src_buff=[local("i", 0)],
                                   dst_buff=[local("o", g)]))
    return p


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "schedules/msccl"
    good = [allgather_ring(4), allgather_ring(8), allgather_ring(4, 2),
            allreduce_ring(4), allreduce_ring(8), allreduce_allpairs(4),
            allreduce_allpairs(8), allreduce_hierarchical(2, 4),
            alltoall_direct(4), alltoall_direct(8), alltoall_two_step(2, 2),
            alltoall_two_step(2, 4), reducescatter_ring(4),
            reducescatter_ring(8)]
    wrong = [wrong_allgather_ring(4), wrong_deadlock(), wrong_race()]
    os.makedirs(os.path.join(out, "wrong"), exist_ok=True)
    for a, sub in [(a, "") for a in good] + [(a, "wrong") for a in wrong]:
        path = os.path.join(out, sub, a.name + ".xml")
        with open(path, "w") as f:
            f.write("<!-- %s: written by scripts/msccl_corpus.py -->\n"
                    % a.name)
            f.write(a.xml())
    plans = [pp_allgather(4), pp_allgather(8), pp_alltoall(4),
             pp_allreduce(4), pp_allreduce(8), pp_reducescatter(4)]
    bad_plans = [pp_allgather(4, wrong=True), pp_allreduce(4, barrier=False),
                 pp_deadlock()]
    pp = out.rstrip("/") + "pp"
    os.makedirs(os.path.join(pp, "wrong"), exist_ok=True)
    for plan, sub in [(p, "") for p in plans] + [(p, "wrong")
                                                 for p in bad_plans]:
        with open(os.path.join(pp, sub, plan.name + ".json"), "w") as f:
            f.write(plan.json())
    print("%d algorithms, %d wrong ones, in %s; %d plans, %d wrong ones, "
          "in %s" % (len(good), len(wrong), out, len(plans), len(bad_plans),
                     pp))


if __name__ == "__main__":
    main()
