//===- MergeCopies.cpp - abutting copies of a stretch become one ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Copies a rank issues between two ordering points run concurrently, so
// two copies of one stretch between the same buffers and ranks whose
// slices abut on both sides can be one copy, whatever their order. Copies
// that can chain have the same (buffers, ranks, destination offset minus
// source offset): sorted by that key, then source offset, each group's
// abutting runs merge in one pass (no scan of every pair). A sort, not a
// hash map of groups: an all-to-all's stretch is a million copies in a
// million groups of one, and a map of them missed the cache on every probe
// (the pass grew 8.6x from 512 to 1024 ranks; a sort of flat records does
// not).
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"

#include <algorithm>
#include <tuple>
#include <vector>

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

  /// Copies that can chain: same buffers, ranks, offset difference and
  /// issuer (a put and a pull between the same ranks stay two).
  auto key() const {
    return std::make_tuple(
        reinterpret_cast<uintptr_t>(src.buffer.getAsOpaquePointer()), src.rank,
        reinterpret_cast<uintptr_t>(dst.buffer.getAsOpaquePointer()), dst.rank,
        dst.offset - src.offset, CopyOp(op).getPull());
  }
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
    std::vector<Piece> pieces;
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
      pieces.push_back({copy, *src, *dst, position});
    }
    // Position last: a group's pieces of one source offset keep stretch
    // order, as a stable sort would.
    llvm::sort(pieces, [](const Piece &a, const Piece &b) {
      return std::tuple_cat(a.key(),
                            std::make_tuple(a.src.offset, a.position)) <
             std::tuple_cat(b.key(), std::make_tuple(b.src.offset, b.position));
    });
    for (size_t begin = 0; begin < pieces.size();) {
      size_t end = begin + 1;
      while (end < pieces.size() && pieces[end].key() == pieces[begin].key())
        ++end;
      if (end - begin > 1)
        mergeRuns(MutableArrayRef<Piece>(pieces).slice(begin, end - begin));
      begin = end;
    }
  }
};

} // namespace
