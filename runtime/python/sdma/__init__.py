"""sdma for Python: collectives on torch tensors, torch.distributed's way.

    import sdma, torch, torch.distributed as dist
    dist.init_process_group("gloo")            # or nccl; torchrun's env
    comm = sdma.Communicator.from_process_group()
    x = comm.empty((1024,), torch.float32)     # symmetric memory
    out = comm.empty((comm.world_size, 1024), torch.float32)
    comm.all_gather_into_tensor(out, x)        # on the current stream

A Communicator is one rank of a job of processes (one per GPU). Tensors
passed to it live in its symmetric heap (comm.empty) or are registered
(comm.register); every rank passes the same buffers in the same order.
Calls enqueue on torch's current CUDA stream and return: no host
synchronisation. On the CPU device (device="cpu", no GPU) a call runs
before it returns. Failures raise SdmaError with the C API's message.
"""

import os

from . import _sdma
from ._p2p import P2POp, PointToPoint, Work, irecv, isend

_HERE = os.path.dirname(os.path.abspath(__file__))

#: sdma's version (sdma.h's SDMA_MAJOR.MINOR.PATCH; the tools print it too).
__version__ = _sdma.__version__

__all__ = ["Communicator", "MpiTransport", "TorchTransport", "P2POp", "PreMulSum", "ReduceOp", "Schedule", "SdmaError", "premul_sum",
           "Work", "get_unique_id", "irecv", "isend"]


class SdmaError(RuntimeError):
    """A failed sdma call: the message, and `result` (sdmaResult_t)."""

    def __init__(self, message, result=3):
        super().__init__(message)
        self.result = result


def _raise(e):
    args = e.args
    raise SdmaError(args[0], args[1] if len(args) > 1 else 3) from None


def get_unique_id():
    """A new job id (128 bytes). Its meeting point lives in this process
    until every rank has joined."""
    try:
        return _sdma.get_unique_id()
    except _sdma.SdmaError as e:
        _raise(e)


def _torch():
    import torch

    return torch


_TYPES = None


# torch dtype -> (sdmaDataType_t, DLPack code, bits), made once.
def _types():
    global _TYPES
    if _TYPES is not None:
        return _TYPES
    torch = _torch()
    _TYPES = {
        torch.int8: (0, 0, 8),
        torch.uint8: (1, 1, 8),
        torch.int32: (2, 0, 32),
        torch.int64: (4, 0, 64),
        torch.float16: (6, 2, 16),
        torch.float32: (7, 2, 32),
        torch.float64: (8, 2, 64),
        torch.bfloat16: (9, 4, 16),
    }
    return _TYPES


def _as_tensor(x):
    """A torch view of x: a tensor, or any DLPack / CUDA-array-interface
    object (numpy, CuPy, JAX), without a copy."""
    torch = _torch()
    if x is None or isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__dlpack__"):
        return torch.from_dlpack(x)
    if hasattr(x, "__cuda_array_interface__"):
        return torch.as_tensor(x, device="cuda")
    raise SdmaError("%s is not a tensor, a DLPack object or a CUDA array"
                    % type(x).__name__, 4)


class ReduceOp:
    """Reduction operators, named as torch.distributed.ReduceOp (whose
    members are accepted too); the values are ncclRedOp_t's."""
    SUM = 0
    PRODUCT = 1
    MAX = 2
    MIN = 3
    AVG = 4


_REDUCE_OPS = {"SUM": 0, "PRODUCT": 1, "MAX": 2, "MIN": 3, "AVG": 4}


class PreMulSum:
    """The sum of every rank's tensor times `factor` (torch's PREMUL_SUM,
    NCCL's ncclRedOpCreatePreMulSum; FSDP's gradient pre-division): each
    element multiplied as it is summed, in the tensor's dtype's arithmetic
    (float16/bfloat16 in fp32). `factor` is a Python number, or a
    one-element tensor of the reduced dtype on the communicator's device,
    read when each call runs (as torch's tensor factor). Each rank passes its own factor (they may
    differ). Make it with sdma.premul_sum(factor)."""

    def __init__(self, factor):
        is_tensor = hasattr(factor, "data_ptr") and hasattr(factor, "numel")
        if is_tensor and factor.numel() != 1:
            raise SdmaError("premul_sum: a tensor factor has one element, "
                            "not %d" % factor.numel(), 4)
        if not is_tensor and (not isinstance(factor, (int, float)) or
                              isinstance(factor, bool)):
            raise SdmaError("premul_sum: the factor is a Python number or a "
                            "one-element tensor, not %s"
                            % type(factor).__name__, 4)
        self.factor = factor

    def __repr__(self):
        return "sdma.premul_sum(%r)" % (self.factor,)


