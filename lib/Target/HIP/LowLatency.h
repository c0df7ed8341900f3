//===- LowLatency.h - the low-latency (flag-in-data) tables -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A schedule whose every rank runs one phase of copies and broadcasts out of
// its own memory (all-gather, all-to-all, broadcast, scatter, gather direct)
// can run a communicator's small calls without a job barrier: the sender
// writes each 8 bytes for another rank into that rank's inbox as a 16-byte
// packet whose two words carry a flag beside the data, and the receiver
// polls the flags and moves the data into its own buffer
// (LdstLowLatency.hip). This plans where each op's packets go: per (sender,
// receiver) pair, the ops in the sender's order, each at the sum of the
// chunks before it.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_HIP_LOWLATENCY_H
#define SDMA_LIB_TARGET_HIP_LOWLATENCY_H

#include "LdstSteps.h"

#include <optional>
#include <string>
#include <vector>

namespace sdma::hip {

/// Columns of a receive row: the sender, the destination buffer and offset
/// (chunks, on the receiving rank), the chunks, and where they start in the
/// sender's region of the inbox (chunks).
constexpr int kLowLatencyRecvStride = 5;

struct LowLatencyTables {
  /// Two per op row of the op table: for each destination (a broadcast has
  /// two) the chunk offset of its packets in the sender's region of the
  /// receiver's inbox, or -1 where the destination is the sender's own
  /// memory (copied in place) or absent.
  std::vector<int64_t> send;
  /// Per rank, the rows its blocks receive (kLowLatencyRecvStride each),
  /// rows [recvBegin[r], recvBegin[r + 1]).
  std::vector<int64_t> recv;
  std::vector<int> recvBegin;
  /// The most chunks one rank sends one other rank in a call.
  int64_t pairChunks = 0;
};

/// The tables, or nullopt with why the schedule cannot run this way (a rank
/// with more than one step, a swap, a reduction, a count-table op).
std::optional<LowLatencyTables>
planLowLatency(int64_t ranks, const std::vector<std::vector<Step>> &steps,
               const std::vector<int64_t> &ops, std::string &why);

} // namespace sdma::hip

#endif // SDMA_LIB_TARGET_HIP_LOWLATENCY_H
