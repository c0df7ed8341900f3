#!/usr/bin/env python3
"""NCCL (torch.distributed, backend nccl) at world size 1, timed as
sdma-comm-test --case=bench times the C API: ITERS calls back to back, then
one synchronize; the median of 5 repetitions, per call. all_gather_into_tensor
and all_to_all_single at 1 KiB .. 64 MiB (output bytes), CSV like the
bench's: op,ranks,bytes,us_per_call.

usage: nccl_ws1.py [ITERS]
"""
import os
import sys
import time

import torch
import torch.distributed as dist

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 200
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
torch.cuda.set_device(0)
dist.init_process_group("nccl", rank=0, world_size=1)
print("op,ranks,bytes,us_per_call")
size = 1024
while size <= 64 << 20:
    inp = torch.empty(size // 4, dtype=torch.float32, device="cuda")
    out = torch.empty(size // 4, dtype=torch.float32, device="cuda")
    for name, call in (("allgather", lambda: dist.all_gather_into_tensor(out, inp)),
                       ("alltoall", lambda: dist.all_to_all_single(out, inp))):
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(iters):
                call()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - start) * 1e6 / iters)
        samples.sort()
        print("%s,1,%d,%.2f" % (name, size, samples[2]), flush=True)
    size *= 4
dist.destroy_process_group()
