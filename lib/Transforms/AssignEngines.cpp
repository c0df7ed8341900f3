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

  /// Why the options are invalid, or an empty string.
  std::string checkOptions() const {
    if (policy != "affinity" && policy != "round-robin" && policy != "single")
      return "sdma-assign-engines: unknown policy '" + policy +
             "' (expected affinity, round-robin or single)";
    if (engines < 0)
      return "sdma-assign-engines: engines=" + std::to_string(engines) +
             " is negative";
    return "";
  }

  /// Rejects bad options when the pipeline is parsed, before any input.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    std::string error = checkOptions();
    return error.empty() ? success() : errorHandler(error);
  }

  void runOnOperation() override {
    if (std::string error = checkOptions(); !error.empty()) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>()) {
      if (!schedule.getRanks()) {
        schedule.emitOpError("has no fixed rank count: run sdma-unroll "
                             "before sdma-assign-engines");
        return signalPassFailure();
      }
      // DMA commands are written with their sizes before they run; a count
      // that lives in GPU memory is known only to a kernel.
      WalkResult dynamic = schedule.walk([&](CopyvOp op) {
        op.emitOpError("reads its count at run time, but DMA plans (copy "
                       "engines, SDMA packets written by the host) need "
                       "every size when they are built: run this schedule "
                       "as a load/store kernel (--sdma-to-hip)");
        return WalkResult::interrupt();
      });
      if (dynamic.wasInterrupted())
        return signalPassFailure();
      // DMA engines move bytes; they cannot add.
      WalkResult compute = schedule.walk([&](sdma::ReduceOp op) {
        op.emitOpError("combines values (a ")
            << op.getKind()
            << "), which DMA engines cannot do: run this schedule as a "
               "load/store kernel (--sdma-to-hip), where compute units do "
               "the arithmetic";
        return WalkResult::interrupt();
      });
      if (compute.wasInterrupted())
        return signalPassFailure();
      int64_t ranks = *schedule.getRanks();
      int64_t count = engines ? static_cast<int64_t>(engines) : ranks;
      DenseMap<int64_t, int64_t> nextEngine;
      WalkResult result = schedule.walk([&](TransferOpInterface op) {
        if (!cast<FieldsOpInterface>(op.getOperation()).hasStaticFields()) {
          op->emitOpError("is not flat: run sdma-unroll before "
                          "sdma-assign-engines");
          return WalkResult::interrupt();
        }
        // An engine the schedule already names is part of its meaning (ops
        // on one engine run in program order): keep it.
        if (op->hasAttr("engine"))
          return WalkResult::advance();
        // The peer: the other end of the op from its issuer (a pull's
        // source, everything else's first destination).
        int64_t rank = getIssuingRank(op);
        int64_t peer = *getConstantIntValue(
            op.getSlice(op.getIssuingSlice() == 0 ? 1 : 0).rank);
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
