#!/usr/bin/env python3
"""NCCL baseline for the multi-GPU benchmark: all_gather_into_tensor and
all_to_all_single through torch.distributed, one process per GPU, 1 KiB to
MAX MiB per rank (powers of 4), median of RUNS runs with CUDA events around
each collective (the slowest rank's median), output checked for every size.
Two variants: "nccl" calls the collective from Python each run (what a
PyTorch program pays, host launch included, as sdma's rows include theirs);
"nccl-graph" captures it once into a CUDA graph and replays it (no Python
or NCCL host work per run: NCCL's best small-message latency).
Writes the same CSV columns as collective_bench to stdout.

NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0.

usage: nccl_bench.py GPUS [RUNS] [MAX_MIB]
"""
import os
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, runs, max_bytes, port):
    gpus = "+".join(str(i) for i in range(world))
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    size = 1024
    while size <= max_bytes:
        for collective in ("all_gather", "all_to_all"):
            # byte i of rank r's input: (r * 131 + i * 7) mod 256
            idx = torch.arange(size, device="cuda", dtype=torch.int64)
            inp = ((rank * 131 + idx * 7) % 256).to(torch.uint8)
            out = torch.empty(size * world if collective == "all_gather" else size,
                              dtype=torch.uint8, device="cuda")

            def op():
                if collective == "all_gather":
                    dist.all_gather_into_tensor(out, inp)
                else:
                    dist.all_to_all_single(out, inp)

            def timed(run):
                for _ in range(5):
                    run()
                torch.cuda.synchronize()
                times = []
                start = torch.cuda.Event(enable_timing=True)
                stop = torch.cuda.Event(enable_timing=True)
                for _ in range(runs):
                    start.record()
                    run()
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop) * 1000.0)
                times.sort()
                return times[len(times) // 2]

            total = size * world if collective == "all_gather" else size

            def report(variant, t, w):
                # The slowest rank's median; wrong bytes summed over ranks.
                v = torch.tensor([t, float(w)], device="cuda", dtype=torch.float64)
                t_max = v[:1].clone()
                dist.all_reduce(t_max, op=dist.ReduceOp.MAX)
                w_sum = v[1:].clone()
                dist.all_reduce(w_sum)
                if rank == 0:
                    t = float(t_max[0])
                    algbw = total / (t * 1e3)
                    busbw = algbw * (world - 1) / world
                    print(f"{collective},{variant},{size},{t:.3f},{algbw:.3f},"
                          f"{busbw:.3f},{runs},{int(w_sum[0])},"
                          f"{out.numel() * world},{world},{gpus},-1.0",
                          flush=True)

            def wrong_bytes():
                # All-gather's block j is rank j's input; all-to-all's block
                # j is rank j's block `rank`.
                torch.cuda.synchronize()
                wrong = 0
                if collective == "all_gather":
                    for j in range(world):
                        want = ((j * 131 + idx * 7) % 256).to(torch.uint8)
                        wrong += int((out[j * size:(j + 1) * size] != want).sum())
                else:
                    piece = size // world
                    for j in range(world):
                        src = torch.arange(rank * piece, (rank + 1) * piece,
                                           device="cuda", dtype=torch.int64)
                        want = ((j * 131 + src * 7) % 256).to(torch.uint8)
                        wrong += int((out[j * piece:(j + 1) * piece] != want).sum())
                return wrong

            med = timed(op)
            out.zero_()
            op()
            report("nccl", med, wrong_bytes())
            if os.environ.get("SDMA_NCCL_GRAPH", "1") == "1":
                # The same collective captured into a graph (on a side
                # stream, as torch.cuda.graph requires), replayed.
                graph = torch.cuda.CUDAGraph()
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    op()  # warm-up on the capturing stream
                    with torch.cuda.graph(graph, stream=side):
                        op()
                torch.cuda.current_stream().wait_stream(side)
                torch.cuda.synchronize()
                med_graph = timed(graph.replay)
                out.zero_()
                graph.replay()
                report("nccl-graph", med_graph, wrong_bytes())
                del graph
        size *= 4
    dist.destroy_process_group()


def main():
    world = int(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    max_bytes = (int(sys.argv[3]) if len(sys.argv) > 3 else 64) << 20
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r, world, runs, max_bytes, 29517))
             for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    sys.exit(max(p.exitcode for p in procs))


if __name__ == "__main__":
    main()
