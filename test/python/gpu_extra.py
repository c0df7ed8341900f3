"""The Python package on a GPU (run on the H200; not in CI):
  check  (under sdma-launch) CUDA-graph capture of a collective replayed
         with new data, and torch.compile of a step calling the custom op;
  bench  (one process) per-call latency of the torch op, direct and
         replayed from a CUDA graph, as CSV.
"""
import os
import sys
import time

import torch

import sdma


def check():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    comm = sdma.Communicator(rank, world, os.environ["SDMA_UNIQUE_ID"],
                             device="cuda")
    n = 4096
    x = comm.empty((n,), torch.float32)
    out = comm.empty((world, n), torch.float32)
    x.fill_(rank)
    comm.all_gather_into_tensor(out, x)  # warm-up: compile and check once
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        comm.all_gather_into_tensor(out, x)
    for i in range(5):
        x.fill_(rank * 10 + i)
        out.zero_()
        g.replay()
        torch.cuda.synchronize()
        want = torch.stack([torch.full((n,), float(r * 10 + i), device="cuda")
                            for r in range(world)])
        assert torch.equal(out, want), "graph replay %d" % i
    print("rank %d: CUDA graph replays checked" % rank, flush=True)
    if sdma.ops.AVAILABLE:
        h = comm.handle

        # The op's tensors must be the symmetric ones: graph inputs, not
        # intermediates (inductor allocates those).
        @torch.compile(fullgraph=True)
        def step(out, x):
            torch.ops.sdma.all_gather_into_tensor(out, x, h)
            return out.sum() * 2

        x.fill_(rank + 1)
        total = step(out, x)
        torch.cuda.synchronize()
        want = sum(2.0 * (r + 1) * n for r in range(world))
        assert abs(total.item() - want) < 1e-3, (total.item(), want)
        print("rank %d: torch.compile step checked (torch %s)"
              % (rank, torch.__version__), flush=True)
    else:
        print("rank %d: no torch.library.custom_op in torch %s"
              % (rank, torch.__version__), flush=True)
    comm.destroy()


def bench():
    comm = sdma.Communicator(0, 1, sdma.get_unique_id(), device="cuda")
    print("path,bytes,us_per_call")
    for nbytes in (1024, 65536, 1 << 20, 16 << 20):
        x = comm.empty((nbytes // 4,), torch.float32)
        out = comm.empty((nbytes // 4,), torch.float32)
        for _ in range(10):
            comm.all_gather_into_tensor(out, x)
        torch.cuda.synchronize()
        iters = 200
        samples = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(iters):
                comm.all_gather_into_tensor(out, x)
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t) / iters * 1e6)
        print("torch-op,%d,%.2f" % (nbytes, sorted(samples)[2]))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(50):
                comm.all_gather_into_tensor(out, x)
        g.replay()
        torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(4):
                g.replay()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t) / 200 * 1e6)
        print("torch-op-graph,%d,%.2f" % (nbytes, sorted(samples)[2]))
        comm.free(out)
        comm.free(x)
    comm.destroy()


if __name__ == "__main__":
    check() if sys.argv[1] == "check" else bench()
