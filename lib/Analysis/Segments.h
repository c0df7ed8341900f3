//===- Segments.h - symbolic contents of run-time-sized copies --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Private to the verifier. The chunks of a flat schedule are executed
// symbolically (ScheduleVerifier.cpp); sdma.copyv moves a number of chunks
// known only at run time, so what it writes is kept as a *segment*: a
// destination offset, a source, and a count, each an expression over the
// count-table entries it reads. Offsets are a constant plus a sum of
// entries (the exclusive prefix sum of a table row for a packed side), so
// two segments are equal exactly when their expressions are, for every
// count value: no enumeration of counts.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_ANALYSIS_SEGMENTS_H
#define SDMA_LIB_ANALYSIS_SEGMENTS_H

#include "sdma/Analysis/CountForwarding.h"
#include "sdma/IR/SdmaOps.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace sdma::detail {

/// A chunk's (or count-table entry's) symbolic contents: where it came
/// from at the start; rank -1: never written.
struct Symbol {
  int64_t rank = -1;
  int64_t buffer = -1;
  int64_t chunk = -1;
  bool operator==(const Symbol &o) const {
    return rank == o.rank && buffer == o.buffer && chunk == o.chunk;
  }
  bool operator<(const Symbol &o) const {
    return std::tie(rank, buffer, chunk) < std::tie(o.rank, o.buffer, o.chunk);
  }
};

/// contents[rank][buffer][chunk]
using SymbolicMemory = std::vector<std::vector<std::vector<Symbol>>>;

/// A chunk offset known at run time: a constant plus count-table entries,
/// plus (expert-major) whole groups of entries, each group's sum rounded
/// up to a multiple of `align` and to at least `align`.
struct SymbolicOffset {
  int64_t constant = 0;
  std::vector<Symbol> terms;
  std::vector<std::vector<Symbol>> groups;
  int64_t align = 0;
  bool operator==(const SymbolicOffset &o) const {
    return constant == o.constant && terms == o.terms && groups == o.groups &&
           align == o.align;
  }
  bool operator<(const SymbolicOffset &o) const {
    return std::tie(constant, terms, groups, align) <
           std::tie(o.constant, o.terms, o.groups, o.align);
  }
};

/// What one sdma.copyv left at a destination offset.
struct Segment {
  int64_t sourceRank;
  unsigned sourceBuffer;
  SymbolicOffset sourceOffset;
  Symbol count;
  int64_t max;
  mlir::Operation *op;
};

/// Records the segments sdma.copyv ops write, in a topological order, and
/// checks all_to_allv's postcondition on them.
class SegmentTracker {
public:
  SegmentTracker(ScheduleOp schedule, int64_t ranks,
                 const CountForwarding &forwarding)
      : schedule(schedule), ranks(ranks), forwarding(forwarding) {}

  /// all_to_allv: buffer and table sizes, and that only sdma.copyv writes
  /// the data buffers (so the segments are all that is there).
  mlir::LogicalResult checkLayout();
  /// One copyv, reading count-table entries from `memory`. Chunks it may
  /// write lose their symbols (a fixed-size collective's proof then fails
  /// where a copyv could have overwritten what it needs).
  mlir::LogicalResult record(CopyvOp op, SymbolicMemory &memory);
  /// A static copy moves the segments wholly inside its source slice:
  /// `segmentsIn` takes them (offsets relative to the slice), `place` puts
  /// them at the destination, which loses whatever segments it held there
  /// (a reduce places none). So rows may travel through staging buffers,
  /// e.g. across nodes, and still be followed to the output.
  std::vector<std::pair<int64_t, Segment>>
  segmentsIn(const StaticSlice &slice) const;
  void place(const StaticSlice &slice,
             const std::vector<std::pair<int64_t, Segment>> &moved);
  /// After the last op: every (sender, receiver) segment of all_to_allv.
  mlir::LogicalResult checkAllToAllv(const SymbolicMemory &memory);

private:
  /// One segment the collective defines on a receiver.
  struct Expected {
    int64_t sender;
    int64_t expert; // -1: a rank-level all-to-allv
    Symbol count;
    int64_t recvIndex; // where the receiver's table must hold `count`
    SymbolicOffset at, from;
  };
  std::vector<Expected> expectedAt(int64_t receiver, int64_t capacity);
  SymbolicOffset tableOffset(CopyvOp op, unsigned side,
                             const SymbolicMemory &memory);
  unsigned bufferIndex(mlir::Value buffer) const {
    return mlir::cast<mlir::BlockArgument>(buffer).getArgNumber() - 1;
  }
  int64_t chunksOf(unsigned buffer);
  std::string describe(const Symbol &symbol);
  std::string describe(const SymbolicOffset &offset);

  ScheduleOp schedule;
  int64_t ranks;
  const CountForwarding &forwarding;
  /// Per (rank, buffer): how copyv ops lay it out (-1: fixed slots, else
  /// the prefix table and its rank) and the segments by offset.
  struct Written {
    int64_t table = -1, tableRank = -1, form = -1;
    std::map<SymbolicOffset, Segment> segments;
  };
  std::map<std::pair<int64_t, unsigned>, Written> written;
};

} // namespace sdma::detail

#endif // SDMA_LIB_ANALYSIS_SEGMENTS_H