def premul_sum(factor):
    """A reduction operator: the sum of every rank's tensor times `factor`
    (torch.distributed._make_nccl_premul_sum's meaning)."""
    return PreMulSum(factor)


def _reduce_op(op):
    if isinstance(op, int) and op in _REDUCE_OPS.values():
        return op
    name = op if isinstance(op, str) else getattr(op, "name", None)
    if name is None:
        # torch.distributed.ReduceOp members (objects without a name in
        # some versions) compare equal to their kind.
        try:
            import torch.distributed as dist

            name = next((n for n in _REDUCE_OPS
                         if op == getattr(dist.ReduceOp, n)), None)
        except (ImportError, AttributeError, TypeError):
            pass
    if name in _REDUCE_OPS:
        return _REDUCE_OPS[name]
    name = name or str(op)
    if name == "PREMUL_SUM" or _is_torch_premul_sum(op):
        raise SdmaError("torch's PREMUL_SUM keeps its factor where Python "
                        "cannot read it: pass sdma.premul_sum(factor)", 4)
    raise SdmaError("sdma reduces with SUM, PRODUCT, MAX, MIN, AVG or "
                    "sdma.premul_sum(factor), not %s" % (name,), 4)


def _is_torch_premul_sum(op):
    try:
        import torch.distributed as dist

        return op == dist.ReduceOp.PREMUL_SUM
    except (ImportError, AttributeError, TypeError, RuntimeError):
        return False


_OPS = {"all_gather": 0, "all_to_all": 1, "broadcast": 2, "scatter": 3,
        "gather": 4}


def _tagged(ops):
    """A group's ops in posting order, receives first (a peer's send then
    finds its match posted), each (send, peer, address, nbytes, tag): the
    k-th message of a pair each way tagged k, as sdma_mpi.h tags them (a
    pair's messages of one tag match in order, and both ranks of a pair run
    the groups between them in the same order; a point-to-point group
    involves two ranks, so no group number is counted by all)."""
    seen = {}
    for op in sorted(ops, key=lambda op: op[0]):
        send, peer, address, size = op[:4]
        k = seen.get((peer, send), 0)
        seen[(peer, send)] = k + 1
        yield send, peer, address, size, k


class MpiTransport:
    """MPI (mpi4py) as a multi-node communicator's transport, on a duplicate
    of `comm` (sdma's messages never match the job's): a group is
    Irecv/Isend of every op, the k-th message of a pair each way tagged k,
    then a wait that gives up after `timeout_ms`,
    naming the peer it waits for, and withdraws what is left posted. Host
    memory only (sdma stages a GPU's buffers)."""

    name = "mpi"
    device_memory = False

    def __init__(self, comm=None, timeout_ms=30000):
        if comm is None:
            from mpi4py import MPI

            comm = MPI.COMM_WORLD
        self.comm = comm.Dup()
        self.rank = self.comm.Get_rank()
        self.world_size = self.comm.Get_size()
        self.timeout_ms = timeout_ms

    def exchange(self, ops):
        """Runs `ops`, each (send, peer, address, nbytes, host), as one
        group; raises SdmaError on a timeout or a message of a wrong size."""
        import ctypes
        import time

        from mpi4py import MPI

        if len(ops) > 4096:
            raise SdmaError("MPI transport: over 4096 messages in a group", 4)
        posted = []
        for send, peer, address, size, tag in _tagged(ops):
            buffer = (ctypes.c_char * size).from_address(address) if size \
                else bytearray()
            post = self.comm.Isend if send else self.comm.Irecv
            posted.append((post([buffer, MPI.BYTE], peer, tag), send, peer,
                           size))
        deadline = time.monotonic() + self.timeout_ms / 1000.0
        pending = list(posted)
        try:
            while pending:
                left = []
                for request, send, peer, size in pending:
                    status = MPI.Status()
                    if not request.Test(status):
                        left.append((request, send, peer, size))
                    elif not send and status.Get_count(MPI.BYTE) != size:
                        raise SdmaError(
                            "MPI transport: rank %d: %d bytes from rank %d "
                            "where %d were expected" % (
                                self.rank, status.Get_count(MPI.BYTE), peer,
                                size), 6)
                pending = left
                if pending and time.monotonic() > deadline:
                    _, send, peer, _ = pending[0]
                    raise SdmaError(
                        "MPI transport: rank %d: timed out after %d ms; %s "
                        "rank %d" % (self.rank, self.timeout_ms,
                                     "no receive posted by" if send else
                                     "nothing arrived from", peer), 6)
        except SdmaError:
            for request, _, _, _ in pending:
                request.Cancel()
                request.Free()
            raise


