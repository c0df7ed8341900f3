"""sdma from a torchrun job: copy this.

    torchrun --nproc-per-node=4 examples/torch/collectives.py            # GPUs
    sdma-launch --nproc-per-node=4 python3 examples/torch/collectives.py \\
        --device cpu                  # no GPU (sdma-launch sets torchrun's env)

(with PYTHONPATH=build/python). Each rank makes an sdma communicator from
torch.distributed's default group and runs an all-gather, an all-to-all, a
schedule of its own (--schedule, default the ring all-gather) and, on a GPU,
a step captured in a CUDA graph; every result is compared with what
torch.distributed computes for the same inputs.
"""
import argparse
import os

import torch
import torch.distributed as dist

import sdma

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--schedule", default=os.path.join(
        HERE, "..", "..", "schedules", "all_gather_ring.mlir"))
    parser.add_argument("--elements", type=int, default=4096)
    # NCCL refuses two ranks on one GPU: gloo there (and on the CPU).
    parser.add_argument("--backend", default=None)
    args = parser.parse_args()
    cuda = args.device == "cuda"
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)) %
                              torch.cuda.device_count())
    dist.init_process_group(args.backend or ("nccl" if cuda else "gloo"))
    comm = sdma.Communicator.from_process_group(device=args.device)
    R, me, n = comm.world_size, comm.rank, args.elements
    dev = torch.device("cuda" if cuda else "cpu")

    def sync():
        if cuda:
            torch.cuda.synchronize()

    # Inputs: random per rank; symmetric tensors from the communicator.
    gen = torch.Generator().manual_seed(1234 + me)
    x = comm.empty((n,), torch.float32)
    x.copy_(torch.randn(n, generator=gen))
    out = comm.empty((R, n), torch.float32)

    # 1. all-gather, against torch.distributed's.
    comm.all_gather_into_tensor(out, x)
    sync()
    ref = [torch.empty(n, device=dev) for _ in range(R)]
    dist.all_gather(ref, x.clone())
    assert torch.equal(out, torch.stack(ref)), "all_gather_into_tensor"

    # 2. all-to-all (equal splits), against torch.distributed's.
    a = comm.empty((R * n,), torch.float32)
    b = comm.empty((R * n,), torch.float32)
    a.copy_(torch.randn(R * n, generator=gen))
    comm.all_to_all_single(b, a)
    sync()
    # (gloo has no all_to_all: the reference slices an all-gather.)
    every = [torch.empty(R * n, device=dev) for _ in range(R)]
    dist.all_gather(every, a.clone())
    ref = torch.cat([every[p][me * n:(me + 1) * n] for p in range(R)])
    assert torch.equal(b, ref), "all_to_all_single"

    # 3. a schedule of one's own: here an all-gather (input 1 chunk,
    #    output one chunk per rank), compiled for this job's rank count.
    schedule = comm.load_schedule(args.schedule)
    out.zero_()
    schedule.launch(x, out)
    sync()
    ref = [torch.empty(n, device=dev) for _ in range(R)]
    dist.all_gather(ref, x.clone())
    assert torch.equal(out, torch.stack(ref)), "custom schedule"

    # 4. a training-like step captured once and replayed (GPU).
    if cuda:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            comm.all_gather_into_tensor(out, x)
        for step in range(3):
            x.copy_(torch.randn(n, generator=gen))
            graph.replay()
            sync()
            ref = [torch.empty(n, device=dev) for _ in range(R)]
            dist.all_gather(ref, x.clone())
            assert torch.equal(out, torch.stack(ref)), "graph step %d" % step

    comm.check_async_error()
    print("rank %d of %d: sdma matches torch.distributed (%s)"
          % (me, R, args.device), flush=True)
    comm.destroy()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
