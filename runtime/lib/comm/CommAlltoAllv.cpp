//===- CommAlltoAllv.cpp - all-to-allv with counts in device memory -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Communicator::allToAllv runs schedules/all_to_allv_slots.mlir or
// all_to_allv_packed.mlir. The caller's counts stay on the device: the
// kernel itself copies them into the instance's send-count table (in the
// control area, so peers can reach the receive table next to it) before
// it starts, exchanges them, moves the rows, and copies the receive table
// out once every peer's rows are in: one kernel launch per call, nothing
// else on the stream. One row is `rowBytes`; a chunk, the slot of one
// peer, is `capacity` rows.
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Communicator.h"

using namespace sdma::rt;

bool Communicator::allToAllv(const void *send, const int64_t *sendCounts,
                             void *recv, int64_t *recvCounts, size_t capacity,
                             size_t rowBytes, AlltoAllvLayout layout,
                             void *stream, std::string &error) {
  if (!send || !recv || !sendCounts) {
    error = "AlltoAllv: the send buffer, the receive buffer and the send "
            "counts must not be null";
    return false;
  }
  std::optional<uint64_t> chunk = checkedMul(capacity, rowBytes);
  if (capacity == 0 || rowBytes == 0 || !chunk ||
      !checkedMul(*chunk, uint64_t(ranks_))) {
    error = "AlltoAllv: capacity " + std::to_string(capacity) + " rows of " +
            std::to_string(rowBytes) +
            " bytes: both must be positive and their product times the "
            "rank count must fit 64 bits";
    return false;
  }
  // In place would let a peer's rows land where this rank still reads.
  uint64_t total = *chunk * uint64_t(ranks_);
  auto s = reinterpret_cast<uintptr_t>(send),
       r = reinterpret_cast<uintptr_t>(recv);
  if (s < r + total && r < s + total) {
    error = "AlltoAllv: the send and receive buffers overlap (in place is "
            "not supported: a peer's rows would land where this rank still "
            "reads)";
    return false;
  }
  bool packed = layout == AlltoAllvLayout::Packed;
  std::string schedule = packed ? "all_to_allv_packed" : "all_to_allv_slots";
  int index = -1;
  if (!instanceFor(schedule, 0, index, error))
    return false;
  const Instance &instance = instances_[index];
  if (!instance.countsOffset) {
    error = "internal: " + schedule + " has no count tables";
    return false;
  }
  char *tables = regions_[0].local + instance.countsOffset;
  size_t tableBytes = size_t(ranks_) * sizeof(int64_t);
  std::string signature =
      std::string("AlltoAllv ") + (packed ? "packed" : "slots") + " capacity " +
      std::to_string(capacity) + " row " + std::to_string(rowBytes);
  // The kernel copies the counts in before it starts and the receive counts
  // out once every peer's arrived (SdmaTable::countsIn/countsOut).
  return run(index, {send, recv, tables, tables + tableBytes}, *chunk, stream,
             signature, error, {}, rowBytes,
             {sendCounts, tables, recvCounts ? tables + tableBytes : nullptr,
              recvCounts});
}
