"""torch.distributed's shrink_group (ncclCommShrink) on sdma's NCCL drop-in:
run under LD_PRELOAD=libsdma-nccl.so with sdma-launch (4 ranks sharing one
GPU). Every rank initialises and all-reduces once; then the last rank dies
and the others shrink it away and all-reduce on the shrunk group, whose
result is checked. Prints "rank R: shrunk to N of M, all_reduce as
expected", the difference (exit 1), or that this torch has no shrink_group.

  LD_PRELOAD=build/lib/libsdma-nccl.so sdma-launch --nproc-per-node=4 \\
      python3 test/gpu/nccl_torch_shrink.py
"""
import inspect
import os
import sys

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dev = torch.device("cuda", 0)
torch.cuda.set_device(dev)
dist.init_process_group("nccl", device_id=dev)
x = torch.full((8,), float(rank + 1), device=dev)
dist.all_reduce(x)
torch.cuda.synchronize()
if not torch.equal(x.cpu(), torch.full((8,), world * (world + 1) / 2)):
    print("rank %d: all_reduce before the shrink wrong: %s" % (rank, x.tolist()))
    sys.exit(1)
shrink = getattr(dist, "shrink_group", None)
if shrink is None:
    print("rank %d: torch %s has no torch.distributed.shrink_group"
          % (rank, torch.__version__))
    sys.exit(0)
if rank == 0:
    print("shrink_group%s" % inspect.signature(shrink), flush=True)
if rank == world - 1:
    os._exit(0)
group = shrink([world - 1])
y = torch.full((8,), float(rank + 1), device=dev)
dist.all_reduce(y, group=group)
torch.cuda.synchronize()
want = (world - 1) * world / 2
n = dist.get_world_size(group)
ok = n == world - 1 and torch.equal(y.cpu(), torch.full((8,), want))
print("rank %d: shrunk to %d of %d, all_reduce %s"
      % (rank, n, world, "as expected" if ok else "WRONG: %s" % y.tolist()))
sys.exit(0 if ok else 1)
