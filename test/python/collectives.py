"""The sdma Python package as a torch job runs it: N processes (spawned),
each a Communicator made from a unique id, a torch.distributed process
group (gloo, through its store) or, under mpirun, mpi4py; every collective
on torch tensors in symmetric memory, every element compared with torch's
own computation; point-to-point (send, recv, batch_isend_irecv) on plain
tensors; wrong arguments refused before launch.

usage: collectives.py (id|group) NPROC DEVICE [SCHEDULE]
       mpirun -np N collectives.py mpi 0 DEVICE [SCHEDULE]
"""
import multiprocessing as mp
import os
import socket
import sys
import traceback


def expect_error(fn, needle):
    import sdma

    try:
        fn()
    except sdma.SdmaError as e:
        if needle in str(e):
            return
        raise AssertionError("expected '%s', got '%s'" % (needle, e))
    raise AssertionError("expected an SdmaError mentioning '%s'" % needle)


def values(rank, n, dtype, salt):
    import torch

    base = torch.arange(n, dtype=torch.int64) * 7 + rank * 1000 + salt * 31
    return (base % 113).to(dtype)


def check_rank(comm, device, schedule):
    import torch
    import sdma

    R, me = comm.world_size, comm.rank
    dev = torch.device("cpu") if device == "cpu" else torch.device("cuda")

    def sync():
        if device != "cpu":
            torch.cuda.current_stream().synchronize()

    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.uint8):
        for k in (1, 5, 1000):
            x = comm.empty((k,), dtype)
            out = comm.empty((R, k), dtype)
            x.copy_(values(me, k, dtype, 1))
            comm.all_gather_into_tensor(out, x)
            sync()
            want = torch.stack([values(r, k, dtype, 1) for r in range(R)])
            assert torch.equal(out.cpu(), want), ("all_gather", dtype, k)

            a = comm.empty((R * k,), dtype)
            b = comm.empty((R * k,), dtype)
            a.copy_(values(me, R * k, dtype, 2))
            comm.all_to_all_single(b, a)
            sync()
            want = torch.cat([values(p, R * k, dtype, 2)[me * k:(me + 1) * k]
                              for p in range(R)])
            assert torch.equal(b.cpu(), want), ("all_to_all", dtype, k)
            comm.all_to_all_single(a, a)  # in place
            sync()
            assert torch.equal(a.cpu(), want), ("all_to_all in place", dtype)

            for src in range(R):
                x.copy_(values(me, k, dtype, 3 + src))
                comm.broadcast(x, src)
                sync()
                assert torch.equal(x.cpu(), values(src, k, dtype, 3 + src)), \
                    ("broadcast", dtype, k, src)
                a.copy_(values(me, R * k, dtype, 4))
                comm.scatter(x, a, src)
                sync()
                want = values(src, R * k, dtype, 4)[me * k:(me + 1) * k]
                assert torch.equal(x.cpu(), want), ("scatter", dtype, src)
                x.copy_(values(me, k, dtype, 5))
                out.fill_(7)
                comm.gather(x, out, src)
                sync()
                if me == src:
                    want = torch.stack([values(r, k, dtype, 5)
                                        for r in range(R)])
                else:
                    want = torch.full((R, k), 7, dtype=dtype)
                assert torch.equal(out.cpu(), want), ("gather", dtype, src)
            for t in (b, a, out, x):
                comm.free(t)

    # Reductions, against torch's own reduction of every rank's values
    # (small integers: exact in every dtype, fp32 accumulation or not).
    # Each dtype with one operator (the kernels' arithmetic is tested in
    # depth by comm-reduce.test and ldst-cpu/reductions.test); operators
    # as sdma's ReduceOp and as torch.distributed's.
    fold = {"SUM": lambda t: t.sum(0), "MAX": lambda t: t.max(0).values,
            "MIN": lambda t: t.min(0).values, "PRODUCT": lambda t: t.prod(0),
            "AVG": lambda t: t.sum(0) / R}
    try:
        import torch.distributed as dist
        torch_op = lambda name: getattr(dist.ReduceOp, name)
    except (ImportError, AttributeError):
        torch_op = lambda name: getattr(sdma.ReduceOp, name)
    cases = [(torch.float32, sdma.ReduceOp.SUM, "SUM"),
             (torch.bfloat16, torch_op("PRODUCT"), "PRODUCT"),
             (torch.float16, torch_op("MAX"), "MAX"),
             (torch.int32, sdma.ReduceOp.MIN, "MIN"),
             (torch.float64, torch_op("AVG"), "AVG")]

    def small(rank, n, dtype, salt, prod):
        v = values(rank, n, torch.int64, salt)
        v = (v % 2) + 1 if prod else v % 9 - (0 if dtype == torch.uint8 else 4)
        return v.to(dtype)

    for n, (dtype, op, name) in enumerate(cases):
        prod = name == "PRODUCT"
        for k in (3, 4 * R):
            every = torch.stack([small(r, k, dtype, 10 + n, prod)
                                 for r in range(R)])
            want = fold[name](every.double()).to(dtype)
            x = comm.empty((k,), dtype)
            x.copy_(every[me])
            comm.all_reduce(x, op)
            sync()
            assert torch.equal(x.cpu(), want), ("all_reduce", dtype, name, k)
            big = comm.empty((R * k,), dtype)
            every = torch.stack([small(r, R * k, dtype, 20 + n, prod)
                                 for r in range(R)])
            big.copy_(every[me])
            comm.reduce_scatter_tensor(x, big, op)
            sync()
            want = fold[name](every.double()).to(dtype)[me * k:(me + 1) * k]
            assert torch.equal(x.cpu(), want), ("reduce_scatter", dtype, k)
            dst = (n + k) % R
            x.copy_(small(me, k, dtype, 30 + n, prod))
            comm.reduce(x, dst, op)
            sync()
            want = fold[name](torch.stack([small(r, k, dtype, 30 + n, prod)
                                           for r in range(R)]).double())
            want = want.to(dtype) if me == dst else \
                small(me, k, dtype, 30 + n, prod)
            assert torch.equal(x.cpu(), want), ("reduce", dtype, dst)
            comm.free(big)
            comm.free(x)
    # PREMUL_SUM as sdma.premul_sum(factor): every rank's tensor times the
    # factor, summed (products exact here); torch's own PREMUL_SUM object
    # hides its factor and is refused, naming what to pass instead.
    for n, (dtype, factor) in enumerate(((torch.float32, 0.5),
                                         (torch.bfloat16, 0.25),
                                         (torch.int32, -3))):
        every = torch.stack([small(r, 4 * R, dtype, 40 + n, False)
                             for r in range(R)])
        x = comm.empty((4 * R,), dtype)
        x.copy_(every[me])
        comm.all_reduce(x, sdma.premul_sum(factor))
        sync()
        want = (every.double() * factor).sum(0).to(dtype)
        assert torch.equal(x.cpu(), want), ("premul all_reduce", dtype)
        out = comm.empty((4,), dtype)
        x.copy_(every[me])
        comm.reduce_scatter_tensor(out, x, sdma.premul_sum(factor))
        sync()
        assert torch.equal(out.cpu(), want[me * 4:(me + 1) * 4]), \
            ("premul reduce_scatter", dtype)
        comm.free(out)
        comm.free(x)
    x = comm.empty((8,), torch.float32)
    try:
        import torch.distributed as dist
        torch_premul = dist._make_nccl_premul_sum(0.5)
    except (ImportError, AttributeError):
        torch_premul = "PREMUL_SUM"
    expect_error(lambda: comm.all_reduce(x, torch_premul),
                 "pass sdma.premul_sum(factor)")
    expect_error(lambda: sdma.premul_sum(torch.ones(2)), "one element")
    expect_error(lambda: sdma.premul_sum("2"), "a Python number")
    # A one-element tensor factor (NCCL's scalar in device memory): read
    # when each call runs, so changing it changes the next call's result.
    factor = torch.zeros(1, dtype=torch.float32, device=dev)
    every = torch.stack([small(r, 4 * R, torch.float32, 50, False)
                         for r in range(R)])
    y = comm.empty((4 * R,), torch.float32)
    for value in (0.5, 2.0):
        factor.fill_(value * (me + 1))
        y.copy_(every[me])
        comm.all_reduce(y, sdma.premul_sum(factor))
        sync()
        want = sum(every[r].double() * value * (r + 1) for r in range(R))
        assert torch.equal(y.cpu(), want.to(torch.float32)), \
            ("premul tensor factor", value)
    expect_error(lambda: comm.all_reduce(
        y, sdma.premul_sum(torch.ones(1, dtype=torch.float64, device=dev))),
        "the factor tensor is torch.float64")
    comm.free(y)
    i = comm.empty((8,), torch.int32)
    expect_error(lambda: comm.all_reduce(i, sdma.premul_sum(0.5)),
                 "an integral factor")
    expect_error(lambda: comm.all_reduce(i, sdma.premul_sum(2 ** 40)),
                 "an integral factor")
    comm.free(i)
    expect_error(lambda: comm.all_reduce(x, "BAND"), "not BAND")
    expect_error(lambda: comm.reduce_scatter_tensor(x, x), "needs world_size")
    comm.free(x)

    # A user schedule (an all-gather), launched on tensors.
    if schedule:
        s = comm.load_schedule(schedule)
        assert [c for _, c in s.buffers] == [1, R], s.buffers
        x = comm.empty((33,), torch.float32)
        out = comm.empty((R, 33), torch.float32)
        for salt in (6, 7):
            x.copy_(values(me, 33, torch.float32, salt))
            s.launch(x, out)
            sync()
            want = torch.stack([values(r, 33, torch.float32, salt)
                                for r in range(R)])
            assert torch.equal(out.cpu(), want), "schedule"

    # all_to_all_v: splits on the device, both layouts, against the
    # packed/slotted rows torch computes from every rank's splits.
    C, H = 5, 3
    gen = torch.Generator().manual_seed(42)
    splits_all = torch.randint(0, C + 1, (R, R), generator=gen)
    for layout in ("packed", "slots"):
        x = comm.empty((R * C, H), torch.bfloat16)
        y = comm.empty((R * C, H), torch.bfloat16)
        x.copy_(values(me, R * C * H, torch.bfloat16, 9).view(R * C, H))
        y.fill_(-1)
        got = comm.all_to_all_v(y, x, input_splits=splits_all[me].to(dev),
                               layout=layout)
        sync()
        assert torch.equal(got.cpu(), splits_all[:, me]), "output_splits"
        want = torch.full((R * C, H), -1, dtype=torch.bfloat16)
        at = 0
        for r in range(R):
            xr = values(r, R * C * H, torch.bfloat16, 9).view(R * C, H)
            n = int(splits_all[r, me])
            src = (int(splits_all[r, :me].sum()) if layout == "packed"
                   else me * C)
            dst = at if layout == "packed" else r * C
            want[dst:dst + n] = xr[src:src + n]
            at += n
        assert torch.equal(y.cpu(), want), "all_to_all_v " + layout
    splits = torch.zeros(R, dtype=torch.int64, device=dev)
    expect_error(lambda: comm.all_to_all_v(y, x, input_splits=splits.int()),
                 "input_splits must be a contiguous int64 tensor")
    expect_error(lambda: comm.all_to_all_v(y, x, input_splits=splits,
                                           layout="rows"),
                 "layout is 'packed' or 'slots'")
    # The splits are keyword-only (torch's all_to_all_single orders its
    # host split lists output first): a positional call is a TypeError.
    try:
        comm.all_to_all_v(y, x, splits)
        raise AssertionError("all_to_all_v took its splits by position")
    except TypeError:
        pass
    expect_error(lambda: comm.all_to_all_v(y[:R], x[:R].clone(),
                                           input_splits=splits),
                 "not symmetric memory")

    check_moe_2d(comm, dev, sync)

    # Arrays from other frameworks, through DLPack, without a copy.
    if device == "cpu":
        x = comm.empty((16,), torch.float32)
        out = comm.empty((R, 16), torch.float32)
        x.copy_(values(me, 16, torch.float32, 8))
        comm.all_gather_into_tensor(out.numpy(), x.numpy())
        want = torch.stack([values(r, 16, torch.float32, 8)
                            for r in range(R)])
        assert torch.equal(out, want), "numpy through DLPack"

    # Refused before anything runs.
    x = comm.empty((8,), torch.float32)
    out = comm.empty((R, 8), torch.float32)
    expect_error(lambda: comm.all_gather_into_tensor(out[:, :4], x),
                 "not contiguous")
    expect_error(lambda: comm.all_gather_into_tensor(
        comm.empty((R, 8), torch.float64), x), "output is torch.float64")
    expect_error(lambda: comm.all_gather_into_tensor(
        out, torch.zeros(8, dtype=torch.float32, device=dev)),
        "not symmetric memory")
    expect_error(lambda: comm.all_to_all_single(out.view(-1)[:R * 3], x),
                 "same number of elements")
    expect_error(lambda: comm.broadcast(x, R), "is not a rank")
    expect_error(lambda: comm.all_gather_into_tensor(
        out, torch.zeros(8, dtype=torch.float32, device="meta")), "meta")
    if schedule:
        expect_error(lambda: s.launch(x), "takes 2 buffers")
    comm.check_async_error()
    if not sdma.ops.AVAILABLE and me == 0:
        print("torch.compile custom ops: skipped (torch %s has no "
              "torch.library.custom_op; 2.4 or later does)" % torch.__version__,
              flush=True)


