//===- Collectives.h - a collective call as a schedule call -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What each collective of the C API runs: the built-in schedule, its root
// and arithmetic, its buffers (in place or not) and its chunk. A plan
// checks every argument the rank can judge alone -- types, roots, null
// buffers, sizes whose bytes wrap 64 bits, partial overlaps -- before any
// state changes, the same way on every rank (a null receive buffer is
// refused on every rank, not on the root only), and changes nothing.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_COLLECTIVES_H
#define SDMA_RUNTIME_LIB_COMM_COLLECTIVES_H

#include "comm/Launcher.h"

namespace sdma::rt {

struct CollectivePlan {
  /// True where there is nothing to move (count 0, as NCCL).
  bool nothing = false;
  std::string schedule;
  int root = 0;
  /// An MoE all-to-allv's local experts per rank and major alignment.
  int experts = 0, majorAlign = 0;
  std::optional<Arithmetic> arithmetic;
  Call call;
  /// In-place all-reduce: buffer 1 is a staging buffer of this size in the
  /// symmetric heap (the communicator provides it).
  size_t stageBytes = 0;
};

/// The shape of the communicator a plan is made for.
struct CommShape {
  int rank = 0, ranks = 1;
  /// All-reduce from this size up runs two-shot (CommOptions).
  size_t twoShotBytes = 0;
};

/// True if [a, a + aBytes) and [b, b + bBytes) share a byte (neither null).
bool overlap(const void *a, uint64_t aBytes, const void *b, uint64_t bBytes);

bool planCollective(CommOp op, const void *send, void *recv, size_t count,
                    DataType type, int root, const CommShape &shape,
                    CollectivePlan &plan, Error &error);
bool planReduction(CommReduction kind, const void *send, void *recv,
                   size_t count, const Arithmetic &arithmetic, int root,
                   const CommShape &shape, CollectivePlan &plan, Error &error);
/// MoE dispatch into expert-major rows (all_to_allv_2d; `combine`: its
/// inverse, all_to_allv_2d_offset, whose `inCounts` are splits then
/// offsets).
bool planAllToAllv2d(bool combine, const void *send, const int64_t *inCounts,
                     void *recv, int64_t *outCounts, int experts,
                     size_t capacity, size_t rowBytes, int majorAlign,
                     const CommShape &shape, CollectivePlan &plan,
                     Error &error);
bool planAllToAllv(const void *send, const int64_t *sendCounts, void *recv,
                   int64_t *recvCounts, size_t capacity, size_t rowBytes,
                   AlltoAllvLayout layout, const CommShape &shape,
                   CollectivePlan &plan, Error &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_COLLECTIVES_H
