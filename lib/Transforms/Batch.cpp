//===- Batch.cpp - back-to-back ops on one engine share one signal --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/ValidatedRewrite.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>

namespace sdma {
#define GEN_PASS_DEF_SDMABATCH
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {

using Queue = std::pair<int64_t, int64_t>; // (rank, engine)
using Flag = std::pair<int64_t, int64_t>;  // (target rank, flag)

static std::optional<Queue> getQueue(Operation *op) {
  if (auto notify = dyn_cast<NotifyOp>(op))
    return Queue{notify.getRank(), notify.getEngine()};
  if (auto poll = dyn_cast<PollOp>(op))
    return Queue{poll.getRank(), poll.getEngine()};
  if (auto transfer = dyn_cast<TransferOpInterface>(op))
    if (auto engine = op->getAttrOfType<IntegerAttr>("engine"))
      return Queue{*getConstantIntValue(transfer.getIssuingRankField()),
                   engine.getInt()};
  return std::nullopt;
}

struct SdmaBatchPass : public sdma::impl::SdmaBatchBase<SdmaBatchPass> {
  using SdmaBatchBase::SdmaBatchBase;

  void runOnOperation() override {
    for (ScheduleOp schedule :
         llvm::to_vector(getOperation().getOps<ScheduleOp>()))
      if (failed(rewriteValidated(schedule, "sdma-batch",
                                  [&](ScheduleOp s) { return batch(s); })))
        return signalPassFailure();
  }

  /// One queue's ops in order: decides for each notify whether it
  /// survives (appended to `survives` of its flag; the dropped ones to
  /// `dropped`). A notify is dropped when the next op of interest after it
  /// is its own flag's next notify, with only data ops and other notifies in
  /// between (no poll), and the batch stays within max-batch. Two walks,
  /// linear in the queue: the first (backwards) finds each notify's next
  /// one of its flag before a poll, the second counts batches.
  void batchQueue(ArrayRef<Operation *> ops,
                  llvm::DenseMap<Flag, SmallVector<bool>> &survives,
                  SmallVector<Operation *> &dropped) {
    // dataBefore[i]: data ops before ops[i].
    SmallVector<int64_t> dataBefore(ops.size() + 1, 0);
    for (size_t i = 0; i < ops.size(); ++i)
      dataBefore[i + 1] = dataBefore[i] + isa<TransferOpInterface>(ops[i]);
    auto flagOf = [](NotifyOp notify) {
      return Flag{notify.getTarget(), notify.getFlag()};
    };
    // following[i] for a notify: data ops up to its flag's next notify, or
    // -1 if a poll (or the end) comes first.
    SmallVector<int64_t> following(ops.size(), -1);
    llvm::DenseMap<Flag, std::pair<int64_t, size_t>> next; // (poll epoch, i)
    int64_t epoch = 0;
    for (size_t i = ops.size(); i-- > 0;) {
      if (isa<PollOp>(ops[i])) {
        ++epoch;
        continue;
      }
      auto notify = dyn_cast<NotifyOp>(ops[i]);
      if (!notify)
        continue;
      auto [it, inserted] = next.try_emplace(flagOf(notify), epoch, i);
      if (!inserted) {
        if (it->second.first == epoch)
          following[i] = dataBefore[it->second.second] - dataBefore[i];
        it->second = {epoch, i};
      }
    }
    // Forward: data ops each notify covers beyond the previous one of its
    // flag (or the last poll), and the batch so far.
    llvm::DenseMap<Flag, int64_t> lastNotify, batchSize;
    int64_t lastPoll = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (isa<PollOp>(ops[i]))
        lastPoll = dataBefore[i];
      auto notify = dyn_cast<NotifyOp>(ops[i]);
      if (!notify)
        continue;
      Flag flag = flagOf(notify);
      auto last = lastNotify.find(flag);
      int64_t from = std::max(
          lastPoll, last == lastNotify.end() ? int64_t(0) : last->second);
      int64_t &batch = batchSize[flag];
      batch += dataBefore[i] - from;
      lastNotify[flag] = dataBefore[i];
      bool redundant = following[i] >= 0 &&
                       (maxBatch == 0 ||
                        batch + following[i] <= static_cast<int64_t>(maxBatch));
      survives[flag].push_back(!redundant);
      if (redundant)
        dropped.push_back(notify);
      else
        batch = 0;
    }
  }

  LogicalResult batch(ScheduleOp schedule) {
    // Each queue's ops in order.
    std::map<Queue, SmallVector<Operation *>> queues;
    for (Operation &op : schedule.getBody().getOps()) {
      std::optional<Queue> queue = getQueue(&op);
      if (!queue)
        return op.emitOpError("is not engine-level: run sdma-insert-sync "
                              "before sdma-batch");
      queues[*queue].push_back(&op);
    }
    // Per flag, in order: whether each notify survives.
    llvm::DenseMap<Flag, SmallVector<bool>> survives;
    SmallVector<Operation *> dropped;
    for (auto &[queue, ops] : queues)
      batchQueue(ops, survives, dropped);
    // A poll for the k-th notify of a flag now waits for the first
    // surviving notify at or after it: renumbered[k - 1] per flag, the
    // survivors up to and including that one.
    llvm::DenseMap<Flag, SmallVector<int64_t>> renumbered;
    for (auto &[flag, alive] : survives) {
      SmallVector<int64_t> &to = renumbered[flag];
      to.resize(alive.size());
      int64_t count = 0;
      for (size_t j = 0; j < alive.size(); ++j)
        to[j] = count += alive[j];
      // The last notify of a flag always survives (nothing follows it).
      for (size_t j = alive.size() - 1; j-- > 0;)
        if (!alive[j])
          to[j] = to[j + 1];
    }
    for (Operation &op : schedule.getBody().getOps()) {
      auto poll = dyn_cast<PollOp>(&op);
      if (!poll)
        continue;
      auto it = renumbered.find({poll.getRank(), poll.getFlag()});
      if (it == renumbered.end())
        continue;
      int64_t k = poll.getValue();
      if (k > static_cast<int64_t>(it->second.size()))
        return poll.emitOpError("waits for more notifies than its flag gets");
      poll.setValue(it->second[std::max<int64_t>(k, 1) - 1]);
    }
    for (Operation *op : dropped)
      op->erase();
    return success();
  }
};
} // namespace
