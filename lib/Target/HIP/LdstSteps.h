//===- LdstSteps.h - a rank's steps in the load/store kernel -----*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What --sdma-to-hip builds before it writes anything: per rank, a list of
// steps (TranslateToHIP.cpp describes them) over one table of op rows.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_HIP_LDSTSTEPS_H
#define SDMA_LIB_TARGET_HIP_LDSTSTEPS_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace sdma::hip {

enum StepKind { kPhase = 0, kSync = 1, kSignal = 2, kWait = 3, kBarrier = 4 };
constexpr int kOpStride = 12;

struct Step {
  int kind, a, b;
};

/// (rank, buffer, offset) of a reduce source or extra destination.
using SliceRef = std::array<int64_t, 3>;

/// One step of a rank before the tables are laid out.
struct RawStep {
  Step step;
  /// Phases: op rows (kOpStride each). A reduce row (kind 4) holds, until
  /// layout, the index of its group in `sources` at [7]; [9] is 1 when the
  /// group's first source is the initial value (the destination is not
  /// read), [10] the number of extra destinations.
  std::vector<int64_t> opRows;
  /// Reduce rows of the phase by destination (rank, buffer, offset, count).
  std::map<std::array<int64_t, 4>, std::size_t> groups;
  std::vector<std::vector<SliceRef>> sources;
  std::vector<std::vector<SliceRef>> dests;
};

} // namespace sdma::hip

#endif // SDMA_LIB_TARGET_HIP_LDSTSTEPS_H
