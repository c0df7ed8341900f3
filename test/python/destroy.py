# A communicator destroyed while tensors in its heap are alive: the tensors
# stay readable (the heap is freed after the last one), calls are refused,
# and destroying twice is harmless. One rank on the CPU device.
import gc
import sys

import torch

import sdma

comm = sdma.Communicator(0, 1, sdma.get_unique_id(), device="cpu")
x = comm.empty((1024,), torch.float32)
y = comm.empty((1024,), torch.float32)
x.fill_(3.0)
comm.all_gather_into_tensor(y, x)
comm.destroy()
comm.destroy()
# The heap is still mapped: reading and writing the tensors works.
assert float(x.sum()) == 3072.0, float(x.sum())
assert float(y.sum()) == 3072.0, float(y.sum())
y.add_(1.0)
try:
    comm.all_gather_into_tensor(y, x)
    raise AssertionError("a call after destroy() was not refused")
except sdma.SdmaError as e:
    assert "destroyed" in str(e), str(e)
try:
    comm.empty((4,), torch.float32)
    raise AssertionError("empty() after destroy() was not refused")
except sdma.SdmaError as e:
    assert "destroyed" in str(e), str(e)
del x, y
gc.collect()
print("destroy with live tensors: tensors readable, calls refused, heap freed after the last")
sys.stdout.flush()
