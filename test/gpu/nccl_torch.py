"""An unmodified torch.distributed program (backend "nccl") for the NCCL
drop-in: run it under LD_PRELOAD=libsdma-nccl.so with sdma-launch (ranks
sharing one GPU, which real NCCL 2.28 refuses). Every result is compared
with the value computed locally from every rank's deterministic input.
Covers: init_process_group(device_id=...) (ncclCommInitRankConfig),
all_gather_into_tensor, reduce_scatter_tensor, all_reduce (PREMUL_SUM too; SUM, MAX, MIN,
PRODUCT, AVG), broadcast from every root, barrier, all_to_all_single with equal
splits (ncclAlltoAll) and with split sizes (ncclSend/ncclRecv in a group),
batch_isend_irecv in a ring and a send/recv pair, new_group (ncclCommSplit) and an all_reduce on it,
a DDP step (gradients averaged across ranks), and an all_reduce captured
in a CUDA graph and replayed. Prints "rank R of N: torch on sdma's NCCL
drop-in as expected" or the first difference (exit 1).

  LD_PRELOAD=build/lib/libsdma-nccl.so sdma-launch --nproc-per-node=2 \\
      python3 test/gpu/nccl_torch.py
"""
import os
import sys

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dev = torch.device("cuda", 0)
torch.cuda.set_device(dev)
failures = []


def data(r, n, dtype=torch.float32, base=0):
    """Rank r's input: small integers, exact in every reduction."""
    i = torch.arange(n, dtype=torch.int64)
    return (((r * 7 + i * 3 + base) % 11) - 5).to(dtype)


def expect(name, got, want):
    got = got.detach().cpu()
    if not torch.equal(got, want.to(got.dtype)):
        bad = (got != want.to(got.dtype)).nonzero()
        failures.append("%s: %d elements differ, first at %s"
                        % (name, bad.shape[0], bad[0].tolist()))


dist.init_process_group("nccl", device_id=dev)
n = 1000

# all_gather_into_tensor
x = data(rank, n).to(dev)
out = torch.empty(world * n, device=dev)
dist.all_gather_into_tensor(out, x)
expect("all_gather_into_tensor", out, torch.cat([data(r, n) for r in range(world)]))

# reduce_scatter_tensor (SUM)
x = data(rank, world * n).to(dev)
out = torch.empty(n, device=dev)
dist.reduce_scatter_tensor(out, x)
expect("reduce_scatter_tensor",
       out, sum(data(r, world * n) for r in range(world))[rank * n:(rank + 1) * n])

# all_reduce with each operator
for op, fold in ((dist.ReduceOp.SUM, lambda a, b: a + b),
                 (dist.ReduceOp.MAX, torch.maximum),
                 (dist.ReduceOp.MIN, torch.minimum),
                 (dist.ReduceOp.PRODUCT, lambda a, b: a * b),
                 (dist.ReduceOp.AVG, None)):
    t = data(rank, n).to(dev)
    dist.all_reduce(t, op=op)
    if fold is None:  # AVG: the sum divided once by the rank count
        want = sum(data(r, n) for r in range(world)) / world
    else:
        want = data(0, n)
        for r in range(1, world):
            want = fold(want, data(r, n))
    expect("all_reduce %s" % op, t, want)

# PREMUL_SUM (ncclRedOpCreatePreMulSum with a host scalar, as FSDP's
# gradient pre-division makes it): all_reduce and reduce_scatter_tensor.
t = data(rank, world * n).to(dev)
dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.25))
want = sum(data(r, world * n) * 0.25 for r in range(world))
expect("all_reduce PREMUL_SUM", t, want)
out = torch.empty(n, device=dev)
dist.reduce_scatter_tensor(out, data(rank, world * n).to(dev),
                           op=dist._make_nccl_premul_sum(0.25))
expect("reduce_scatter_tensor PREMUL_SUM", out, want[rank * n:(rank + 1) * n])
# A tensor factor (ncclScalarDevice, read when the call runs), each rank its own.
factor = torch.tensor([0.5 * (rank + 1)], device=dev)
t = data(rank, world * n).to(dev)
dist.all_reduce(t, op=dist._make_nccl_premul_sum(factor))
expect("all_reduce PREMUL_SUM tensor factor", t,
       sum(data(r, world * n) * 0.5 * (r + 1) for r in range(world)))

