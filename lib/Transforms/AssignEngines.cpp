//===- AssignEngines.cpp - give every data op a DMA queue -----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace sdma {
#define GEN_PASS_DEF_SDMAASSIGNENGINES
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {
struct SdmaAssignEnginesPass
    : public sdma::impl::SdmaAssignEnginesBase<SdmaAssignEnginesPass> {
  using SdmaAssignEnginesBase::SdmaAssignEnginesBase;

  void runOnOperation() override {
    if (policy != "affinity" && policy != "round-robin" && policy != "single") {
      getOperation().emitError("sdma-assign-engines: unknown policy '")
          << policy << "' (expected affinity, round-robin or single)";
      return signalPassFailure();
    }
    if (engines < 0) {
      getOperation().emitError("sdma-assign-engines: engines=")
          << engines << " is negative";
      return signalPassFailure();
    }
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>()) {
      if (!schedule.getRanks()) {
        schedule.emitOpError("has no fixed rank count: run sdma-unroll "
                             "before sdma-assign-engines");
        return signalPassFailure();
      }
      int64_t ranks = *schedule.getRanks();
      int64_t count = engines ? static_cast<int64_t>(engines) : ranks;
      DenseMap<int64_t, int64_t> nextEngine;
      WalkResult result = schedule.walk([&](TransferOpInterface op) {
        if (!cast<FieldsOpInterface>(op.getOperation()).hasStaticFields()) {
          op->emitOpError("is not flat: run sdma-unroll before "
                          "sdma-assign-engines");
          return WalkResult::interrupt();
        }
        int64_t rank = getIssuingRank(op);
        int64_t peer = *getConstantIntValue(op.getSlice(1).rank);
        int64_t engine = 0;
        if (policy == "affinity")
          engine = (((peer - rank - 1) % ranks + ranks) % ranks) % count;
        else if (policy == "round-robin")
          engine = nextEngine[rank]++ % count;
        op->setAttr(
            "engine",
            IntegerAttr::get(IntegerType::get(op->getContext(), 64), engine));
        return WalkResult::advance();
      });
      if (result.wasInterrupted())
        return signalPassFailure();
    }
  }
};
} // namespace
