#!/usr/bin/env python3
"""What a collective costs a GEMM running beside it (issue 39's overlap
benchmark), one process per rank (torchrun or sdma-launch).

For each (GEMM, collective, bytes per rank) cell and each implementation it
times, with CUDA events, >= --iters iterations of: the GEMM alone, the
collective alone, both in sequence on one stream, and both overlapped (the
GEMM on one stream, the collective on another, started together). Per rank
it takes the median and p90 of each; rank 0 writes the slowest rank's
numbers as CSV:

  impl, gemm, collective, bytes, gemm_us, coll_us, serial_us, overlap_us,
  gemm_p90_us, coll_p90_us, overlap_p90_us, gemm_slowdown, coll_slowdown,
  fraction_of_ideal

gemm_slowdown is the GEMM's time overlapped over alone (its stream's own
events), coll_slowdown the collective's; fraction_of_ideal is ConCCL's
metric, the achieved speedup over the ideal one: (serial / overlap) /
(serial / max(gemm, coll)) = max(gemm, coll) / overlap.

Implementations: sdma-ldst and sdma-dma (sdma's communicator with
path="ldst" / "dma"), nccl (torch.distributed's NCCL process group). On one
GPU shared by the ranks every copy is a same-GPU copy, which CUDA runs on
SMs: such a run validates the harness, it cannot show what copy engines
free (the multi-GPU issue's run does).

  torchrun --nproc-per-node=N bench/overlap.py --impl=sdma-dma \\
      --gemm=compute,moe,decode --collective=all_gather,all_to_all \\
      --sizes=64K,1M,8M,64M,256M --iters=200 --csv=out.csv
"""
import argparse
import os
import statistics
import sys

import torch
import torch.distributed as dist

# M, N, K of the three GEMMs (bf16).
GEMMS = {"compute": (8192, 8192, 8192), "moe": (4096, 2048, 7168),
         "decode": (128, 7168, 8192)}


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


class Collective:
    """One collective of one implementation on fixed buffers."""

    def __init__(self, impl, kind, nbytes, comm, world):
        self.impl, self.kind, self.comm = impl, kind, comm
        n = max(1, nbytes // 2)  # bf16 elements per rank
        alloc = comm.empty if comm else (
            lambda shape, dtype: torch.empty(shape, dtype=dtype,
                                             device="cuda"))
        if kind == "all_gather":
            self.inp = alloc((n,), torch.bfloat16)
            self.out = alloc((world, n), torch.bfloat16)
        else:
            per = max(1, n // world)
            self.inp = alloc((world * per,), torch.bfloat16)
            self.out = alloc((world * per,), torch.bfloat16)
        self.inp.fill_(1)

    def __call__(self):
        if self.comm:
            if self.kind == "all_gather":
                self.comm.all_gather_into_tensor(self.out, self.inp)
            else:
                self.comm.all_to_all_single(self.out, self.inp)
        elif self.kind == "all_gather":
            dist.all_gather_into_tensor(self.out, self.inp)
        else:
            dist.all_to_all_single(self.out, self.inp)


def timed(fn, stream, iters):
    """Per-iteration times (us) of fn() on `stream`."""
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            start.record()
            fn()
            end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return times


def overlapped(gemm, coll, s1, s2, iters):
    """Per iteration: GEMM's, collective's and the whole step's time."""
    g, c, both = [], [], []
    for _ in range(iters):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        fork = torch.cuda.Event()
        torch.cuda.current_stream().record_event(fork)
        s1.wait_event(fork)
        s2.wait_event(fork)
        with torch.cuda.stream(s1):
            ev[0].record()
            gemm()
            ev[1].record()
        with torch.cuda.stream(s2):
            ev[2].record()
            coll()
            ev[3].record()
        ev[1].synchronize()
        ev[3].synchronize()
        g.append(ev[0].elapsed_time(ev[1]) * 1000)
        c.append(ev[2].elapsed_time(ev[3]) * 1000)
        both.append(max(ev[0].elapsed_time(ev[1]), ev[0].elapsed_time(ev[3]))
                    * 1000)
    return g, c, both


def slowest(value):
    """The largest of every rank's `value` (gloo over the CPU)."""
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=CPU_GROUP)
    return t.item()


def main():
    global CPU_GROUP
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impl", default="sdma-dma",
                    choices=["sdma-ldst", "sdma-dma", "nccl"])
    ap.add_argument("--gemm", default="compute,moe,decode")
    ap.add_argument("--collective", default="all_gather,all_to_all")
    ap.add_argument("--sizes", default="64K,1M,8M,64M,256M")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--csv", default="overlap.csv")
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local % torch.cuda.device_count())
    nccl = args.impl == "nccl"
    dist.init_process_group("nccl" if nccl else "gloo")
    CPU_GROUP = dist.new_group(backend="gloo") if nccl else None
    comm = None
    if not nccl:
        sys.path.insert(0, os.environ.get("SDMA_PYTHON", "build/python"))
        import sdma

        comm = sdma.Communicator.from_process_group(
            path=args.impl.split("-")[1], heap_bytes=3 << 30)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    rows = []
    for gname in args.gemm.split(","):
        m, n, k = GEMMS[gname]
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
        c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

        def gemm():
            torch.matmul(a, b, out=c)

        for kind in args.collective.split(","):
            for size in args.sizes.split(","):
                coll = Collective(args.impl, kind, parse_size(size), comm,
                                  world)
                for _ in range(5):  # warm: compile, agree, cache
                    coll()
                    gemm()
                torch.cuda.synchronize()
                g = timed(gemm, s1, args.iters)
                co = timed(coll, s1, args.iters)
                serial = timed(lambda: (gemm(), coll()), s1, args.iters)
                og, oc, ob = overlapped(gemm, coll, s1, s2, args.iters)
                med = statistics.median
                row = [slowest(x) for x in (
                    med(g), med(co), med(serial), med(ob), percentile(g, 90),
                    percentile(co, 90), percentile(ob, 90), med(og), med(oc))]
                gu, cu, su, ou, gp, cp, op, ogu, ocu = row
                rows.append((args.impl, gname, kind, parse_size(size), gu, cu,
                             su, ou, gp, cp, op, ogu / gu, ocu / cu,
                             max(gu, cu) / ou))
                if comm:
                    comm.free(coll.out)
                    comm.free(coll.inp)
                del coll
    if rank == 0:
        with open(args.csv, "w") as f:
            f.write("impl,gemm,collective,bytes,gemm_us,coll_us,serial_us,"
                    "overlap_us,gemm_p90_us,coll_p90_us,overlap_p90_us,"
                    "gemm_slowdown,coll_slowdown,fraction_of_ideal\n")
            for r in rows:
                f.write(",".join(str(round(x, 3)) if isinstance(x, float)
                                 else str(x) for x in r) + "\n")
        print("wrote %s (%d cells)" % (args.csv, len(rows)))
    if comm:
        comm.destroy()
    dist.destroy_process_group()


CPU_GROUP = None

if __name__ == "__main__":
    main()
