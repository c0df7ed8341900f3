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

import torch

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


def run_report(args):
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
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    {"rank": run_rank, "baselines": run_baselines,
     "report": run_report}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