class TorchTransport:
    """torch.distributed's point-to-point (a process group whose backend
    sends CPU tensors: gloo, or MPI) as a multi-node communicator's
    transport, for jobs torchrun starts: a group is irecv/isend of every op
    on uint8 tensors over sdma's buffers, the k-th message of a pair each
    way tagged k, then every request waited on (bounded by
    the process group's own timeout). Host memory only (sdma stages a GPU's
    buffers)."""

    name = "torch"
    device_memory = False

    def __init__(self, group=None):
        import torch.distributed as dist

        self.group = group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)

    def exchange(self, ops):
        """Runs `ops`, each (send, peer, address, nbytes, host), as one
        group; raises SdmaError if torch.distributed fails."""
        import ctypes

        import torch
        import torch.distributed as dist

        requests = []
        try:
            for send, peer, address, size, tag in _tagged(ops):
                if not size:
                    continue
                tensor = torch.frombuffer(
                    (ctypes.c_char * size).from_address(address),
                    dtype=torch.uint8)
                post = dist.isend if send else dist.irecv
                requests.append(post(tensor, peer, group=self.group, tag=tag))
            for request in requests:
                request.wait()
        except RuntimeError as e:
            raise SdmaError("torch transport: rank %d: %s" % (self.rank, e), 6)


