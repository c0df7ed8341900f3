"""Point-to-point on a Communicator, as torch.distributed's.

    comm.send(x, dst=1)                       # only the two peers call
    comm.recv(y, src=0)
    works = comm.batch_isend_irecv([           # one group: cannot deadlock
        sdma.P2POp(sdma.isend, x, (rank + 1) % world),
        sdma.P2POp(sdma.irecv, y, (rank - 1) % world)])
    for w in works:
        w.wait()

Any tensor on the communicator's device works (no symmetric memory or
registration needed): only bytes move, so a send and its receive must have
the same size. Operations enqueue on torch's current stream (on the CPU
device they have run when the call returns); a batch's operations run
together, each rank's k-th message to a peer matching the peer's k-th
from it. A peer that never comes fails after the communicator's timeout,
naming it.
"""


def _package():
    import sdma
    return sdma


class Work:
    """What isend, irecv and batch_isend_irecv return (torch's Work): the
    operations are enqueued on the stream that was current (on the CPU
    device they have run). wait() makes the current stream wait for them
    and raises the communicator's failure if one was recorded (a peer that
    never came, a receive of the wrong size); is_completed() says whether
    they have run."""

    def __init__(self, comm, event=None):
        self._comm, self._event = comm, event

    def wait(self, timeout=None):
        if self._event is not None:
            import torch
            torch.cuda.current_stream().wait_event(self._event)
        self._comm.check_async_error()
        return True

    def is_completed(self):
        self._comm.check_async_error()
        return self._event is None or self._event.query()


class P2POp:
    """One send or receive of a batch_isend_irecv:
    P2POp(sdma.isend, tensor, peer) or P2POp(sdma.irecv, tensor, peer)
    (torch.distributed.P2POp with dist.isend/dist.irecv works too)."""

    def __init__(self, op, tensor, peer, group=None, tag=0):
        self.send = _is_send(op)
        self.op, self.tensor, self.peer = op, tensor, int(peer)


def _is_send(op):
    name = getattr(op, "__name__", "")
    if name in ("isend", "send"):
        return True
    if name in ("irecv", "recv"):
        return False
    raise _package().SdmaError(
        "P2POp: op must be sdma.isend or sdma.irecv (or torch.distributed's),"
        " not %r" % (op,), 4)


def isend(tensor, dst, comm):
    """Sends tensor to rank dst of comm; returns a Work."""
    return comm.isend(tensor, dst)


def irecv(tensor, src, comm):
    """Receives rank src's message into tensor; returns a Work."""
    return comm.irecv(tensor, src)


class PointToPoint:
    """Communicator's point-to-point methods."""

    def send(self, tensor, dst):
        """Sends tensor to rank dst (which calls recv with as many bytes)."""
        self._send_recv([(True, dst, tensor)])

    def recv(self, tensor, src):
        """Receives rank src's message into tensor; returns src."""
        self._send_recv([(False, src, tensor)])
        return src

    def isend(self, tensor, dst):
        self.send(tensor, dst)
        return Work(self, self._p2p_event())

    def irecv(self, tensor, src):
        self.recv(tensor, src)
        return Work(self, self._p2p_event())

    def batch_isend_irecv(self, p2p_ops):
        """Runs every operation of the list together (one group); returns
        a Work per operation."""
        # torch.distributed.P2POp: its peer is a global rank; newer torch
        # also carries group_peer, the rank in the op's group.
        ops = [op if isinstance(op, P2POp) else P2POp(
            op.op, op.tensor,
            op.group_peer if getattr(op, "group_peer", None) is not None
            else op.peer)
               for op in p2p_ops]
        self._send_recv([(op.send, op.peer, op.tensor) for op in ops])
        event = self._p2p_event()
        return [Work(self, event) for _ in ops]

    def _p2p_event(self):
        """An event on the current stream after what was just enqueued
        (None on the CPU device, where it has run)."""
        if self._kind == "cpu":
            return None
        import torch
        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream())
        return event

    def _send_recv(self, ops):
        sdma = _package()
        items = []
        for send, peer, tensor in ops:
            tensor = sdma._as_tensor(tensor)
            self._check(tensor, "the tensor sent" if send else
                        "the tensor received into")
            items.append((bool(send), int(peer), tensor.data_ptr(),
                          tensor.numel() * tensor.element_size()))
        try:
            self._comm.send_recv(items, self._stream())
        except sdma._sdma.SdmaError as e:
            sdma._raise(e)