def check_moe_2d(comm, dev, sync):
    """all_to_all_vdev_2d and its _offset against torch's definition."""
    import torch

    R, me = comm.world_size, comm.rank
    H = 3
    gen = torch.Generator().manual_seed(43)
    # all_to_all_vdev_2d / _offset (torch's symmetric-memory MoE ops, same
    # arguments): dispatch into padded expert-major rows, then the combine
    # on its output gives the input rows back. Expected layout computed
    # here from every rank's splits.
    E, A, B = 3, 4, 3
    C2 = B + (E * A + R - 1) // R
    table = torch.randint(0, 2, (R, R * E), generator=gen) * \
        torch.randint(0, B // 2 + 1, (R, R * E), generator=gen)
    x = comm.empty((R * C2, H), torch.bfloat16)
    mid = comm.empty((R * C2, H), torch.bfloat16)
    back = comm.empty((R * C2, H), torch.bfloat16)
    x.copy_(values(me, R * C2 * H, torch.bfloat16, 10).view(R * C2, H))
    mid.fill_(-1)
    back.fill_(-1)
    out_so = torch.full((2, E * R), -7, dtype=torch.int64, device=dev)
    back_so = torch.full((2, R * E), -7, dtype=torch.int64, device=dev)
    if os.environ.get("SDMA_TEST_NO_COMPILER"):
        # Programs only (a pip install run without the compiler): the MoE
        # pair is compiled per expert count, so this one has no program; the
        # call is refused naming the file, and the communicator goes on.
        expect_error(lambda: comm.all_to_all_vdev_2d(x, mid, table[me].to(dev),
                                                     out_so, major_align=A),
                     "all_to_allv_2d_e3_a4-%d.hip" % R)
        return
    comm.all_to_all_vdev_2d(x, mid, table[me].to(dev), out_so, major_align=A)
    comm.all_to_all_vdev_2d_offset(mid, back, out_so, back_so)
    sync()
    want = torch.full((R * C2, H), -1, dtype=torch.bfloat16)
    want_so = torch.zeros((2, E * R), dtype=torch.int64)
    at = 0
    for e in range(E):
        start = at
        for r in range(R):
            xr = values(r, R * C2 * H, torch.bfloat16, 10).view(R * C2, H)
            n = int(table[r, me * E + e])
            src = int(table[r, :me * E + e].sum())
            want[at:at + n] = xr[src:src + n]
            want_so[0, e * R + r], want_so[1, e * R + r] = n, at
            at += n
        at = start + max(A, (at - start + A - 1) // A * A)
    assert torch.equal(mid.cpu(), want), "all_to_all_vdev_2d rows"
    assert torch.equal(out_so.cpu(), want_so), "all_to_all_vdev_2d splits"
    total = int(table[me].sum())
    assert torch.equal(back.cpu()[:total], x.cpu()[:total]), "combine rows"
    assert bool((back.cpu()[total:] == -1).all()), "combine wrote past"
    assert torch.equal(back_so.cpu()[0], table[me]), "combine splits"
    assert torch.equal(back_so.cpu()[1],
                       torch.cumsum(table[me], 0) - table[me]), "offsets"
    # out larger than input (torch sizes it for the padding): the call uses
    # world_size * capacity rows of each, capacity from the smaller.
    big = comm.empty((R * C2 + 5, H), torch.bfloat16)
    big.fill_(-1)
    so2 = torch.full((2, E * R), -7, dtype=torch.int64, device=dev)
    comm.all_to_all_vdev_2d(x, big, table[me].to(dev), so2, major_align=A)
    sync()
    assert torch.equal(big.cpu()[:R * C2], want), "larger out"
    assert bool((big.cpu()[R * C2:] == -1).all()), "larger out: past the end"
    assert torch.equal(so2.cpu(), want_so), "larger out: splits"
    expect_error(lambda: comm.all_to_all_vdev_2d(
        x, comm.empty((R * C2, H + 1), torch.bfloat16), table[me].to(dev),
        so2), "rows of one shape")
    expect_error(lambda: comm.all_to_all_vdev_2d(x, mid, table[me][:R + 1]
                                                 .to(dev), out_so),
                 "must hold 1 x world_size x experts")
    expect_error(lambda: comm.all_to_all_vdev_2d(x, mid, table[me].to(dev),
                                                 out_so, major_align=0),
                 "major_align must be >= 1")


def check_point_to_point(comm, device, mode):
    """send/recv and batch_isend_irecv on plain tensors (never registered),
    every element checked; torch.distributed's P2POp where a process group
    exists; refusals."""
    import torch
    import sdma

    R, me = comm.world_size, comm.rank
    dev = torch.device("cpu") if device == "cpu" else torch.device("cuda")
    nxt, prv = (me + 1) % R, (me - 1) % R

    def sync():
        if device != "cpu":
            torch.cuda.current_stream().synchronize()

    for dtype in (torch.float32, torch.bfloat16):
        for n in (1, 5000):
            x = values(me, n, dtype, 5).to(dev)
            y = torch.full((n,), -1, dtype=dtype, device=dev)
            works = comm.batch_isend_irecv([sdma.P2POp(sdma.irecv, y, prv),
                                            sdma.P2POp(sdma.isend, x, nxt)])
            assert [w.wait() for w in works] == [True, True]
            sync()
            assert torch.equal(y.cpu(), values(prv, n, dtype, 5)), \
                ("ring", dtype, n)
    if mode == "group":
        import torch.distributed as dist

        x = values(me, 77, torch.int64, 6).to(dev)
        y = torch.zeros(77, dtype=torch.int64, device=dev)
        comm.batch_isend_irecv([dist.P2POp(dist.isend, x, nxt),
                                dist.P2POp(dist.irecv, y, prv)])
        sync()
        assert torch.equal(y.cpu(), values(prv, 77, torch.int64, 6)), \
            "torch.distributed.P2POp"
    # Pipeline-parallel: rank 0 to the last rank only, several rings long.
    big = 40000
    if me == 0:
        comm.send(values(0, big, torch.int64, 7).to(dev), dst=R - 1)
    elif me == R - 1:
        y = torch.zeros(big, dtype=torch.int64, device=dev)
        assert comm.recv(y, src=0) == 0
        sync()
        assert torch.equal(y.cpu(), values(0, big, torch.int64, 7)), "send"
    x = torch.zeros(4, dtype=torch.float32, device=dev)
    expect_error(lambda: comm.send(x, dst=R), "is not a rank")
    expect_error(lambda: comm.recv(torch.zeros(4, device="meta"), src=0),
                 "meta")
    expect_error(lambda: sdma.P2POp(print, x, 0), "sdma.isend or sdma.irecv")
    comm.check_async_error()


def run(rank, world, mode, device, unique_id, port, schedule, results):
    try:
        sys.path.insert(0, os.environ["SDMA_PYTHON"])
        import sdma
        import torch

        options = dict(device=device, heap_bytes=8 << 20)
        # The path option ("dma": the data-movement collectives on the DMA
        # plan); every collective must then say it took it.
        path = os.environ.get("SDMA_TEST_PATH")
        if path:
            options["path"] = path
        # dma_submit="kernel": the DMA plan's SDMA packets through the ring
        # writer (the CPU device runs it on host threads).
        submit = os.environ.get("SDMA_TEST_DMA_SUBMIT")
        if submit:
            options["dma_submit"] = submit
        if mode == "id":
            comm = sdma.Communicator(rank, world, unique_id, **options)
        elif mode == "group":
            import torch.distributed as dist

            dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d"
                                    % port, rank=rank, world_size=world)
            comm = sdma.Communicator.from_process_group(**options)
        else:
            comm = sdma.Communicator.from_mpi(**options)
        check_rank(comm, device, schedule)
        if path:
            x = comm.empty((5,), torch.float32)
            out = comm.empty((world, 5), torch.float32)
            x.fill_(rank)
            comm.all_gather_into_tensor(out, x)
            if device != "cpu":
                torch.cuda.synchronize()
            assert out[:, 0].tolist() == list(range(world)), out
            assert comm.last_path.startswith(path), comm.last_path
            if submit:
                assert "kernel-submitted" in comm.last_path, comm.last_path
            comm.free(out)
            comm.free(x)
        check_point_to_point(comm, device, mode)
        # Aborted, the communicator refuses what comes after, naming it.
        comm.abort()
        expect_error(lambda: comm.check_async_error(), "was aborted")
        comm.destroy()
        results.put((rank, "ok"))
        print("rank %d of %d (%s): every element as torch computes it"
              % (comm.rank, comm.world_size, mode), flush=True)
    except Exception:
        results.put((rank, traceback.format_exc()))


def main():
    mode, nproc, device = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    schedule = sys.argv[4] if len(sys.argv) > 4 else ""
    if mode == "mpi":
        from mpi4py import MPI

        q = mp.get_context("spawn").SimpleQueue()
        run(MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size(), mode,
            device, None, 0, schedule, q)
        rank, status = q.get()
        if status != "ok":
            print(status)
            sys.exit(1)
        return
    sys.path.insert(0, os.environ["SDMA_PYTHON"])
    import sdma

    unique_id = sdma.get_unique_id() if mode == "id" else None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, nproc, mode, device, unique_id,
                                           port, schedule, results))
             for r in range(nproc)]
    for p in procs:
        p.start()
    failed = False
    for _ in procs:
        rank, status = results.get(timeout=600)
        if status != "ok":
            print("rank %d FAILED:\n%s" % (rank, status))
            failed = True
    for p in procs:
        p.join(timeout=60)
    print("%s: %d processes" % ("FAILED" if failed else "PASSED", nproc))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
