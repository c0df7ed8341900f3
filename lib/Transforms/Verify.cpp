//===- Verify.cpp - the sdma-verify pass ----------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The proof itself is ScheduleVerifier (lib/Analysis); the pass reports what
// it proved as a remark, and warns when a schedule declares no collective
// (its outputs are then unchecked).
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleVerifier.h"
#include "sdma/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace sdma {
#define GEN_PASS_DEF_SDMAVERIFY
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {
struct SdmaVerifyPass : public sdma::impl::SdmaVerifyBase<SdmaVerifyPass> {
  using SdmaVerifyBase::SdmaVerifyBase;
  void runOnOperation() override {
    bool failedAny = false;
    VerifyOptions options;
    options.memoryBudget = memoryBudget;
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>()) {
      FailureOr<VerifyReport> proved = verifySchedule(schedule, options);
      failedAny |= failed(proved);
      if (failed(proved) || !report)
        continue;
      if (!proved->collective)
        schedule.emitWarning("declares no collective (`implements`): its "
                             "outputs are not checked");
      schedule.emitRemark(proved->summary(schedule));
    }
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
