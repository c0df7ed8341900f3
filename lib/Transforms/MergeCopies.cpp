//===- MergeCopies.cpp - abutting copies of a stretch become one ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Copies a rank issues between two ordering points run concurrently, so
// two copies of one stretch between the same buffers and ranks whose
// slices abut on both sides can be one copy, whatever their order. Copies
// that can chain have the same (buffers, ranks, destination offset minus
// source offset): grouped by that key and sorted by source offset, each
// group's abutting runs merge in one pass (no scan of every pair).
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <tuple>

namespace sdma {
#define GEN_PASS_DEF_SDMAMERGECOPIES
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {

struct Piece {
  CopyOp op;
  StaticSlice src, dst;
  unsigned position; // in the stretch: the merged copy takes the first's
};

/// Merges the abutting runs of one group (same buffers, ranks and offset
/// difference), given sorted by source offset.
void mergeRuns(MutableArrayRef<Piece> group) {
  for (size_t begin = 0; begin < group.size();) {
    size_t end = begin + 1;
    int64_t next = group[begin].src.offset + group[begin].src.count;
    while (end < group.size() && group[end].src.offset == next)
      next += group[end++].src.count;
    if (end - begin > 1) {
      ArrayRef<Piece> run = group.slice(begin, end - begin);
      CopyOp keep = std::min_element(run.begin(), run.end(),
                                     [](const Piece &a, const Piece &b) {
                                       return a.position < b.position;
                                     })
                        ->op;
      const Piece &first = run.front();
      int64_t count = next - first.src.offset;
      keep.setStaticFields({first.src.rank, first.src.offset, count,
                            first.dst.rank, first.dst.offset, count});
      for (const Piece &piece : run)
        if (piece.op != keep)
          CopyOp(piece.op).erase();
    }
    begin = end;
  }
}

struct SdmaMergeCopiesPass
    : public sdma::impl::SdmaMergeCopiesBase<SdmaMergeCopiesPass> {
  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      for (ArrayRef<TransferOpInterface> stretch : getStretches(schedule))
        mergeStretch(stretch);
  }

  static void mergeStretch(ArrayRef<TransferOpInterface> stretch) {
    using Key =
        std::tuple<const void *, int64_t, const void *, int64_t, int64_t>;
    llvm::MapVector<Key, SmallVector<Piece>> groups;
    unsigned position = 0;
    for (TransferOpInterface op : stretch) {
      ++position;
      auto copy = dyn_cast<CopyOp>(op.getOperation());
      if (!copy || copy.getEngine())
        continue;
      std::optional<StaticSlice> src = getStaticSlice(copy, 0);
      std::optional<StaticSlice> dst = getStaticSlice(copy, 1);
      // Within one buffer on one rank a merged copy could read what it
      // writes: left alone.
      if (!src || !dst ||
          (src->buffer == dst->buffer && src->rank == dst->rank))
        continue;
      groups[{src->buffer.getAsOpaquePointer(), src->rank,
              dst->buffer.getAsOpaquePointer(), dst->rank,
              dst->offset - src->offset}]
          .push_back({copy, *src, *dst, position});
    }
    for (auto &entry : groups) {
      SmallVector<Piece> &group = entry.second;
      if (group.size() < 2)
        continue;
      llvm::stable_sort(group, [](const Piece &a, const Piece &b) {
        return a.src.offset < b.src.offset;
      });
      mergeRuns(group);
    }
  }
};

} // namespace
