//===- LowLatency.h - the low-latency (flag-in-data) tables -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A schedule whose every rank runs one phase of copies and broadcasts out of
// its own memory and reductions into it (all-gather, all-to-all, broadcast,
// scatter, gather, one-shot all-reduce, reduce-scatter and reduce direct)
// can run a communicator's small calls without a job barrier: a rank writes
// each 8 bytes another rank needs of its memory into that rank's inbox as a
// 16-byte packet whose two words carry a flag beside the data, and the
// receiver polls the flags and moves (or reduces) the data into its own
// buffers (LdstLowLatency.hip). This plans, from the step and op tables,
// what each rank pushes, copies in place, receives and reduces: per (sender,
// receiver) pair, the pushes in the order planned, each at the sum of the
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

/// Columns of the tables' rows (chunk offsets and counts):
///   push:   source buffer, offset, chunks, receiving rank, pair offset;
///   local:  source buffer, offset, chunks, destination buffer, offset;
///   recv:   sending rank, destination buffer, offset, chunks, pair offset;
///   reduce: destination buffer, offset, chunks, whether the first source
///           is the initial value (else the destination is), sources, the
///           first source's index in `reduceSources`;
///   reduce source: rank, buffer, offset, pair offset (-1: the reducing
///           rank's own memory, read in place).
constexpr int kLowLatencyPushStride = 5;
constexpr int kLowLatencyLocalStride = 5;
constexpr int kLowLatencyRecvStride = 5;
constexpr int kLowLatencyReduceStride = 6;
constexpr int kLowLatencySourceStride = 4;

struct LowLatencyTables {
  /// Per rank r, rows [begin[r], begin[r + 1]) of each table.
  std::vector<int64_t> push, local, recv, reduce, reduceSources;
  std::vector<int> pushBegin, localBegin, recvBegin, reduceBegin;
  /// The most chunks one rank sends one other rank in a call.
  int64_t pairChunks = 0;
};

/// The tables, or nullopt with why the schedule cannot run this way (a rank
/// with more than one step, a swap, a count-table op, a reduction into
/// another rank's memory). `rsrc` is the reduce rows' source lists
/// (TranslateToHIP.cpp's sdma_rsrc).
std::optional<LowLatencyTables>
planLowLatency(int64_t ranks, const std::vector<std::vector<Step>> &steps,
               const std::vector<int64_t> &ops,
               const std::vector<int64_t> &rsrc, std::string &why);

} // namespace sdma::hip

#endif // SDMA_LIB_TARGET_HIP_LOWLATENCY_H
