//===- FuseBcast.cpp - two copies of one source become a bcast ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/ValidatedRewrite.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <tuple>

namespace sdma {
#define GEN_PASS_DEF_SDMAFUSEBCAST
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {
struct SdmaFuseBcastPass
    : public sdma::impl::SdmaFuseBcastBase<SdmaFuseBcastPass> {
  /// Two copies that become one bcast.
  struct Pair {
    CopyOp first, second;
    StaticSlice src, dst0, dst1;
  };

  void runOnOperation() override {
    for (ScheduleOp schedule :
         llvm::to_vector(getOperation().getOps<ScheduleOp>())) {
      // Pairs first, the rewrite (and its validation, which copies the
      // schedule) only where there is one: an all-to-all has none.
      SmallVector<Pair> pairs;
      for (ArrayRef<TransferOpInterface> stretch : getStretches(schedule))
        findPairs(stretch, pairs);
      if (pairs.empty())
        continue;
      (void)rewriteValidated(schedule, "sdma-fuse-bcast", [&](ScheduleOp) {
        for (Pair &pair : pairs)
          fuse(pair);
        return success();
      });
    }
  }

  /// Pairs copies of one source slice whose destinations overlap neither
  /// each other nor the source, in stretch order: each copy takes the first
  /// later one that qualifies. Only copies of the same source can pair, so
  /// they are grouped by their source first (a hash, not a scan of every
  /// pair: linear in the stretch when there is nothing to fuse, as in an
  /// all-to-all).
  static void findPairs(ArrayRef<TransferOpInterface> stretch,
                        SmallVectorImpl<Pair> &pairs) {
    struct Candidate {
      CopyOp op;
      StaticSlice dst;
      bool used = false;
    };
    using Key = std::tuple<const void *, int64_t, int64_t, int64_t>;
    llvm::MapVector<Key, SmallVector<Candidate>> bySource;
    for (TransferOpInterface op : stretch)
      if (auto copy = dyn_cast<CopyOp>(op.getOperation()))
        if (copy.hasStaticFields() && !copy.getEngine()) {
          StaticSlice src = *getStaticSlice(copy, 0);
          bySource[{src.buffer.getAsOpaquePointer(), src.rank, src.offset,
                    src.count}]
              .push_back({copy, *getStaticSlice(copy, 1)});
        }
    for (auto &[key, copies] : bySource) {
      if (copies.size() < 2)
        continue;
      StaticSlice src = *getStaticSlice(copies.front().op, 0);
      for (size_t i = 0; i < copies.size(); ++i) {
        if (copies[i].used || copies[i].dst.overlaps(src))
          continue;
        for (size_t j = i + 1; j < copies.size(); ++j) {
          const StaticSlice &dst0 = copies[i].dst, &dst1 = copies[j].dst;
          if (copies[j].used || dst0.overlaps(dst1) || dst1.overlaps(src))
            continue;
          pairs.push_back({copies[i].op, copies[j].op, src, dst0, dst1});
          copies[i].used = copies[j].used = true;
          break;
        }
      }
    }
  }

  static void fuse(Pair pair) {
    const StaticSlice &src = pair.src, &dst0 = pair.dst0, &dst1 = pair.dst1;
    OpBuilder builder(pair.first);
    BcastOp::create(
        builder, pair.first.getLoc(), src.buffer, dst0.buffer, dst1.buffer,
        ValueRange(),
        builder.getDenseI64ArrayAttr({src.rank, src.offset, src.count,
                                      dst0.rank, dst0.offset, dst0.count,
                                      dst1.rank, dst1.offset, dst1.count}),
        IntegerAttr());
    pair.first.erase();
    pair.second.erase();
  }
};
} // namespace
