"""The Python package across simulated nodes, under mpirun: a
Communicator.multi_node over sdma.MpiTransport (mpi4py), LOCAL ranks per
node; every collective it serves on tensors from comm.empty(), every
element compared with torch's own computation; a collective it does not
serve raises SdmaError and the communicator still works; a transport whose
exchange raises fails the call with its message.

usage: mpirun -np N multinode.py LOCAL
"""
import os
import sys
import traceback

sys.path.insert(0, os.environ["SDMA_PYTHON"])


def main():
    import torch
    import sdma
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    comm = sdma.Communicator.multi_node(
        sdma.MpiTransport(world, timeout_ms=10000),
        local_ranks=int(sys.argv[1]), device="cpu")
    r, n = comm.rank, comm.world_size
    count = 40

    def values(rank, size, salt):
        base = torch.arange(size, dtype=torch.int64) * 7 + rank * 13 + salt
        return ((base % 17) - 8).to(torch.float32)

    every = [values(p, n * count, 1) for p in range(n)]
    inp = comm.empty(n * count, dtype=torch.float32)
    out = comm.empty(n * count, dtype=torch.float32)
    inp.copy_(every[r])

    comm.all_gather_into_tensor(out, inp[:count])
    assert torch.equal(out, torch.cat([e[:count] for e in every])), "all-gather"
    comm.all_to_all_single(out, inp)
    assert torch.equal(out, torch.cat(
        [e[r * count:(r + 1) * count] for e in every])), "all-to-all"
    out.copy_(inp)
    comm.all_reduce(out)
    assert torch.equal(out, sum(every)), "all-reduce"
    small = comm.empty(count, dtype=torch.float32)
    comm.reduce_scatter_tensor(small, inp)
    assert torch.equal(small, sum(every)[r * count:(r + 1) * count]), \
        "reduce-scatter"

    try:
        comm.broadcast(inp, src=0)
        raise AssertionError("broadcast was not refused")
    except sdma.SdmaError as e:
        assert "not built for a multi-node communicator" in str(e), str(e)
    comm.all_gather_into_tensor(out, inp[:count])
    assert torch.equal(out, torch.cat([e[:count] for e in every])), \
        "all-gather after a refusal"
    print("rank %d of %d (node %d): every element as torch computes it" %
          (r, n, r // int(sys.argv[1])), flush=True)
    comm.destroy()


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.stdout.flush()
        os._exit(1)
