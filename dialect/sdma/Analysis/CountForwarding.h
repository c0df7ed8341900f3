//===- CountForwarding.h - count tables read via their copies -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A `forwarded` side of sdma.copyv (`packed forwarded %recv[j] on p`) takes
// its offset from the entries the schedule's count copies put into %recv on
// p, read where those copies read them: the senders' own count tables. The
// copyv then needs no order after the copies (an all-to-allv's count
// exchange and its data move in one phase, no barrier between), and its
// offset is the one it would have read after them. This is the map from a
// flat schedule's count-table entries to the entries they are copied from,
// shared by the verifier, sdma-resolve-counts and the HIP emitter.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_ANALYSIS_COUNTFORWARDING_H
#define SDMA_ANALYSIS_COUNTFORWARDING_H

#include "sdma/IR/SdmaOps.h"

#include <map>
#include <tuple>
#include <vector>

namespace sdma {

/// A count-table entry: rank, buffer (its index among the schedule's
/// buffers) and entry.
struct CountEntry {
  int64_t rank = 0;
  unsigned buffer = 0;
  int64_t index = 0;
  bool operator<(const CountEntry &o) const {
    return std::tie(rank, buffer, index) < std::tie(o.rank, o.buffer, o.index);
  }
  bool operator==(const CountEntry &o) const {
    return rank == o.rank && buffer == o.buffer && index == o.index;
  }
};

class CountForwarding {
public:
  /// The map of flat `schedule`, after checking each forwarded side of its
  /// sdma.copyv ops: every entry its offset needs (those before its index)
  /// is written by exactly one sdma.copy and by nothing else, out of a
  /// count table that no op writes. Fails with an error on the copyv that
  /// cannot be forwarded, naming the entry and why.
  static mlir::FailureOr<CountForwarding> build(ScheduleOp schedule);

  /// Entries [0, end) of count table `buffer` on `rank`, each where it is
  /// copied from (the entries build checked; any other is a caller's bug).
  std::vector<CountEntry> view(int64_t rank, unsigned buffer,
                               int64_t end) const;

  /// Whether the schedule has a forwarded side.
  bool used() const { return anyForwarded; }

private:
  std::map<CountEntry, CountEntry> from;
  bool anyForwarded = false;
};

/// A packed side's layout code: its table form (CopyvOp::TableForm) plus 4
/// where it is read forwarded. The verifier tells segments of different
/// codes apart, and it is the kernel's form word (LdstCounts.hip).
inline int64_t getTableCode(CopyvOp op, unsigned side) {
  return op.getTableForm(side) + (op.isForwarded(side) ? 4 : 0);
}

} // namespace sdma

#endif // SDMA_ANALYSIS_COUNTFORWARDING_H