# broadcast from every root
for root in range(world):
    t = data(rank, n, torch.bfloat16).to(dev)
    dist.broadcast(t, src=root)
    expect("broadcast root %d" % root, t, data(root, n, torch.bfloat16))

dist.barrier()

# all_to_all_single, equal splits
x = data(rank, world * n).to(dev)
out = torch.empty(world * n, device=dev)
dist.all_to_all_single(out, x)
expect("all_to_all_single", out,
       torch.cat([data(r, world * n)[rank * n:(rank + 1) * n] for r in range(world)]))

# all_to_all_single with split sizes (ncclSend/ncclRecv per peer with a
# non-zero split, in one group): rank r sends (r + p) % 3 + 1 rows to p.
rows = 3
send_splits = [(rank + p) % 3 + 1 for p in range(world)]
recv_splits = [(p + rank) % 3 + 1 for p in range(world)]
x = data(rank, sum(send_splits) * rows).to(dev).view(-1, rows)
out = torch.empty(sum(recv_splits), rows, device=dev)
dist.all_to_all_single(out, x, output_split_sizes=recv_splits,
                       input_split_sizes=send_splits)
parts = []
for p in range(world):
    theirs = data(p, sum((p + q) % 3 + 1 for q in range(world)) * rows).view(-1, rows)
    start = sum((p + q) % 3 + 1 for q in range(rank))
    parts.append(theirs[start:start + (p + rank) % 3 + 1])
expect("all_to_all_single with split sizes", out, torch.cat(parts))

# send/recv in a ring (batch_isend_irecv: one group), and a lone pair.
x = data(rank, 4 * n).to(dev)
y = torch.empty(4 * n, device=dev)
works = dist.batch_isend_irecv([
    dist.P2POp(dist.isend, x, (rank + 1) % world),
    dist.P2POp(dist.irecv, y, (rank - 1) % world)])
for w in works:
    w.wait()
expect("batch_isend_irecv ring", y, data((rank - 1) % world, 4 * n))
if rank == 0:
    dist.send(data(0, 1 << 20).to(dev), dst=world - 1)
elif rank == world - 1:
    y = torch.empty(1 << 20, device=dev)
    dist.recv(y, src=0)
    expect("send/recv pair", y, data(0, 1 << 20))

# new_group of the even ranks, and an all_reduce on it
evens = list(range(0, world, 2))
group = dist.new_group(evens)
if rank in evens:
    t = data(rank, n).to(dev)
    dist.all_reduce(t, group=group)
    expect("all_reduce on new_group", t, sum(data(r, n) for r in evens))

# A DDP step: the gradient is the mean of every rank's.
torch.manual_seed(0)
model = torch.nn.Linear(16, 4, bias=False).to(dev)
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
inputs = [data(r, 8 * 16).view(8, 16) for r in range(world)]
ddp(inputs[rank].to(dev)).sum().backward()
ref = torch.nn.Linear(16, 4, bias=False)
ref.weight.data.copy_(model.weight.data.cpu())
grads = []
for r in range(world):
    ref.zero_grad()
    ref(inputs[r]).sum().backward()
    grads.append(ref.weight.grad.clone())
want = sum(grads) / world
got = model.weight.grad.cpu()
if not torch.allclose(got, want, rtol=1e-5, atol=1e-5):
    failures.append("DDP gradient: max difference %g"
                    % (got - want).abs().max().item())

# An all_reduce captured in a CUDA graph, replayed with new data.
t = torch.zeros(n, device=dev)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    dist.all_reduce(t)  # warm up outside the capture
torch.cuda.current_stream().wait_stream(s)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    dist.all_reduce(t)
for step in range(3):
    t.copy_(data(rank, n, base=step).to(dev))
    graph.replay()
    torch.cuda.synchronize()
    expect("graph replay %d" % step, t, sum(data(r, n, base=step) for r in range(world)))

dist.barrier()
torch.cuda.synchronize()
dist.destroy_process_group()
if failures:
    for f in failures:
        print("rank %d: %s" % (rank, f))
    sys.exit(1)
print("rank %d of %d: torch on sdma's NCCL drop-in as expected" % (rank, world))
