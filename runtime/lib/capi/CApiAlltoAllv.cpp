//===- CApiAlltoAllv.cpp - the all-to-allvs of the C API ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdmaAlltoAllv (counts per rank, slots or packed) and the expert-major MoE
// pair, sdmaAlltoAllv2d and its inverse sdmaAlltoAllv2dOffset: the counts
// live in device memory and are read by the kernel, so the C layer checks
// the arguments it can see (handle, type, layout, row size) and leaves the
// rest to the communicator.
//
//===----------------------------------------------------------------------===//

#include "capi/CApiCommon.h"

using namespace sdma::capi;
using namespace sdma::rt;

sdmaResult_t sdmaAlltoAllv(const void *sendbuff, const int64_t *sendcounts,
                           void *recvbuff, int64_t *recvcounts, size_t capacity,
                           size_t rowcount, sdmaDataType_t datatype,
                           sdmaAlltoAllvLayout_t layout, sdmaComm_t comm,
                           sdmaStream_t stream) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "AlltoAllv: comm is NULL");
  if (datatype < 0 || datatype >= sdmaNumTypes ||
      (layout != sdmaAlltoAllvSlots && layout != sdmaAlltoAllvPacked))
    return fail(comm, sdmaInvalidArgument,
                "AlltoAllv: invalid datatype " + std::to_string(datatype) +
                    " or layout " + std::to_string(layout));
  if (comm->multi && layout != sdmaAlltoAllvSlots)
    return fail(comm, sdmaInvalidUsage,
                "AlltoAllv on a multi-node communicator: only the slots "
                "layout is built across nodes (the packed layout is not)");
  size_t element = dataTypeBytes(static_cast<DataType>(datatype));
  if (rowcount && element > SIZE_MAX / rowcount)
    return fail(comm, sdmaInvalidArgument,
                "AlltoAllv: a row of " + std::to_string(rowcount) +
                    " elements overflows");
  size_t rowBytes = rowcount * element;
  if (!comm->multi)
    return runOrDefer(
        comm, "AlltoAllv",
        [=](Error &error) {
          return comm->node->allToAllv(
              sendbuff, sendcounts, recvbuff, recvcounts, capacity, rowBytes,
              layout == sdmaAlltoAllvPacked ? AlltoAllvLayout::Packed
                                            : AlltoAllvLayout::Slots,
              stream, error);
        },
        true);
  return guarded(comm, [&] {
    Error error;
    return comm->multi->allToAllv(sendbuff, sendcounts, recvbuff, recvcounts,
                                  capacity, rowBytes, stream, error)
               ? sdmaSuccess
               : fail(comm, "AlltoAllv", error);
  });
}

/// sdmaAlltoAllv2d and its inverse: the checks before the call.
static sdmaResult_t runAlltoAllv2d(bool combine, const void *sendbuff,
                                   const int64_t *incounts, void *recvbuff,
                                   int64_t *outcounts, int experts,
                                   size_t capacity, size_t majoralign,
                                   size_t rowcount, sdmaDataType_t datatype,
                                   sdmaComm_t comm, sdmaStream_t stream) {
  const char *what = combine ? "AlltoAllv2dOffset" : "AlltoAllv2d";
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument,
                std::string(what) + ": comm is NULL");
  if (datatype < 0 || datatype >= sdmaNumTypes)
    return fail(comm, sdmaInvalidArgument,
                std::string(what) + ": invalid datatype " +
                    std::to_string(datatype));
  if (comm->multi)
    return notMultiNode(comm, what);
  size_t element = dataTypeBytes(static_cast<DataType>(datatype));
  if ((rowcount && element > SIZE_MAX / rowcount) || majoralign > (1u << 20))
    return fail(comm, sdmaInvalidArgument,
                std::string(what) + ": a row of " + std::to_string(rowcount) +
                    " elements overflows, or the alignment " +
                    std::to_string(majoralign) + " is above 1048576 rows");
  size_t rowBytes = rowcount * element;
  return runOrDefer(
      comm, what,
      [=](Error &error) {
        return combine
                   ? comm->node->allToAllv2dOffset(sendbuff, incounts, recvbuff,
                                                   outcounts, experts, capacity,
                                                   rowBytes, stream, error)
                   : comm->node->allToAllv2d(
                         sendbuff, incounts, recvbuff, outcounts, experts,
                         capacity, rowBytes, int(majoralign), stream, error);
      },
      true);
}

sdmaResult_t sdmaAlltoAllv2d(const void *sendbuff, const int64_t *insplits,
                             void *recvbuff, int64_t *outsplitsoffsets,
                             int experts, size_t capacity, size_t majoralign,
                             size_t rowcount, sdmaDataType_t datatype,
                             sdmaComm_t comm, sdmaStream_t stream) {
  return runAlltoAllv2d(false, sendbuff, insplits, recvbuff, outsplitsoffsets,
                        experts, capacity, majoralign, rowcount, datatype, comm,
                        stream);
}

sdmaResult_t sdmaAlltoAllv2dOffset(const void *sendbuff,
                                   const int64_t *insplitsoffsets,
                                   void *recvbuff, int64_t *outsplitsoffsets,
                                   int experts, size_t capacity,
                                   size_t rowcount, sdmaDataType_t datatype,
                                   sdmaComm_t comm, sdmaStream_t stream) {
  return runAlltoAllv2d(true, sendbuff, insplitsoffsets, recvbuff,
                        outsplitsoffsets, experts, capacity, 1, rowcount,
                        datatype, comm, stream);
}
