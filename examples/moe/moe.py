"""MoE dispatch -> expert compute -> combine with sdma's all-to-allv, the
counts never leaving the GPU.

    torchrun --nproc-per-node=8 examples/moe/moe.py                 # GPUs
    sdma-launch --nproc-per-node=4 python3 examples/moe/moe.py --device cpu

(with PYTHONPATH=build/python). Every rank routes its tokens to the top-k of
E experts (E / world_size experts per rank) and dispatches each (token,
expert) row to the expert's rank, split sizes computed by torch on the
device (no .tolist(), no host sync). With --op 2d (the default) the
dispatch is comm.all_to_all_vdev_2d (torch's symmetric-memory op): rows
arrive grouped by local expert, each group padded to --align rows, so the
expert GEMM reads them in place, its group boundaries the dispatch's
out_splits_offsets; the combine is all_to_all_vdev_2d_offset with those
same splits and offsets. With --op rank the rows arrive grouped by source
rank (comm.all_to_all_v) and carry their expert ids alongside. The weighted
sum over the top-k is then checked against the same layer computed on the
rank alone, with every expert's weights (seeded alike everywhere).
"""
import argparse
import os

import torch

import sdma


def route(x, router, k):
    """Top-k experts and their softmax weights per token."""
    weights, experts = torch.topk((x @ router).softmax(-1), k, dim=-1)
    return experts, weights / weights.sum(-1, keepdim=True)


def dispatch_layout(experts, R, per_rank):
    """The (token, expert) pairs sorted by destination rank, then expert:
    the permutation and the rows each rank gets (all on the device)."""
    flat = experts.reshape(-1)
    order = torch.argsort(flat, stable=True)      # expert-major = rank-major
    splits = torch.bincount(flat // per_rank, minlength=R).to(torch.int64)
    return order, flat[order], splits


def grouped_forward(rows, splits_offsets, weights_local, R):
    """The expert GEMM on expert-major rows: local expert e owns rows
    [start_e, start_{e+1}) with start_e = offsets[e * R] (padding rows are
    computed and never sent back). Group boundaries stay on the device; a
    grouped-GEMM kernel (torch._grouped_mm, CUTLASS) takes the same ones."""
    starts = splits_offsets[1].view(-1, R)[:, 0]
    row = torch.arange(rows.shape[0], device=rows.device)
    expert = torch.bucketize(row, starts[1:], right=True)
    return torch.bmm(rows.unsqueeze(1), weights_local[expert]).squeeze(1)


def experts_forward(rows, ids, weights_local, first):
    """Each local expert's stand-in GEMM on the rows routed to it."""
    out = torch.zeros_like(rows)
    for e in range(weights_local.shape[0]):
        mask = ids == first + e
        out[mask] = rows[mask] @ weights_local[e]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--experts", type=int, default=None,
                   help="experts in all (a multiple of the world size; "
                        "default: 4 per rank)")
    p.add_argument("--topk", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--op", default="2d", choices=["2d", "rank"],
                   help="2d: all_to_all_vdev_2d into expert-major rows; "
                        "rank: all_to_all_v by source rank")
    p.add_argument("--align", type=int, default=4,
                   help="rows each expert's group is padded to (--op 2d)")
    args = p.parse_args()
    cuda = args.device == "cuda"
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)) %
                              torch.cuda.device_count())
    if "SDMA_UNIQUE_ID" in os.environ:  # sdma-launch
        comm = sdma.Communicator(int(os.environ["RANK"]),
                                 int(os.environ["WORLD_SIZE"]),
                                 os.environ["SDMA_UNIQUE_ID"],
                                 device=args.device)
    else:  # torchrun: meet through torch.distributed's store
        import torch.distributed as dist
        dist.init_process_group("gloo")
        comm = sdma.Communicator.from_process_group(device=args.device)
    R, me = comm.world_size, comm.rank
    T, H, K = args.tokens, args.hidden, args.topk
    E = args.experts if args.experts is not None else 4 * R
    if E % R != 0 or E < K:
        p.error("--experts %d must be a multiple of the world size %d and at "
                "least --topk %d" % (E, R, K))
    per_rank = E // R
    dev = torch.device("cuda" if cuda else "cpu")

    # Every rank knows every expert's weights (to check); it runs its own.
    g = torch.Generator().manual_seed(7)
    router = torch.randn(H, E, generator=g).to(dev)
    expert_w = (torch.randn(E, H, H, generator=g) / H ** 0.5).to(dev)
    local_w = expert_w[me * per_rank:(me + 1) * per_rank]

    # Capacity: the most rows one peer can get from this rank (and room for
    # the expert groups' padding on a receiver).
    A = args.align
    C = T * min(K, per_rank) + (per_rank * A + R - 1) // R
    send = comm.empty((R * C, H), torch.float32)
    recv = comm.empty((R * C, H), torch.float32)
    send_ids = comm.empty((R * C, 1), torch.int64)
    recv_ids = comm.empty((R * C, 1), torch.int64)
    back = comm.empty((R * C, H), torch.float32)
    splits_offsets = torch.empty((2, E), dtype=torch.int64, device=dev)
    back_offsets = torch.empty((2, E), dtype=torch.int64, device=dev)

    for step in range(args.steps):
        gen = torch.Generator().manual_seed(1000 * step + me)
        x = torch.randn(T, H, generator=gen).to(dev)
        experts, weights = route(x, router, K)

        # Dispatch: rows packed by destination rank; splits on the device.
        order, ids, splits = dispatch_layout(experts, R, per_rank)
        n = order.numel()
        send[:n] = x[order // K]
        if args.op == "2d":
            # Sorted by global expert = rank-major, then local expert: the
            # layout all_to_all_vdev_2d takes, its splits one per expert.
            in_splits = torch.bincount(ids, minlength=E).to(torch.int64)
            comm.all_to_all_vdev_2d(send, recv, in_splits, splits_offsets,
                                    major_align=A)
            back.copy_(grouped_forward(recv, splits_offsets, local_w, R))
            comm.all_to_all_vdev_2d_offset(back, send, splits_offsets,
                                           back_offsets)
        else:
            send_ids[:n, 0] = ids
            got = comm.all_to_all_v(recv, send, input_splits=splits)
            comm.all_to_all_v(recv_ids, send_ids, input_splits=splits)
            # Expert compute on what arrived (packed: the first got.sum()
            # rows; the rows past it are computed and ignored: no host sync).
            back.copy_(experts_forward(recv, recv_ids[:, 0], local_w,
                                       me * per_rank))
            # Combine: the reverse all-to-allv; splits are what each sent.
            comm.all_to_all_v(send, back, input_splits=got)
        out = torch.zeros(T, H, device=dev)
        out.index_add_(0, order // K,
                       send[:n] * weights.reshape(-1)[order].unsqueeze(1))
        comm.check_async_error()

        ref = torch.zeros(T, H, device=dev)
        for j in range(K):
            ref += weights[:, j:j + 1] * torch.bmm(
                x.unsqueeze(1), expert_w[experts[:, j]]).squeeze(1)
        if not torch.allclose(out, ref, rtol=1e-4, atol=1e-4):
            raise SystemExit("rank %d step %d: combine differs from the "
                             "reference by %g" % (me, step,
                                                  (out - ref).abs().max()))
    print("rank %d of %d: MoE dispatch/combine matches the reference (%s, "
          "%d steps, %d tokens, top-%d of %d experts, %s)"
          % (me, R, args.device, args.steps, T, K, E,
             "expert-major, aligned to %d" % A if args.op == "2d"
             else "by rank"), flush=True)
    comm.destroy()


if __name__ == "__main__":
    main()
