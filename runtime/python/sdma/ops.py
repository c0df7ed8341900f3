"""sdma collectives as torch.library custom ops (torch >= 2.4), so that
torch.compile traces them: each mutates its output and has a fake (meta)
implementation. Call them with a communicator's handle:

    torch.ops.sdma.all_gather_into_tensor(out, x, comm.handle)

On an older torch, AVAILABLE is False and the methods of Communicator are
the interface.
"""

import weakref

AVAILABLE = False
_comms = {}


def handle_of(comm):
    """The integer a custom op takes for `comm`."""
    key = id(comm)
    _comms[key] = weakref.ref(comm)
    return key


def _comm(key):
    comm = _comms.get(key)
    comm = comm() if comm is not None else None
    if comm is None:
        from . import SdmaError

        raise SdmaError("no live communicator with handle %d" % key, 4)
    return comm


try:
    import torch

    if hasattr(torch, "library") and hasattr(torch.library, "custom_op"):

        @torch.library.custom_op("sdma::all_gather_into_tensor",
                                 mutates_args=("output",))
        def all_gather_into_tensor(output: torch.Tensor, input: torch.Tensor,
                                   comm: int) -> None:
            _comm(comm).all_gather_into_tensor(output, input)

        @all_gather_into_tensor.register_fake
        def _(output, input, comm):
            return None

        @torch.library.custom_op("sdma::all_to_all_single",
                                 mutates_args=("output",))
        def all_to_all_single(output: torch.Tensor, input: torch.Tensor,
                              comm: int) -> None:
            _comm(comm).all_to_all_single(output, input)

        @all_to_all_single.register_fake
        def _(output, input, comm):
            return None

        @torch.library.custom_op("sdma::broadcast", mutates_args=("tensor",))
        def broadcast(tensor: torch.Tensor, src: int, comm: int) -> None:
            _comm(comm).broadcast(tensor, src)

        @broadcast.register_fake
        def _(tensor, src, comm):
            return None

        @torch.library.custom_op("sdma::all_reduce", mutates_args=("tensor",))
        def all_reduce(tensor: torch.Tensor, op: int, comm: int) -> None:
            _comm(comm).all_reduce(tensor, op)

        @all_reduce.register_fake
        def _(tensor, op, comm):
            return None

        @torch.library.custom_op("sdma::reduce_scatter_tensor",
                                 mutates_args=("output",))
        def reduce_scatter_tensor(output: torch.Tensor, input: torch.Tensor,
                                  op: int, comm: int) -> None:
            _comm(comm).reduce_scatter_tensor(output, input, op)

        @reduce_scatter_tensor.register_fake
        def _(output, input, op, comm):
            return None

        @torch.library.custom_op("sdma::all_to_all_vdev_2d",
                                 mutates_args=("out", "out_splits_offsets"))
        def all_to_all_vdev_2d(input: torch.Tensor, out: torch.Tensor,
                               in_splits: torch.Tensor,
                               out_splits_offsets: torch.Tensor,
                               major_align: int, comm: int) -> None:
            _comm(comm).all_to_all_vdev_2d(input, out, in_splits,
                                           out_splits_offsets, major_align)

        @all_to_all_vdev_2d.register_fake
        def _(input, out, in_splits, out_splits_offsets, major_align, comm):
            return None

        @torch.library.custom_op("sdma::all_to_all_vdev_2d_offset",
                                 mutates_args=("out", "out_splits_offsets"))
        def all_to_all_vdev_2d_offset(input: torch.Tensor, out: torch.Tensor,
                                      in_splits_offsets: torch.Tensor,
                                      out_splits_offsets: torch.Tensor,
                                      comm: int) -> None:
            _comm(comm).all_to_all_vdev_2d_offset(input, out, in_splits_offsets,
                                                  out_splits_offsets)

        @all_to_all_vdev_2d_offset.register_fake
        def _(input, out, in_splits_offsets, out_splits_offsets, comm):
            return None

        AVAILABLE = True
except ImportError:
    pass
