"""The Python package across simulated nodes: a Communicator.multi_node
over sdma.MpiTransport (mpi4py, under mpirun) or sdma.TorchTransport
(torch.distributed's gloo, processes spawned here as torchrun would, with
LOCAL_WORLD_SIZE giving the ranks per node); every collective it serves on
tensors from comm.empty(), every element compared with torch's own
computation; a collective it does not serve raises SdmaError and the
communicator still works.

usage: mpirun -np N multinode.py LOCAL
       multinode.py LOCAL torch NPROC
"""
import os
import sys
import traceback

sys.path.insert(0, os.environ["SDMA_PYTHON"])


def main(transport=None):
    import torch
    import sdma

    if transport is None:
        from mpi4py import MPI

        transport = sdma.MpiTransport(MPI.COMM_WORLD, timeout_ms=10000)
    # local_ranks 0: the launcher's (LOCAL_WORLD_SIZE with torch here).
    comm = sdma.Communicator.multi_node(
        transport, local_ranks=0 if transport.name == "torch" else
        int(sys.argv[1]), device="cpu")
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

    # Reductions in other types and operators: the f32-sum schedules'
    # node parts compute in the call's arithmetic (exact: small integers).
    cases = [(torch.bfloat16, "sum"), (torch.int32, "max"),
             (torch.float64, "min"), (torch.int64, "prod"),
             (torch.float16, "sum")]
    ops = {"sum": sdma.ReduceOp.SUM, "max": sdma.ReduceOp.MAX,
           "min": sdma.ReduceOp.MIN, "prod": sdma.ReduceOp.PRODUCT}
    for dtype, name in cases:
        typed = [e.to(dtype) for e in every]
        want = typed[0].clone()
        for e in typed[1:]:
            want = {"sum": torch.add, "max": torch.maximum,
                    "min": torch.minimum, "prod": torch.mul}[name](want, e)
        tin = comm.empty(n * count, dtype=dtype)
        tout = comm.empty(n * count, dtype=dtype)
        tin.copy_(typed[r])
        tout.copy_(tin)
        comm.all_reduce(tout, op=ops[name])
        assert torch.equal(tout, want), "all-reduce %s %s" % (dtype, name)
        tsmall = comm.empty(count, dtype=dtype)
        comm.reduce_scatter_tensor(tsmall, tin, op=ops[name])
        assert torch.equal(tsmall, want[r * count:(r + 1) * count]), \
            "reduce-scatter %s %s" % (dtype, name)
    # Avg, as on one node: the sum divided once by the job's ranks (in the
    # last phase that reduces; floats divide, integers truncate toward
    # zero: the sums here are negative too). All-reduce, reduce-scatter,
    # and a reduce to a rank of the last node.
    for dtype in (torch.float32, torch.int32, torch.bfloat16):
        typed = [e.to(dtype) for e in every]
        total = torch.stack([e.to(torch.float64) for e in typed]).sum(dim=0)
        want = (total / n if dtype.is_floating_point else
                torch.trunc(total / n)).to(dtype)
        tin = comm.empty(n * count, dtype=dtype)
        tout = comm.empty(n * count, dtype=dtype)
        tin.copy_(typed[r])
        tout.copy_(tin)
        comm.all_reduce(tout, op=sdma.ReduceOp.AVG)
        assert torch.equal(tout, want), "all-reduce %s avg" % dtype
        tsmall = comm.empty(count, dtype=dtype)
        comm.reduce_scatter_tensor(tsmall, tin, op=sdma.ReduceOp.AVG)
        assert torch.equal(tsmall, want[r * count:(r + 1) * count]), \
            "reduce-scatter %s avg" % dtype
        tout.copy_(tin)
        comm.reduce(tout, dst=n - 1, op=sdma.ReduceOp.AVG)
        assert torch.equal(tout, want if r == n - 1 else typed[r]), \
            "reduce %s avg" % dtype
    # PreMulSum, each rank its own factor (r + 1; a number, then a
    # one-element tensor read when the call runs): scaled as each node
    # first reduces its ranks' inputs, summed after.
    for dtype in (torch.float32, torch.bfloat16):
        typed = [e.to(dtype) for e in every]
        want = torch.stack([(p + 1) * typed[p].to(torch.float64)
                            for p in range(n)]).sum(dim=0).to(dtype)
        factors = (float(r + 1), comm.empty(1, dtype=dtype).fill_(r + 1))
        for factor in factors:
            tin = comm.empty(n * count, dtype=dtype)
            tout = comm.empty(n * count, dtype=dtype)
            tin.copy_(typed[r])
            tout.copy_(tin)
            comm.all_reduce(tout, op=sdma.premul_sum(factor))
            assert torch.equal(tout, want), "all-reduce %s premul" % dtype
            tsmall = comm.empty(count, dtype=dtype)
            comm.reduce_scatter_tensor(tsmall, tin, op=sdma.premul_sum(factor))
            assert torch.equal(tsmall, want[r * count:(r + 1) * count]), \
                "reduce-scatter %s premul" % dtype

    # All-to-allv, capacity slots (rows of 8 floats, 5 per slot): rank r
    # sends splits[p] rows of its slot p to rank p's slot r.
    rows = inp.view(n * 5, 8)
    got = out.view(n * 5, 8)
    out.fill_(1e9)
    splits = torch.tensor([(r + 2 * p) % 6 for p in range(n)],
                          dtype=torch.int64)
    received = comm.all_to_all_v(got, rows, input_splits=splits,
                                 layout="slots")
    for p in range(n):
        k = (p + 2 * r) % 6
        assert int(received[p]) == k, "all-to-allv count from %d" % p
        sent = every[p].view(n * 5, 8)[r * 5:r * 5 + k]
        assert torch.equal(got[p * 5:p * 5 + k], sent), "all-to-allv rows"
        assert bool((got[p * 5 + k:(p + 1) * 5] == 1e9).all()), \
            "all-to-allv wrote past a count"
    # Rooted, in place: a broadcast from the last rank, a reduce (max) to
    # rank 1; the other ranks' tensors keep their values.
    out.copy_(inp)
    comm.broadcast(out, src=n - 1)
    assert torch.equal(out, every[n - 1]), "broadcast"
    out.copy_(inp)
    comm.reduce(out, dst=1, op=sdma.ReduceOp.MAX)
    want = torch.stack(every).max(dim=0).values if r == 1 else every[r]
    assert torch.equal(out, want), "reduce"
    comm.scatter(small, inp, src=0)
    assert torch.equal(small, every[0][r * count:(r + 1) * count]), "scatter"
    out.fill_(0)
    comm.gather(inp[:count], out, dst=n - 1)
    if r == n - 1:
        assert torch.equal(out, torch.cat([e[:count] for e in every])), \
            "gather"
    # Point-to-point, only the peers calling: one batch sends to the next
    # rank and the rank halfway round (on this node or another) and
    # receives from theirs; then rank 0 alone sends to the last rank.
    nxt, prv = (r + 1) % n, (r + n - 1) % n
    far, frm = (r + n // 2) % n, (r + n - n // 2) % n
    a, b = comm.empty(count, dtype=torch.float32), \
        comm.empty(count, dtype=torch.float32)
    for work in comm.batch_isend_irecv([
            sdma.P2POp(sdma.isend, inp[:count], nxt),
            sdma.P2POp(sdma.irecv, a, prv),
            sdma.P2POp(sdma.isend, inp[count:2 * count], far),
            sdma.P2POp(sdma.irecv, b, frm)]):
        work.wait()
    assert torch.equal(a, every[prv][:count]), "send/recv next"
    assert torch.equal(b, every[frm][count:2 * count]), "send/recv far"
    if r == 0:
        comm.send(inp[:count], dst=n - 1)
    if r == n - 1:
        comm.recv(a, src=0)
        assert torch.equal(a, every[0][:count]), "send/recv pair"
    try:
        comm.all_to_all_v(got, rows, input_splits=splits, layout="packed")
        raise AssertionError("a packed all-to-allv was not refused")
    except sdma.SdmaError as e:
        assert "only the slots layout" in str(e), str(e)
    comm.all_gather_into_tensor(out, inp[:count])
    assert torch.equal(out, torch.cat([e[:count] for e in every])), \
        "all-gather after a refusal"
    print("rank %d of %d (node %d, %s transport): every element as torch "
          "computes it" % (r, n, r // int(sys.argv[1]), transport.name),
          flush=True)
    comm.destroy()


def spawned(rank, world, local, port):
    """One rank as torchrun starts it: its environment, gloo, then main()."""
    try:
        import torch.distributed as dist
        import sdma

        os.environ["LOCAL_WORLD_SIZE"] = str(local)
        os.environ["LOCAL_RANK"] = str(rank % local)
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" %
                                port, rank=rank, world_size=world)
        main(sdma.TorchTransport())
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.stdout.flush()
        os._exit(1)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "torch":
        import multiprocessing as mp
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        world, local = int(sys.argv[3]), int(sys.argv[1])
        procs = [mp.get_context("spawn").Process(
            target=spawned, args=(r, world, local, port))
            for r in range(world)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=300)
        sys.exit(max(p.exitcode or 0 for p in procs))
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.stdout.flush()
        os._exit(1)
