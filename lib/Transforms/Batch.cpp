//===- Batch.cpp - back-to-back ops on one engine share one signal --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/ValidatedRewrite.h"

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
      return Queue{*getConstantIntValue(transfer.getSlice(0).rank),
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
    std::map<Flag, SmallVector<bool>> survives;
    SmallVector<Operation *> dropped;
    for (auto &[queue, ops] : queues) {
      std::map<Flag, int64_t> batchSize; // data ops since the last notify
      for (size_t i = 0; i < ops.size(); ++i) {
        auto notify = dyn_cast<NotifyOp>(ops[i]);
        if (!notify)
          continue;
        Flag flag{notify.getTarget(), notify.getFlag()};
        // Data ops this notify covers beyond the previous one of its flag.
        int64_t covered = 0;
        for (size_t j = i; j-- > 0 && !isa<PollOp>(ops[j]);) {
          if (auto prev = dyn_cast<NotifyOp>(ops[j]);
              prev && Flag{prev.getTarget(), prev.getFlag()} == flag)
            break;
          covered += isa<TransferOpInterface>(ops[j]);
        }
        batchSize[flag] += covered;
        // Is the next op of interest the same flag's notify, with only data
        // ops and other notifies in between?
        bool redundant = false;
        int64_t following = 0;
        for (size_t j = i + 1; j < ops.size() && !isa<PollOp>(ops[j]); ++j) {
          if (auto next = dyn_cast<NotifyOp>(ops[j])) {
            if (Flag{next.getTarget(), next.getFlag()} == flag) {
              redundant = maxBatch == 0 || batchSize[flag] + following <=
                                               static_cast<int64_t>(maxBatch);
              break;
            }
            continue;
          }
          following += isa<TransferOpInterface>(ops[j]);
        }
        survives[flag].push_back(!redundant);
        if (redundant)
          dropped.push_back(notify);
        else
          batchSize[flag] = 0;
      }
    }
    // A poll for the k-th notify of a flag now waits for the first
    // surviving notify at or after it.
    for (Operation &op : schedule.getBody().getOps()) {
      auto poll = dyn_cast<PollOp>(&op);
      if (!poll)
        continue;
      auto it = survives.find({poll.getRank(), poll.getFlag()});
      if (it == survives.end())
        continue;
      ArrayRef<bool> alive = it->second;
      int64_t k = poll.getValue();
      if (k > static_cast<int64_t>(alive.size()))
        return poll.emitOpError("waits for more notifies than its flag gets");
      int64_t renumbered = 0;
      for (int64_t j = 0; j < static_cast<int64_t>(alive.size()); ++j) {
        renumbered += alive[j];
        if (j + 1 >= k && alive[j])
          break;
      }
      poll.setValue(renumbered);
    }
    for (Operation *op : dropped)
      op->erase();
    return success();
  }
};
} // namespace
