//===- FuseBcast.cpp - two copies of one source become a bcast ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/ValidatedRewrite.h"

#include "mlir/IR/Builders.h"

#include <tuple>
#include <vector>

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
  /// they are sorted by their source first (not a scan of every pair, and
  /// not a hash map of groups: an all-to-all's stretch is a million copies
  /// with a million sources, and a map of them missed the cache on every
  /// probe).
  static void findPairs(ArrayRef<TransferOpInterface> stretch,
                        SmallVectorImpl<Pair> &pairs) {
    struct Candidate {
      CopyOp op;
      StaticSlice src, dst;
      unsigned position;
      bool used = false;
      auto key() const {
        return std::make_tuple(
            reinterpret_cast<uintptr_t>(src.buffer.getAsOpaquePointer()),
            src.rank, src.offset, src.count);
      }
    };
    std::vector<Candidate> candidates;
    for (TransferOpInterface op : stretch)
      if (auto copy = dyn_cast<CopyOp>(op.getOperation()))
        // A broadcast is a put: a pull's reader is not its source.
        if (copy.hasStaticFields() && !copy.getEngine() && !copy.getPull())
          candidates.push_back({copy, *getStaticSlice(copy, 0),
                                *getStaticSlice(copy, 1),
                                unsigned(candidates.size())});
    // Position last: a group keeps stretch order.
    llvm::sort(candidates, [](const Candidate &a, const Candidate &b) {
      return std::tuple_cat(a.key(), std::make_tuple(a.position)) <
             std::tuple_cat(b.key(), std::make_tuple(b.position));
    });
    for (size_t begin = 0; begin < candidates.size();) {
      size_t end = begin + 1;
      while (end < candidates.size() &&
             candidates[end].key() == candidates[begin].key())
        ++end;
      const StaticSlice &src = candidates[begin].src;
      for (size_t i = begin; i < end; ++i) {
        if (candidates[i].used || candidates[i].dst.overlaps(src))
          continue;
        for (size_t j = i + 1; j < end; ++j) {
          const StaticSlice &dst0 = candidates[i].dst,
                            &dst1 = candidates[j].dst;
          if (candidates[j].used || dst0.overlaps(dst1) || dst1.overlaps(src))
            continue;
          pairs.push_back(
              {candidates[i].op, candidates[j].op, src, dst0, dst1});
          candidates[i].used = candidates[j].used = true;
          break;
        }
      }
      begin = end;
    }
  }

  static void fuse(Pair pair) {
    const StaticSlice &src = pair.src, &dst0 = pair.dst0, &dst1 = pair.dst1;
    OpBuilder builder(pair.first);
    BcastOp::create(builder, pair.first.getLoc(), src.buffer, dst0.buffer,
                    dst1.buffer, ValueRange(),
                    ArrayRef<int64_t>({src.rank, src.offset, src.count,
                                       dst0.rank, dst0.offset, dst0.count,
                                       dst1.rank, dst1.offset, dst1.count}),
                    IntegerAttr());
    pair.first.erase();
    pair.second.erase();
  }
};
} // namespace
