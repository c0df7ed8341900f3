//===- FuseSwap.cpp - opposite copies become local staging + a swap -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// See Passes.td for when the rewrite preserves meaning.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/ValidatedRewrite.h"

#include "mlir/IR/Builders.h"
#include <set>
#include <tuple>

namespace sdma {
#define GEN_PASS_DEF_SDMAFUSESWAP
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {

struct Pair {
  CopyOp a, b; // a: Sp@p -> Dq@q, b: Sq@q -> Dp@p
};

struct SdmaFuseSwapPass
    : public sdma::impl::SdmaFuseSwapBase<SdmaFuseSwapPass> {
  using SdmaFuseSwapBase::SdmaFuseSwapBase;

  void runOnOperation() override {
    for (ScheduleOp schedule :
         llvm::to_vector(getOperation().getOps<ScheduleOp>())) {
      if (!schedule.getRanks())
        continue;
      (void)rewriteValidated(schedule, "sdma-fuse-swap", [&](ScheduleOp s) {
        fuse(s);
        return success();
      });
    }
  }

  void fuse(ScheduleOp schedule) {
    // A tag no signal of the schedule uses yet.
    int64_t tag = 1;
    schedule.walk([&](Operation *op) {
      if (auto signal = dyn_cast<SignalOp>(op))
        tag = std::max<int64_t>(tag, signal.getTag() + 1);
      if (auto wait = dyn_cast<WaitOp>(op))
        tag = std::max<int64_t>(tag, wait.getTag() + 1);
    });
    for (ArrayRef<TransferOpInterface> stretch : getStretches(schedule))
      fuseStretch(stretch, *schedule.getRanks(), tag++);
  }

  static CopyOp createCopy(OpBuilder &builder, Location loc,
                           const StaticSlice &src, const StaticSlice &dst) {
    return CopyOp::create(builder, loc, src.buffer, dst.buffer, ValueRange(),
                          ArrayRef<int64_t>({src.rank, src.offset, src.count,
                                             dst.rank, dst.offset, dst.count}),
                          IntegerAttr());
  }

  /// Each pair turns two remote copies into one swap plus two staging
  /// copies. It pays only if the staging copies merge (with each other or
  /// the stretch's local copies) into fewer commands than there are pairs:
  /// all-to-all, yes (one per rank); all-gather, no (one source, scattered
  /// destinations).
  static bool profitable(ArrayRef<TransferOpInterface> stretch,
                         ArrayRef<Pair> pairs) {
    struct Local {
      Value srcBuffer, dstBuffer;
      int64_t rank, srcOffset, dstOffset, count;
      bool staging;
    };
    std::vector<Local> locals;
    for (TransferOpInterface op : stretch) {
      auto copy = dyn_cast<CopyOp>(op.getOperation());
      if (!copy || !copy.hasStaticFields())
        continue;
      StaticSlice src = *getStaticSlice(copy, 0);
      StaticSlice dst = *getStaticSlice(copy, 1);
      if (src.rank == dst.rank)
        locals.push_back({src.buffer, dst.buffer, src.rank, src.offset,
                          dst.offset, src.count, false});
    }
    for (Pair pair : pairs) {
      StaticSlice sp = *getStaticSlice(pair.a, 0);
      StaticSlice sq = *getStaticSlice(pair.b, 0);
      StaticSlice dp = *getStaticSlice(pair.b, 1);
      StaticSlice dq = *getStaticSlice(pair.a, 1);
      locals.push_back({sp.buffer, dp.buffer, sp.rank, sp.offset, dp.offset,
                        sp.count, true});
      locals.push_back({sq.buffer, dq.buffer, sq.rank, sq.offset, dq.offset,
                        sq.count, true});
    }
    auto key = [](const Local &l) {
      return std::make_tuple(l.rank, l.srcBuffer.getAsOpaquePointer(),
                             l.dstBuffer.getAsOpaquePointer(), l.srcOffset);
    };
    llvm::sort(locals,
               [&](const Local &a, const Local &b) { return key(a) < key(b); });
    // Count the merged runs that hold at least one staging copy.
    size_t stagingRuns = 0;
    bool runHasStaging = false;
    for (size_t i = 0; i < locals.size(); ++i) {
      const Local &l = locals[i];
      bool continues =
          i > 0 && locals[i - 1].rank == l.rank &&
          locals[i - 1].srcBuffer == l.srcBuffer &&
          locals[i - 1].dstBuffer == l.dstBuffer &&
          locals[i - 1].srcOffset + locals[i - 1].count == l.srcOffset &&
          locals[i - 1].dstOffset + locals[i - 1].count == l.dstOffset;
      if (!continues) {
        stagingRuns += runHasStaging;
        runHasStaging = false;
      }
      runHasStaging |= l.staging;
    }
    stagingRuns += runHasStaging;
    return stagingRuns < pairs.size();
  }

  void fuseStretch(ArrayRef<TransferOpInterface> stretch, int64_t ranks,
                   int64_t tag) {
    SmallVector<CopyOp> copies;
    for (TransferOpInterface op : stretch)
      if (auto copy = dyn_cast<CopyOp>(op.getOperation()))
        if (copy.hasStaticFields() && !copy.getEngine() && !copy.getPull())
          copies.push_back(copy);
    // A copy p -> q pairs with the first later unused copy q -> p of the
    // same count whose slices do not overlap its own. Candidates are found
    // through a hash of (source rank, destination rank, count), not a scan
    // of every pair of the stretch.
    struct Info {
      StaticSlice src, dst;
    };
    SmallVector<Info> info;
    using Key = std::tuple<int64_t, int64_t, int64_t>;
    DenseMap<Key, SmallVector<unsigned>> byDirection;
    for (auto [i, copy] : llvm::enumerate(copies)) {
      info.push_back({*getStaticSlice(copy, 0), *getStaticSlice(copy, 1)});
      byDirection[{info[i].src.rank, info[i].dst.rank, info[i].src.count}]
          .push_back(i);
    }
    SmallVector<Pair> pairs;
    SmallVector<bool> used(copies.size(), false);
    for (size_t i = 0; i < copies.size(); ++i) {
      const StaticSlice &sp = info[i].src, &dq = info[i].dst;
      if (used[i] || sp.rank == dq.rank)
        continue;
      auto it = byDirection.find({dq.rank, sp.rank, sp.count});
      if (it == byDirection.end())
        continue;
      ArrayRef<unsigned> candidates = it->second;
      for (unsigned j : llvm::make_range(
               llvm::upper_bound(candidates, unsigned(i)), candidates.end())) {
        const StaticSlice &sq = info[j].src, &dp = info[j].dst;
        if (used[j] || sp.overlaps(dp) || sq.overlaps(dq))
          continue;
        pairs.push_back({copies[i], copies[j]});
        used[i] = used[j] = true;
        break;
      }
    }
    if (pairs.empty() || (!always && !profitable(stretch, pairs)))
      return;

    // Staging copies, then the ordering, then the swaps, all after the last
    // op of the stretch.
    OpBuilder builder(stretch.back()->getContext());
    builder.setInsertionPointAfter(stretch.back());
    std::set<int64_t> issuers;
    std::set<std::pair<int64_t, int64_t>> handoffs; // (other rank, issuer)
    SmallVector<std::pair<Location, std::pair<StaticSlice, StaticSlice>>> swaps;
    for (Pair &pair : pairs) {
      StaticSlice sp = *getStaticSlice(pair.a, 0);
      StaticSlice dq = *getStaticSlice(pair.a, 1);
      StaticSlice sq = *getStaticSlice(pair.b, 0);
      StaticSlice dp = *getStaticSlice(pair.b, 1);
      createCopy(builder, pair.a.getLoc(), sp, dp);
      createCopy(builder, pair.b.getLoc(), sq, dq);
      // Balance the issuers: odd distance -> p issues, even -> q.
      int64_t distance = ((sq.rank - sp.rank) % ranks + ranks) % ranks;
      bool pIssues = distance % 2 == 1;
      int64_t issuer = pIssues ? sp.rank : sq.rank;
      int64_t other = pIssues ? sq.rank : sp.rank;
      issuers.insert(issuer);
      handoffs.insert({other, issuer});
      if (pIssues)
        swaps.push_back({pair.a.getLoc(), {dp, dq}});
      else
        swaps.push_back({pair.b.getLoc(), {dq, dp}});
      pair.a.erase();
      pair.b.erase();
    }
    // The issuer's own staging copy is ordered by a fence on the issuer;
    // the other rank's by a signal to the issuer, on a tag of its own so it
    // cannot be matched with the schedule's other signals.
    Location loc = builder.getUnknownLoc();
    for (auto [other, issuer] : handoffs)
      SignalOp::create(builder, loc, ValueRange(),
                       ArrayRef<int64_t>({other, issuer}),
                       builder.getI64IntegerAttr(tag));
    for (int64_t issuer : issuers)
      FenceOp::create(builder, loc, ValueRange(), ArrayRef<int64_t>({issuer}));
    for (auto [other, issuer] : handoffs)
      WaitOp::create(builder, loc, ValueRange(),
                     ArrayRef<int64_t>({issuer, other}),
                     builder.getI64IntegerAttr(tag));
    for (auto &[loc, slices] : swaps) {
      auto &[first, second] = slices;
      SwapOp::create(
          builder, loc, first.buffer, second.buffer, ValueRange(),
          ArrayRef<int64_t>({first.rank, first.offset, first.count, second.rank,
                             second.offset, second.count}),
          IntegerAttr());
    }
  }
};
} // namespace
