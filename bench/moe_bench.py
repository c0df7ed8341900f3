"""MoE all-to-allv on one GPU shared by 8 ranks: sdma's all_to_all_v against
(a) a hand-written fused permutation kernel (Triton, one launch moving every
rank's rows) and (b) what torch users do today (split sizes synced to the
host with .tolist(), then one copy per (sender, receiver) pair).

DeepSeek-V3's shape: hidden 7168, bf16, top-8 of 256 experts (32 per rank),
128 or 4096 tokens per rank, uniform or skewed routing. Dispatch and combine
are timed apart; dispatch + combine is also captured in one CUDA graph per
rank and replayed (no host synchronisation can happen inside a replay).

    sdma-launch --nproc-per-node=8 python3 bench/moe_bench.py rank OUT \\
        --tokens 128 --routing uniform        # every rank, then
    python3 bench/moe_bench.py baselines OUT --tokens 128 --routing uniform
    python3 bench/moe_bench.py report OUT bench/results/moe-h200

With --layout expert the dispatch goes into expert-major rows (each local
expert's rows from every rank together, padded to --align rows: what a
grouped GEMM reads) through sdmaAlltoAllv2d, its combine through
sdmaAlltoAllv2dOffset (sdma-comm-test --case=moe-bench --layout=expert);
the baselines are a fused Triton kernel moving every segment straight into
that layout, and sdma's rank-level all-to-allv (its packed run on the same
routing) followed by the permutation into it (torch index_copy_, the
slowest rank's); report writes PREFIX-expert.csv/.png and the table.

Every rank checks every received row of the eager calls and of the graph
replays against the rows its peers must have sent; the baselines check
theirs against sdma's layout. Times are medians over many calls.
"""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import torch
except ImportError:  # `report` reads the logs only
    torch = None

R_DEFAULT, H, E, K = 8, 7168, 256, 8


def routing(rank, tokens, kind, R):
    """Each token's top-8 experts; skewed: low-numbered experts (ranks)
    are favoured, so some ranks receive several times the mean."""
    g = torch.Generator(device="cuda").manual_seed(1000 + rank)
    logits = torch.randn(tokens, E, device="cuda", generator=g)
    if kind == "skewed":
        logits -= 1.5 * torch.log1p(torch.arange(E, device="cuda") / 8.0)
    return torch.topk(logits, K, dim=-1).indices


