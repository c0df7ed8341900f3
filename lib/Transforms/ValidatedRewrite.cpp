//===- ValidatedRewrite.cpp - rewrites that re-prove their output ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Transforms/ValidatedRewrite.h"
#include "sdma/Analysis/ScheduleVerifier.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace sdma;

FailureOr<bool>
sdma::rewriteValidated(ScheduleOp &schedule, StringRef passName,
                       function_ref<LogicalResult(ScheduleOp)> rewrite) {
  // A detached copy of the original, in case the rewrite must be undone.
  auto original = cast<ScheduleOp>(schedule->clone());
  llvm::scope_exit dropOriginal([&] {
    if (original)
      original->destroy();
  });
  if (failed(rewrite(schedule)))
    return failure();
  if (OperationEquivalence::isEquivalentTo(
          original, schedule, OperationEquivalence::IgnoreLocations))
    return true; // nothing changed: nothing to prove
  std::string reason;
  if (scheduleVerifies(schedule, &reason) || !scheduleVerifies(original))
    return true; // proved, or there was no proof to keep
  // Undo: the original takes the rewritten schedule's place.
  schedule->getBlock()->getOperations().insert(Block::iterator(schedule),
                                               original.getOperation());
  schedule->erase();
  schedule = original;
  original = nullptr;
  StringRef firstLine = StringRef(reason).split('\n').first;
  schedule.emitWarning() << passName << " left @" << schedule.getSymName()
                         << " unchanged: its rewrite would not verify ("
                         << firstLine << ")";
  return false;
}