class Communicator(PointToPoint):
    """One rank of a job. Make it from a unique id, a torch.distributed
    process group (through its store) or an MPI communicator (mpi4py)."""

    _created = 0

    def __init__(self, rank, world_size, unique_id, *, device=None,
                 heap_bytes=0, timeout_ms=0, check_calls=None,
                 program_dir=None, path=None, dma_variant=None,
                 dma_submit=None):
        if isinstance(unique_id, str):
            unique_id = bytes.fromhex(unique_id)
        check = -1 if check_calls is None else int(bool(check_calls))
        # A pip-installed package carries the compiler and the built-ins'
        # programs (setup.py); the environment still overrides them.
        if "SDMA_COMPILER_LIBRARY" not in os.environ and \
                os.path.isfile(os.path.join(_HERE, "libsdma-compiler.so")):
            os.environ["SDMA_COMPILER_LIBRARY"] = os.path.join(
                _HERE, "libsdma-compiler.so")
        if program_dir is None and "SDMA_PROGRAM_DIR" not in os.environ and \
                os.path.isdir(os.path.join(_HERE, "programs")):
            program_dir = os.path.join(_HERE, "programs")
        try:
            self._comm = _sdma.Comm(world_size, unique_id, rank, device or "",
                                    heap_bytes, timeout_ms, check,
                                    program_dir or "", path or "",
                                    dma_variant or "", dma_submit or "")
        except _sdma.SdmaError as e:
            _raise(e)
        self.rank = rank
        self.world_size = world_size
        self.device = device or os.environ.get("SDMA_DEVICE", "cuda")
        self._allocations = {}  # data_ptr -> bytes
        self._registrations = {}  # data_ptr -> handle
        self._premul_ops = {}  # (dtype, the factor's bytes) -> operator
        self._kind = "cpu" if self.device == "cpu" else "cuda"
        self._raw_stream = None

    @property
    def last_path(self):
        """The path this rank's last collective took, and why: "ldst (...)"
        or "dma VARIANT (...)" (the `path` option, SDMA_PATH; with
        dma_submit="kernel", SDMA_DMA_SUBMIT, "dma VARIANT, kernel-submitted
        TARGET packets (...)")."""
        try:
            return self._comm.last_path()
        except _sdma.SdmaError as e:
            _raise(e)

    # -- making one -------------------------------------------------------

    @classmethod
    def from_store(cls, store, rank, world_size, *, key=None, **options):
        """Bootstrap through a torch.distributed Store (TCPStore,
        FileStore, ...): rank 0 publishes the id under `key`."""
        key = key or "sdma/unique_id/%d" % cls._created
        cls._created += 1
        if rank == 0:
            store.set(key, get_unique_id().hex())
        unique_id = store.get(key).decode()
        return cls(rank, world_size, unique_id, **options)

    @classmethod
    def from_process_group(cls, group=None, **options):
        """The ranks of torch.distributed's default group, bootstrapped
        through its store (init_process_group must have run)."""
        import torch.distributed as dist
        from torch.distributed import distributed_c10d as c10d

        if group is not None and group is not c10d._get_default_group():
            raise SdmaError("only the default process group is supported", 4)
        return cls.from_store(c10d._get_default_store(), dist.get_rank(),
                              dist.get_world_size(), **options)

    @classmethod
    def from_mpi(cls, mpi_comm=None, **options):
        """The ranks of an mpi4py communicator (COMM_WORLD by default)."""
        if mpi_comm is None:
            from mpi4py import MPI

            mpi_comm = MPI.COMM_WORLD
        rank = mpi_comm.Get_rank()
        unique_id = get_unique_id() if rank == 0 else None
        unique_id = mpi_comm.bcast(unique_id, root=0)
        return cls(rank, mpi_comm.Get_size(), unique_id, **options)

    @classmethod
    def multi_node(cls, transport=None, *, local_ranks=0, device=None,
                   heap_bytes=0, timeout_ms=0, check_calls=None,
                   program_dir=None, path=None, dma_variant=None,
                   dma_submit=None):
        """One rank of a job across nodes (docs/multi-node.md): sdma within
        each node of `local_ranks` ranks (0: the launcher's, LOCAL_WORLD_SIZE
        or OMPI_COMM_WORLD_LOCAL_SIZE), `transport` between nodes (default:
        MpiTransport over mpi4py's COMM_WORLD). all_gather_into_tensor,
        all_to_all_single, all_reduce and reduce_scatter_tensor (float32
        sums) run the hierarchical schedules on tensors from empty(); the
        other collectives raise SdmaError."""
        if transport is None:
            transport = MpiTransport()
        check = -1 if check_calls is None else int(bool(check_calls))
        self = cls.__new__(cls)
        try:
            self._comm = _sdma.Comm.multi_node(
                transport, local_ranks, device or "", heap_bytes, timeout_ms,
                check, program_dir or "", path or "", dma_variant or "",
                dma_submit or "")
        except _sdma.SdmaError as e:
            _raise(e)
        self.rank = transport.rank
        self.world_size = transport.world_size
        self.device = device or os.environ.get("SDMA_DEVICE", "cuda")
        self._allocations = {}
        self._registrations = {}
        self._premul_ops = {}
        self._kind = "cpu" if self.device == "cpu" else "cuda"
        self._raw_stream = None
        self._transport = transport
        return self

    @property
    def handle(self):
        """The integer sdma's torch custom ops take (sdma.ops)."""
        from . import ops

        return ops.handle_of(self)

    def destroy(self):
        """Frees the heap and leaves the job (every rank calls it)."""
        if getattr(self, "_comm", None) is not None:
            self._comm.destroy()

    # -- memory -----------------------------------------------------------

    def _device(self):
        torch = _torch()
        if self.device == "cpu":
            return torch.device("cpu")
        return torch.device("cuda", torch.cuda.current_device())

    def empty(self, shape, dtype=None):
        """A tensor in the symmetric heap (collective: every rank, same
        shape, same order). Freed by free() or destroy()."""
        torch = _torch()
        dtype = dtype or torch.float32
        types = _types()
        if dtype not in types:
            raise SdmaError("sdma has no %s" % dtype, 4)
        if isinstance(shape, int):
            shape = (shape,)
        numel = 1
        for n in shape:
            numel *= int(n)
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        try:
            ptr = self._comm.mem_alloc(max(nbytes, 1))
        except _sdma.SdmaError as e:
            _raise(e)
        device = self._device()
        kind = 1 if device.type == "cpu" else 2
        _, code, bits = types[dtype]
        capsule = self._comm.dlpack(ptr, list(shape), code, bits, kind,
                                    device.index or 0, self)
        tensor = torch.utils.dlpack.from_dlpack(capsule)
        self._allocations[tensor.data_ptr()] = nbytes
        return tensor

    def free(self, tensor):
        """Returns an empty() tensor's memory (collective)."""
        ptr = tensor.data_ptr()
        self._allocations.pop(ptr, None)
        try:
            self._comm.mem_free(ptr)
        except _sdma.SdmaError as e:
            _raise(e)

    def register(self, tensor):
        """Makes an existing tensor's memory usable (collective; on a GPU:
        memory from cudaMalloc or torch's caching allocator)."""
        self._check(tensor, "tensor")
        nbytes = tensor.numel() * tensor.element_size()
        try:
            handle = self._comm.mem_register(tensor.data_ptr(), nbytes)
        except _sdma.SdmaError as e:
            _raise(e)
        self._registrations[tensor.data_ptr()] = handle
        return handle

    def deregister(self, tensor):
        handle = self._registrations.pop(tensor.data_ptr(), None)
        if handle is None:
            raise SdmaError("the tensor is not registered", 4)
        try:
            self._comm.mem_deregister(handle)
        except _sdma.SdmaError as e:
            _raise(e)

    # -- collectives (torch.distributed's names) ---------------------------

    def _check(self, tensor, name):
        if tensor.device.type != self._kind:
            raise SdmaError("%s is on %s; this communicator's device is %s"
                            % (name, tensor.device, self.device), 4)
        if tensor.dtype not in _types():
            raise SdmaError("%s: sdma has no %s" % (name, tensor.dtype), 4)
        if not tensor.is_contiguous():
            raise SdmaError("%s is not contiguous" % name, 4)

    def _stream(self):
        if self._kind == "cpu":
            return 0
        torch = _torch()
        if self._raw_stream is None:
            # torch's own fast path where it has one.
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            self._raw_stream = raw or False
            self._device_index = torch.cuda.current_device()
        if self._raw_stream:
            return self._raw_stream(self._device_index)
        return torch.cuda.current_stream().cuda_stream

    def _run(self, op, send, recv, count, dtype, root=0):
        try:
            self._comm.collective(_OPS[op], send, recv, count,
                                  _types()[dtype][0], root, self._stream())
        except _sdma.SdmaError as e:
            _raise(e)

    def _same(self, a, b, what):
        if a.dtype != b.dtype:
            raise SdmaError("%s: output is %s, input %s"
                            % (what, a.dtype, b.dtype), 4)

    def all_gather_into_tensor(self, output, input):
        """output (world_size * input.numel() elements) = every rank's
        input, in rank order (as torch.distributed's)."""
        output, input = _as_tensor(output), _as_tensor(input)
        self._check(output, "output")
        self._check(input, "input")
        self._same(output, input, "all_gather_into_tensor")
        if output.numel() != self.world_size * input.numel():
            raise SdmaError("all_gather_into_tensor: output has %d elements,"
                            " world_size x input is %d" % (
                                output.numel(),
                                self.world_size * input.numel()), 4)
        self._run("all_gather", input.data_ptr(), output.data_ptr(),
                  input.numel(), input.dtype)

    def all_to_all_single(self, output, input):
        """Equal splits: block p of input goes to rank p, block p of output
        comes from rank p. In place when output is input."""
        output, input = _as_tensor(output), _as_tensor(input)
        self._check(output, "output")
        self._check(input, "input")
        self._same(output, input, "all_to_all_single")
        if output.numel() != input.numel() or \
                input.numel() % self.world_size:
            raise SdmaError("all_to_all_single: input and output need the "
                            "same number of elements, a multiple of "
                            "world_size (%d and %d)" % (input.numel(),
                                                        output.numel()), 4)
        self._run("all_to_all", input.data_ptr(), output.data_ptr(),
                  input.numel() // self.world_size, input.dtype)

    def all_to_all_v(self, output, input, *, input_splits, output_splits=None,
                     layout="packed"):
        """All-to-allv with split sizes on the device (MoE dispatch and
        combine). The splits are keyword-only: torch's all_to_all_single
        takes host lists as (output_split_sizes, input_split_sizes), these
        are device tensors and output_splits is written, not read, so no
        positional order could mean the same thing.
        Rank r sends input_splits[p] rows to rank p, where a row
        is input[i] (the first dimension indexes rows). input_splits is an
        int64 tensor of world_size on this communicator's device, read by
        the kernel only: no host synchronisation, CUDA-graph capturable.
        input and output (symmetric memory: empty() or register()) hold
        world_size * capacity rows; capacity bounds every split.
        layout "packed": rows packed by peer (torch's all_to_all_single
        with split sizes); "slots": peer p owns rows [p * capacity,
        (p + 1) * capacity). Returns output_splits (allocated when None):
        the rows that came from each rank; offsets into a packed output
        are its exclusive cumulative sum. A split above capacity moves
        nothing for that peer and is raised by check_async_error()."""
        output, input = _as_tensor(output), _as_tensor(input)
        input_splits = _as_tensor(input_splits)
        torch = _torch()
        self._check(output, "output")
        self._check(input, "input")
        self._same(output, input, "all_to_all_v")
        for name, splits in (("input_splits", input_splits),
                             ("output_splits", output_splits)):
            if splits is None:
                continue
            splits = _as_tensor(splits)
            if splits.device.type != self._kind or \
                    splits.dtype != torch.int64 or \
                    splits.numel() != self.world_size or \
                    not splits.is_contiguous():
                raise SdmaError("all_to_all_v: %s must be a contiguous int64 "
                                "tensor of %d on %s" % (name, self.world_size,
                                                        self.device), 4)
        if layout not in ("packed", "slots"):
            raise SdmaError("all_to_all_v: layout is 'packed' or 'slots', "
                            "not %r" % (layout,), 4)
        if input.dim() < 1 or input.shape != output.shape or \
                input.shape[0] % self.world_size:
            raise SdmaError("all_to_all_v: input and output need one shape "
                            "whose first dimension (rows) is a multiple of "
                            "world_size; got %s and %s"
                            % (tuple(input.shape), tuple(output.shape)), 4)
        if output_splits is None:
            output_splits = torch.empty(self.world_size, dtype=torch.int64,
                                        device=input_splits.device)
        output_splits = _as_tensor(output_splits)
        rows = input.shape[0]
        row = input.numel() // rows if rows else 0
        try:
            self._comm.all_to_all_v(
                input.data_ptr(), input_splits.data_ptr(), output.data_ptr(),
                output_splits.data_ptr(), rows // self.world_size, row,
                _types()[input.dtype][0], 1 if layout == "packed" else 0,
                self._stream())
        except _sdma.SdmaError as e:
            _raise(e)
        return output_splits

    def _splits(self, name, tensor, numel):
        """A contiguous int64 tensor of `numel` on this device, or raise."""
        torch = _torch()
        tensor = _as_tensor(tensor)
        if tensor.device.type != self._kind or tensor.dtype != torch.int64 \
                or tensor.numel() != numel or not tensor.is_contiguous():
            raise SdmaError("%s must be a contiguous int64 tensor of %d on %s"
                            % (name, numel, self.device), 4)
        return tensor

    def _moe(self, what, input, out, in_counts, out_counts, in_rows,
             major_align, combine):
        """all_to_all_vdev_2d and its _offset: shapes checked, then run."""
        input, out = _as_tensor(input), _as_tensor(out)
        self._check(out, "out")
        self._check(input, "input")
        self._same(out, input, what)
        in_counts = _as_tensor(in_counts)
        world = self.world_size
        if in_counts.numel() % (in_rows * world) or not in_counts.numel():
            raise SdmaError("%s: %s must hold %d x world_size x experts "
                            "values; got %d" % (what, "in_splits_offsets"
                                                if combine else "in_splits",
                                                in_rows, in_counts.numel()), 4)
        experts = in_counts.numel() // (in_rows * world)
        in_counts = self._splits(what + ": the input counts", in_counts,
                                 in_rows * world * experts)
        out_counts = self._splits(what + ": out_splits_offsets", out_counts,
                                  2 * world * experts)
        # Rows are the first dimension; input and out may hold different
        # numbers of them (torch sizes out for the padded groups), and the
        # call uses world_size * capacity of each, capacity the smaller's
        # rows // world_size (every split is bounded by it).
        if input.dim() < 1 or input.shape[1:] != out.shape[1:] or \
                min(input.shape[0], out.shape[0]) < world:
            raise SdmaError("%s: input and out need rows of one shape and "
                            "at least world_size rows each; got %s and %s"
                            % (what, tuple(input.shape), tuple(out.shape)), 4)
        rows = min(input.shape[0], out.shape[0]) // world * world
        row = input.numel() // input.shape[0]
        try:
            self._comm.all_to_all_v_2d(
                combine, input.data_ptr(), in_counts.data_ptr(),
                out.data_ptr(), out_counts.data_ptr(), experts,
                rows // world, major_align, row, _types()[input.dtype][0],
                self._stream())
        except _sdma.SdmaError as e:
            _raise(e)

    def all_to_all_vdev_2d(self, input, out, in_splits, out_splits_offsets,
                           major_align=None):
        """MoE dispatch into expert-major rows, as torch's
        symm_mem.all_to_all_vdev_2d (same arguments, this communicator for
        the group). in_splits (int64, world_size * ne on this device,
        rank-major): in_splits[p * ne + e] rows of input, packed in that
        order, go to local expert e of rank p. out receives them
        expert-major, expert 0's rows from rank 0, 1, ..., then expert 1's;
        each expert's segment padded to a multiple of major_align rows (at
        least major_align, so no expert is empty: grouped-GEMM kernels
        reject empty groups). out_splits_offsets (int64, [2, ne *
        world_size]) receives the counts, expert-major, and each segment's
        offset in out: the grouped GEMM's group sizes and offsets, and the
        combine's in_splits_offsets. input and out (symmetric memory) may
        hold different numbers of rows; capacity is the smaller's rows //
        world_size, it bounds every split, and world_size * capacity rows
        of each are used (the padding must fit in them). Splits are
        read on the device: no host synchronisation, CUDA-graph
        capturable. A bad split moves nothing for its segment and is raised
        by check_async_error()."""
        align = 1 if major_align is None else int(major_align)
        if align < 1:
            raise SdmaError("all_to_all_vdev_2d: major_align must be >= 1, "
                            "not %d" % align, 4)
        self._moe("all_to_all_vdev_2d", input, out, in_splits,
                  out_splits_offsets, 1, align, False)

    def all_to_all_vdev_2d_offset(self, input, out, in_splits_offsets,
                                  out_splits_offsets):
        """MoE combine, the inverse of all_to_all_vdev_2d, as torch's
        symm_mem.all_to_all_vdev_2d_offset. in_splits_offsets (int64, [2,
        ne * world_size], expert-major): the rows of input going back to
        each rank and where each run starts in input (e.g. the dispatch's
        out_splits_offsets; padding is not sent). out receives them packed
        rank-major (rank 0's expert 0, expert 1, ..., then rank 1's): the
        dispatch's input order. out_splits_offsets (int64, [2, world_size *
        ne]) receives the counts, rank-major, and their packed offsets."""
        self._moe("all_to_all_vdev_2d_offset", input, out, in_splits_offsets,
                  out_splits_offsets, 2, 1, True)

    def _premul_sum(self, dtype, factor):
        """The communicator's operator for sdma.premul_sum(factor) on
        dtype, made once (the factor as dtype's bits, converted as torch
        converts it)."""
        torch = _torch()
        if hasattr(factor, "data_ptr"):
            here = self._kind == "cpu" or (
                factor.device.index in (None, torch.cuda.current_device()))
            if (factor.dtype != dtype or factor.device.type != self._kind or
                    not here):
                raise SdmaError("premul_sum: the factor tensor is %s on %s; "
                                "the call reduces %s on %s"
                                % (factor.dtype, factor.device, dtype,
                                   self.device), 4)
            key = (dtype, "device", factor.data_ptr())
            if key not in self._premul_ops:
                try:
                    self._premul_ops[key] = self._comm.premul_sum_device(
                        _types()[dtype][0], factor.data_ptr())
                except _sdma.SdmaError as e:
                    _raise(e)
            return self._premul_ops[key]
        if not dtype.is_floating_point:
            info = torch.iinfo(dtype)
            import math
            if (not math.isfinite(factor) or float(factor) != int(factor) or
                    not info.min <= int(factor) <= info.max):
                raise SdmaError("premul_sum(%r) on %s: an integer type takes "
                                "an integral factor in its range"
                                % (factor, dtype), 4)
            factor = int(factor)
        try:
            bits = torch.tensor([factor], dtype=dtype).view(torch.uint8)
        except (RuntimeError, OverflowError) as e:
            raise SdmaError("premul_sum(%r) on %s: %s" % (factor, dtype, e), 4)
        key = (dtype, bytes(bits.tolist()))
        if key not in self._premul_ops:
            try:
                self._premul_ops[key] = self._comm.premul_sum(
                    _types()[dtype][0], key[1])
            except _sdma.SdmaError as e:
                _raise(e)
        return self._premul_ops[key]

    def _reduce(self, kind, send, recv, count, dtype, op, root=0):
        if isinstance(op, PreMulSum):
            if dtype not in _types():
                raise SdmaError("%s is not a type sdma reduces" % (dtype,), 4)
            code = self._premul_sum(dtype, op.factor)
        else:
            code = _reduce_op(op)
        try:
            self._comm.reduction(kind, send, recv, count, _types()[dtype][0],
                                 code, root, self._stream())
        except _sdma.SdmaError as e:
            _raise(e)

    def all_reduce(self, tensor, op=ReduceOp.SUM):
        """tensor on every rank = op over every rank's tensor (in place,
        as torch.distributed's). float16/bfloat16 accumulate in fp32."""
        tensor = _as_tensor(tensor)
        self._check(tensor, "tensor")
        self._reduce(0, tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                     tensor.dtype, op)

    def reduce_scatter_tensor(self, output, input, op=ReduceOp.SUM):
        """output = block `rank` (output.numel() elements) of op over every
        rank's input (world_size blocks)."""
        output, input = _as_tensor(output), _as_tensor(input)
        self._check(output, "output")
        self._check(input, "input")
        self._same(output, input, "reduce_scatter_tensor")
        if input.numel() != self.world_size * output.numel():
            raise SdmaError("reduce_scatter_tensor: input needs world_size x "
                            "%d elements, has %d" % (output.numel(),
                                                     input.numel()), 4)
        self._reduce(1, input.data_ptr(), output.data_ptr(), output.numel(),
                     output.dtype, op)

    def reduce(self, tensor, dst=0, op=ReduceOp.SUM):
        """dst's tensor = op over every rank's tensor (in place); the other
        ranks' tensors are unchanged."""
        tensor = _as_tensor(tensor)
        self._check(tensor, "tensor")
        self._reduce(2, tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                     tensor.dtype, op, dst)

    def broadcast(self, tensor, src=0):
        """tensor on every rank = tensor on src (in place)."""
        tensor = _as_tensor(tensor)
        self._check(tensor, "tensor")
        self._run("broadcast", tensor.data_ptr(), tensor.data_ptr(),
                  tensor.numel(), tensor.dtype, src)

    def scatter(self, output, input=None, src=0):
        """output = block `rank` of src's input (world_size blocks of
        output.numel()). Unlike torch.distributed.scatter, input is one
        tensor, and every rank passes its symmetric copy (or None)."""
        output, input = _as_tensor(output), _as_tensor(input)
        self._check(output, "output")
        if input is not None:
            self._check(input, "input")
            self._same(output, input, "scatter")
            if input.numel() != self.world_size * output.numel():
                raise SdmaError("scatter: input needs world_size x %d "
                                "elements, has %d" % (output.numel(),
                                                      input.numel()), 4)
        self._run("scatter", input.data_ptr() if input is not None else 0,
                  output.data_ptr(), output.numel(), output.dtype, src)

    def gather(self, input, output=None, dst=0):
        """dst's output (world_size blocks) = every rank's input."""
        output, input = _as_tensor(output), _as_tensor(input)
        self._check(input, "input")
        if output is not None:
            self._check(output, "output")
            self._same(output, input, "gather")
            if output.numel() != self.world_size * input.numel():
                raise SdmaError("gather: output needs world_size x %d "
                                "elements, has %d" % (input.numel(),
                                                      output.numel()), 4)
        self._run("gather", input.data_ptr(),
                  output.data_ptr() if output is not None else 0,
                  input.numel(), input.dtype, dst)

    def load_schedule(self, text_or_path):
        """Any schedule (DSL text, a .mlir file or a compiled .hip program),
        compiled for world_size ranks (collective)."""
        return Schedule(self, text_or_path)

    def abort(self):
        """Makes every wait of this communicator's kernels fail now, those
        of a call in flight on another thread included (a watchdog's way
        out); the communicator stays failed: destroy() it afterwards."""
        try:
            self._comm.abort()
        except _sdma.SdmaError as e:
            _raise(e)

    def check_async_error(self):
        """Raises if a launched kernel failed (a rank that never signalled
        is named). Reads host memory: no synchronisation."""
        try:
            self._comm.async_error()
        except _sdma.SdmaError as e:
            _raise(e)


class Schedule:
    """A user schedule on a communicator; launch(*tensors) runs it once."""

    def __init__(self, comm, text_or_path):
        self._owner = comm
        try:
            self._schedule = _sdma.Schedule(comm._comm, text_or_path)
        except _sdma.SdmaError as e:
            _raise(e)
        self.buffers = self._schedule.buffers()  # [(name, chunks)]

    def launch(self, *tensors):
        """tensors[b] is buffer b (symmetric), chunks[b] equal chunks."""
        tensors = [_as_tensor(t) for t in tensors]
        if len(tensors) != len(self.buffers):
            raise SdmaError("the schedule takes %d buffers (%s), got %d" % (
                len(self.buffers), ", ".join(n for n, _ in self.buffers),
                len(tensors)), 4)
        chunk = None
        for (name, chunks), t in zip(self.buffers, tensors):
            self._owner._check(t, name)
            if t.dtype != tensors[0].dtype:
                raise SdmaError("buffer %s is %s, buffer %s %s" % (
                    name, t.dtype, self.buffers[0][0], tensors[0].dtype), 4)
            if t.numel() % chunks or (chunk is not None and
                                      t.numel() // chunks != chunk):
                raise SdmaError("buffer %s: %d elements is not %d chunks of "
                                "the others' size" % (name, t.numel(),
                                                      chunks), 4)
            chunk = t.numel() // chunks
        try:
            self._schedule.launch([t.data_ptr() for t in tensors], chunk,
                                  _types()[tensors[0].dtype][0],
                                  self._owner._stream())
        except _sdma.SdmaError as e:
            _raise(e)


from . import ops  # noqa: E402,F401  (torch.library custom ops, torch>=2.4)