def splits_of(experts, R):
    return torch.bincount((experts // (E // R)).reshape(-1),
                          minlength=R).to(torch.int64)


def all_splits(tokens, kind, R):
    """counts[r][p] for every rank (each rank can compute them all)."""
    return torch.stack([splits_of(routing(r, tokens, kind, R), R)
                        for r in range(R)])


def capacity(counts):
    return int((counts.max().item() + 63) // 64 * 64)


def row_values(rank, rows, device="cuda"):
    """The rows rank `rank` sends (packed by destination): exact small
    integers in bf16, different per rank, row and column."""
    i = torch.arange(rows, device=device).unsqueeze(1)
    j = torch.arange(H, device=device).unsqueeze(0)
    return ((rank * 37 + i * 11 + j * 3) % 251).to(torch.bfloat16)


def expected(me, counts, C):
    """What rank `me` must hold after a packed dispatch."""
    R = counts.shape[0]
    want = torch.empty(R * C, H, dtype=torch.bfloat16, device="cuda")
    at = 0
    for r in range(R):
        n = int(counts[r, me])
        src = int(counts[r, :me].sum())
        want[at:at + n] = row_values(r, src + n)[src:src + n]
        at += n
    return want, at


def median_us(fn, iters, sync):
    """Median of `iters` single calls, each timed with CUDA events."""
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        sync()
        times.append(a.elapsed_time(b) * 1000.0)
    return statistics.median(times)


def run_rank(args):
    import sdma
    R = int(os.environ["WORLD_SIZE"])
    me = int(os.environ["RANK"])
    torch.cuda.set_device(0)
    counts = all_splits(args.tokens, args.routing, R)
    C = capacity(counts)
    comm = sdma.Communicator(me, R, os.environ["SDMA_UNIQUE_ID"],
                             device="cuda",
                             heap_bytes=2 * R * C * H * 2 + (64 << 20))
    send = comm.empty((R * C, H), torch.bfloat16)
    recv = comm.empty((R * C, H), torch.bfloat16)
    mine = counts[me].clone()
    n = int(mine.sum())
    send[:n] = row_values(me, n)
    want, arrived = expected(me, counts, C)
    got = torch.empty(R, dtype=torch.int64, device="cuda")
    back = torch.empty(R, dtype=torch.int64, device="cuda")

    def dispatch():
        comm.all_to_all_v(recv, send, input_splits=mine, output_splits=got)

    def combine():  # the rows go back where they came from
        comm.all_to_all_v(send, recv, input_splits=got, output_splits=back)

    def check(what):
        torch.cuda.synchronize()
        comm.check_async_error()
        if not torch.equal(got, counts[:, me]) or \
                not torch.equal(recv[:arrived], want[:arrived]):
            raise SystemExit("rank %d: %s: wrong rows" % (me, what))
        if not torch.equal(send[:n], row_values(me, n)) or \
                not torch.equal(back, mine):
            raise SystemExit("rank %d: %s: combine wrong" % (me, what))

    sync = torch.cuda.synchronize
    for _ in range(3):
        dispatch()
        combine()
    check("eager")
    result = {"rank": me, "ranks": R, "tokens": args.tokens,
              "routing": args.routing, "capacity": C,
              "rows_sent": n, "rows_received": arrived}
    result["dispatch_us"] = median_us(dispatch, args.iters, sync)
    result["combine_us"] = median_us(combine, args.iters, sync)
    check("timed")

    # Dispatch + combine in one CUDA graph: replays never touch the host.
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            dispatch()
            combine()
    torch.cuda.current_stream().wait_stream(stream)
    recv.zero_()
    graph.replay()
    check("graph replay")
    result["graph_us"] = median_us(graph.replay, args.iters, sync)
    check("graph replays")
    with open(os.path.join(args.out, "rank-%s-%d-%d.json"
                           % (args.routing, args.tokens, me)), "w") as f:
        json.dump(result, f)
    print("rank %d: %s %d tokens: dispatch %.1f us, combine %.1f us, "
          "graph (both) %.1f us, every row checked" % (
              me, args.routing, args.tokens, result["dispatch_us"],
              result["combine_us"], result["graph_us"]), flush=True)
    comm.destroy()


def fused_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def permute(src, dst, counts, src_off, dst_off, stride_rank, R: tl.constexpr,
                H: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_H: tl.constexpr):
        pair = tl.program_id(0)
        block = tl.program_id(1)
        r = (pair // R).to(tl.int64)
        p = (pair % R).to(tl.int64)
        n = tl.load(counts + pair)
        if block * BLOCK_R >= n:
            return
        s = tl.load(src_off + pair)
        d = tl.load(dst_off + pair)
        rows = block * BLOCK_R + tl.arange(0, BLOCK_R)
        mask_r = rows < n
        for h in range(0, H, BLOCK_H):
            cols = h + tl.arange(0, BLOCK_H)
            m = mask_r[:, None] & (cols[None, :] < H)
            v = tl.load(src + r * stride_rank + (s + rows)[:, None] * H +
                        cols[None, :], mask=m)
            tl.store(dst + p * stride_rank + (d + rows)[:, None] * H +
                     cols[None, :], v, mask=m)

    return permute


def bench_counts(out, routing, tokens, R):
    """The count matrix sdma-comm-test --case=moe-bench drew (so the
    baselines move exactly its rows), else this script's own routing."""
    path = os.path.join(out, "sdma-%s-%d.txt" % (routing, tokens))
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("moe-bench counts"):
                values = [int(v) for v in line.split()[2:]]
                return torch.tensor(values, dtype=torch.int64,
                                    device="cuda").view(R, R)
    return all_splits(tokens, routing, R)


def run_baselines(args):
    if args.layout == "expert":
        return run_baselines_expert(args)
    import triton
    R = args.ranks
    counts = bench_counts(args.out, args.routing, args.tokens, R)
    C = capacity(counts)
    send = torch.empty(R, R * C, H, dtype=torch.bfloat16, device="cuda")
    recv = torch.empty_like(send)
    for r in range(R):
        n = int(counts[r].sum())
        send[r, :n] = row_values(r, n)
    permute = fused_kernel()
    BLOCK_R, BLOCK_H = 16, 512
    rows_total = int(counts.sum())

    def offsets(m):
        src = torch.cumsum(m, 1) - m                # within each sender
        dst = (torch.cumsum(m, 0) - m)              # within each receiver
        return src.contiguous(), dst.contiguous()

    result = {"tokens": args.tokens, "routing": args.routing, "capacity": C,
              "rows": rows_total, "bytes": rows_total * H * 2,
              "counts_max": int(counts.max())}
    for phase, m in (("dispatch", counts), ("combine", counts.t())):
        m = m.contiguous()
        src_off, dst_off = offsets(m)
        a, b = (send, recv) if phase == "dispatch" else (recv, send)
        grid = (R * R, triton.cdiv(C, BLOCK_R))

        def fused():
            permute[grid](a, b, m, src_off, dst_off, R * C * H, R, H, BLOCK_R,
                          BLOCK_H)

        def host_counts():
            hm = m.tolist()                          # the host sync
            for r in range(R):
                s = 0
                for p in range(R):
                    d = sum(hm[q][p] for q in range(r))
                    n = hm[r][p]
                    if n:
                        b[p, d:d + n].copy_(a[r, s:s + n])
                    s += n

        for name, fn in (("fused", fused), ("torch", host_counts)):
            b.zero_()
            fn()
            torch.cuda.synchronize()
            check_layout(a, b, m)
            ms = triton.testing.do_bench(fn, warmup=25, rep=200,
                                         return_mode="median")
            result["%s_%s_us" % (phase, name)] = ms * 1000.0
            # The torch path's host sync, timed on its own.
            if name == "torch":
                t = []
                for _ in range(50):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    m.tolist()
                    t.append((time.perf_counter() - t0) * 1e6)
                result["%s_sync_us" % phase] = statistics.median(t)
    with open(os.path.join(args.out, "baselines-%s-%d.json"
                           % (args.routing, args.tokens)), "w") as f:
        json.dump(result, f)
    print(json.dumps(result), flush=True)


def segment_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def move(src, dst, counts, src_rank, dst_rank, src_off, dst_off,
             stride_rank, H: tl.constexpr, BLOCK_R: tl.constexpr,
             BLOCK_H: tl.constexpr):
        seg = tl.program_id(0)
        block = tl.program_id(1)
        n = tl.load(counts + seg)
        if block * BLOCK_R >= n:
            return
        sr = tl.load(src_rank + seg)
        dr = tl.load(dst_rank + seg)
        s = tl.load(src_off + seg)
        d = tl.load(dst_off + seg)
        rows = block * BLOCK_R + tl.arange(0, BLOCK_R)
        mask_r = rows < n
        for h in range(0, H, BLOCK_H):
            cols = h + tl.arange(0, BLOCK_H)
            m = mask_r[:, None] & (cols[None, :] < H)
            v = tl.load(src + sr * stride_rank + (s + rows)[:, None] * H +
                        cols[None, :], mask=m)
            tl.store(dst + dr * stride_rank + (d + rows)[:, None] * H +
                     cols[None, :], v, mask=m)

    return move


def expert_counts(out, routing, tokens, R):
    """g[r, p * El + e]: the rows rank r sends expert e of rank p, as
    sdma-comm-test --case=moe-bench --layout=expert drew them."""
    path = os.path.join(out, "sdma-expert-%s-%d.txt" % (routing, tokens))
    for line in open(path):
        if line.startswith("moe-bench expert-counts"):
            values = [int(v) for v in line.split()[2:]]
            return torch.tensor(values, dtype=torch.int64,
                                device="cuda").view(R, E)
    raise SystemExit("no moe-bench expert-counts line in " + path)


def expert_layout(g, R, align):
    """Per segment (r, p * El + e): its row offset in r's packed input, in
    p's expert-major padded output, in p's rank-level (packed by sender)
    output; and each receiver's padded rows."""
    El = E // R
    src = torch.cumsum(g, 1) - g
    dst = torch.zeros_like(g)
    rank_level = torch.zeros_like(g)
    padded_rows = []
    for p in range(R):
        block = g[:, p * El:(p + 1) * El]                 # [r, e]
        totals = block.sum(0)
        padded = torch.clamp((totals + align - 1) // align * align, min=align)
        starts = torch.cumsum(padded, 0) - padded
        dst[:, p * El:(p + 1) * El] = starts.unsqueeze(0) + \
            torch.cumsum(block, 0) - block
        per_sender = block.sum(1)
        rank_level[:, p * El:(p + 1) * El] = \
            (torch.cumsum(per_sender, 0) - per_sender).unsqueeze(1) + \
            torch.cumsum(block, 1) - block
        padded_rows.append(int(padded.sum()))
    return src, dst, rank_level, padded_rows


def run_baselines_expert(args):
    import triton
    R, El = args.ranks, E // args.ranks
    g = expert_counts(args.out, args.routing, args.tokens, R)
    src, dst, rank_level, padded_rows = expert_layout(g, R, args.align)
    sent = g.sum(1)
    C = max(int(g.max()), (int(sent.max()) + R - 1) // R,
            (max(padded_rows) + R - 1) // R)
    C = (C + 63) // 64 * 64
    send = torch.zeros(R, R * C, H, dtype=torch.bfloat16, device="cuda")
    recv = torch.zeros_like(send)
    for r in range(R):
        n = int(sent[r])
        send[r, :n] = row_values(r, n)
    move = segment_kernel()
    BLOCK_R, BLOCK_H = 16, 512
    S = R * E
    sender = torch.arange(R, device="cuda").repeat_interleave(E)
    receiver = (torch.arange(E, device="cuda") // El).repeat(R)
    counts = g.reshape(-1).contiguous()
    grid = (S, triton.cdiv(max(int(g.max()), 1), BLOCK_R))
    result = {"tokens": args.tokens, "routing": args.routing, "capacity": C,
              "align": args.align, "rows": int(g.sum()),
              "bytes": int(g.sum()) * H * 2}

    def fused(a, b, sr, dr, so, do):
        move[grid](a, b, counts, sr, dr, so.reshape(-1).contiguous(),
                   do.reshape(-1).contiguous(), R * C * H, H, BLOCK_R,
                   BLOCK_H)

    def check(b, a, sr_is_sender, what):
        torch.cuda.synchronize()
        for r, gi in ((r, gi) for r in range(R) for gi in range(E)):
            n = int(g[r, gi])
            p = gi // El
            if sr_is_sender:
                ok = torch.equal(b[p, int(dst[r, gi]):int(dst[r, gi]) + n],
                                 a[r, int(src[r, gi]):int(src[r, gi]) + n])
            else:
                ok = torch.equal(b[r, int(src[r, gi]):int(src[r, gi]) + n],
                                 a[p, int(dst[r, gi]):int(dst[r, gi]) + n])
            if not ok:
                raise SystemExit("%s: segment %d -> expert %d wrong"
                                 % (what, r, gi))

    # Fused: every segment straight into (and back out of) the layout.
    for phase in ("dispatch", "combine"):
        if phase == "dispatch":
            def fn():
                fused(send, recv, sender, receiver, src, dst)
            a, b = send, recv
        else:
            back = torch.zeros_like(send)

            def fn():
                fused(recv, back, receiver, sender, dst, src)
            a, b = recv, back
        fn()
        check(b, a, phase == "dispatch", "fused " + phase)
        result["%s_fused_us" % phase] = 1000.0 * triton.testing.do_bench(
            fn, warmup=25, rep=200, return_mode="median")
    # The rank-level path's permutation on each receiver: rows packed by
    # sender (sender-major, then expert) into the expert-major layout, and
    # back; index tensors built outside the timing (in favour of it).
    worst = {"dispatch": 0.0, "combine": 0.0}
    for p in range(R):
        cols = slice(p * El, (p + 1) * El)
        n_in = int(g[:, cols].sum())
        if n_in == 0:
            continue
        frm = torch.cat([torch.arange(int(rank_level[r, gi]),
                                      int(rank_level[r, gi] + g[r, gi]),
                                      device="cuda")
                         for r in range(R) for gi in range(p * El,
                                                           (p + 1) * El)])
        to = torch.cat([torch.arange(int(dst[r, gi]),
                                     int(dst[r, gi] + g[r, gi]),
                                     device="cuda")
                        for r in range(R) for gi in range(p * El,
                                                          (p + 1) * El)])
        packed = recv[p].clone()
        grouped = torch.zeros_like(recv[p])
        for phase, fn in (
                ("dispatch", lambda: grouped.index_copy_(
                    0, to, packed.index_select(0, frm))),
                ("combine", lambda: packed.index_copy_(
                    0, frm, grouped.index_select(0, to)))):
            worst[phase] = max(worst[phase], 1000.0 * triton.testing.do_bench(
                fn, warmup=25, rep=200, return_mode="median"))
    result["dispatch_permute_us"] = worst["dispatch"]
    result["combine_permute_us"] = worst["combine"]
    with open(os.path.join(args.out, "baselines-expert-%s-%d.json"
                           % (args.routing, args.tokens)), "w") as f:
        json.dump(result, f)
    print(json.dumps(result), flush=True)


def check_layout(a, b, m):
    """b holds a's rows in the packed all-to-allv layout of counts m."""
    R = m.shape[0]
    hm = m.tolist()
    for p in range(R):
        d = 0
        for r in range(R):
            s = sum(hm[r][:p])
            n = hm[r][p]
            if not torch.equal(b[p, d:d + n], a[r, s:s + n]):
                raise SystemExit("baseline layout wrong at %d -> %d" % (r, p))
            d += n


def sdma_ranks(out, base):
    """Per-rank results: sdma-comm-test --case=moe-bench's lines (ranks as
    threads of one process, one context: they run at once), else this
    script's rank mode (processes: they time-slice the GPU)."""
    import glob
    import re
    path = os.path.join(out, "sdma-%s-%d.txt" % (base["routing"],
                                                   base["tokens"]))
    if os.path.exists(path):
        pat = re.compile(r"moe-bench rank (\d+) of \d+: .* dispatch_us "
                         r"([\d.]+) combine_us ([\d.]+) graph_us ([\d.]+)"
                         r"(?: dispatch_ungated_us ([\d.]+))?")
        return [{"dispatch_us": float(m.group(2)),
                 "combine_us": float(m.group(3)),
                 "graph_us": float(m.group(4)),
                 "dispatch_ungated_us": float(m.group(5) or "nan")}
                for m in map(pat.search, open(path)) if m]
    return [json.load(open(p)) for p in glob.glob(os.path.join(
        out, "rank-%s-%d-*.json" % (base["routing"], base["tokens"])))]


def sdma_times(path):
    """The slowest rank's dispatch/combine/graph medians in an
    sdma-comm-test --case=moe-bench log."""
    import re
    pat = re.compile(r"moe-bench rank \d+ of \d+: .* dispatch_us ([\d.]+) "
                     r"combine_us ([\d.]+) graph_us ([\d.]+)")
    found = [m for m in map(pat.search, open(path)) if m]
    return {k: max(float(m.group(i)) for m in found)
            for i, k in ((1, "dispatch"), (2, "combine"), (3, "graph"))} \
        if found else None


def run_report_expert(args):
    import glob
    rows = []
    for path in sorted(glob.glob(os.path.join(args.out,
                                              "baselines-expert-*.json"))):
        base = json.load(open(path))
        key = "%s-%d" % (base["routing"], base["tokens"])
        expert = sdma_times(os.path.join(args.out, "sdma-expert-%s.txt" % key))
        rank = sdma_times(os.path.join(args.out, "sdma-%s.txt" % key))
        if not expert or not rank:
            continue
        row = dict(base)
        for phase in ("dispatch", "combine"):
            row["sdma_expert_%s_us" % phase] = expert[phase]
            row["sdma_rank_%s_us" % phase] = rank[phase]
            row["rank_plus_permute_%s_us" % phase] = \
                rank[phase] + base["%s_permute_us" % phase]
        row["sdma_expert_graph_us"] = expert["graph"]
        rows.append(row)
    keys = ["tokens", "routing", "align", "capacity", "rows", "bytes"] + [
        k % phase for phase in ("dispatch", "combine") for k in (
            "sdma_expert_%s_us", "%s_fused_us", "sdma_rank_%s_us",
            "%s_permute_us", "rank_plus_permute_%s_us")] + [
        "sdma_expert_graph_us"]
    with open(args.prefix + "-expert.csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for row in rows:
            f.write(",".join(str(round(row[k], 2)) if isinstance(row[k], float)
                             else str(row[k]) for k in keys) + "\n")
    print("| tokens | routing | phase | sdma expert-major us | fused kernel "
          "us | sdma / fused (target <= 1.1 at 4096) | sdma rank-level + "
          "permutation us | that / sdma (target > 1) |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        for phase in ("dispatch", "combine"):
            s = row["sdma_expert_%s_us" % phase]
            fu = row["%s_fused_us" % phase]
            rp = row["rank_plus_permute_%s_us" % phase]
            print("| %d | %s | %s | %.1f | %.1f | %.2f | %.1f | %.2f |"
                  % (row["tokens"], row["routing"], phase, s, fu, s / fu, rp,
                     rp / s))


def run_report(args):
    if args.layout == "expert":
        return run_report_expert(args)
    import glob
    rows = []
    for path in sorted(glob.glob(os.path.join(args.out, "baselines-*.json"))):
        base = json.load(open(path))
        ranks = sdma_ranks(args.out, base)
        if not ranks:
            continue
        row = dict(base)
        for key in ("dispatch_us", "combine_us", "graph_us",
                    "dispatch_ungated_us"):
            row["sdma_" + key] = max(r.get(key, float("nan"))
                                     for r in ranks)  # the job's time
        rows.append(row)
    keys = ["tokens", "routing", "capacity", "rows", "bytes",
            "sdma_dispatch_us", "dispatch_fused_us", "dispatch_torch_us",
            "dispatch_sync_us", "sdma_combine_us", "combine_fused_us",
            "combine_torch_us", "combine_sync_us", "sdma_graph_us",
            "sdma_dispatch_ungated_us"]
    with open(args.prefix + ".csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for row in rows:
            f.write(",".join(str(round(row[k], 2)) if isinstance(row[k], float)
                             else str(row[k]) for k in keys) + "\n")
    print("| tokens | routing | phase | sdma us | fused kernel us | sdma / "
          "fused (target <= 1.1) | torch host-counts us | torch / sdma "
          "(target >= 3 at 128) | sdma GB/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        for phase in ("dispatch", "combine"):
            s = row["sdma_%s_us" % phase]
            fu = row["%s_fused_us" % phase]
            t = row["%s_torch_us" % phase]
            print("| %d | %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.0f |"
                  % (row["tokens"], row["routing"], phase, s, fu, s / fu, t,
                     t / s, row["bytes"] / s / 1e3))
        print("| %d | %s | dispatch + combine, one CUDA graph replay | %.1f "
              "| %.1f | %.2f | %.1f | %.1f | |" % (
                  row["tokens"], row["routing"], row["sdma_graph_us"],
                  row["dispatch_fused_us"] + row["combine_fused_us"],
                  row["sdma_graph_us"] / (row["dispatch_fused_us"] +
                                          row["combine_fused_us"]),
                  row["dispatch_torch_us"] + row["combine_torch_us"],
                  (row["dispatch_torch_us"] + row["combine_torch_us"]) /
                  row["sdma_graph_us"]))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, phase in zip(axes, ("dispatch", "combine")):
        labels = ["%d %s" % (r["tokens"], r["routing"]) for r in rows]
        x = range(len(rows))
        for i, (name, key) in enumerate((
                ("sdma all_to_all_v", "sdma_%s_us"),
                ("fused permutation kernel (Triton)", "%s_fused_us"),
                ("torch: .tolist() + copies", "%s_torch_us"))):
            ax.bar([v + 0.27 * (i - 1) for v in x],
                   [r[key % phase] for r in rows], width=0.27, label=name)
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels)
        ax.set_yscale("log")
        ax.set_ylabel("microseconds per call (median)")
        ax.set_title("MoE %s, 8 ranks on one H200, hidden 7168 bf16, top-8/256"
                     % phase, fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.prefix + ".png", dpi=120)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["rank", "baselines", "report"])
    p.add_argument("out")
    p.add_argument("prefix", nargs="?", default="bench/results/moe-h200")
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--routing", default="uniform",
                   choices=["uniform", "skewed"])
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--ranks", type=int, default=R_DEFAULT)
    p.add_argument("--layout", default="packed", choices=["packed", "expert"])
    p.add_argument("--align", type=int, default=128,
                   help="--layout expert: rows an expert's group is padded to")
    args = p.parse_args()
    if torch is None and args.mode != "report":
        sys.exit("moe_bench.py %s: needs torch (with CUDA)" % args.mode)
    os.makedirs(args.out, exist_ok=True)
    {"rank": run_rank, "baselines": run_baselines,
     "report": run_report}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
