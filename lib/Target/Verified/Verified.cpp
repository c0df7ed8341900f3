//===- Verified.cpp - translate only what the verifier proves -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Target/Verified.h"

#include "sdma/Analysis/ScheduleVerifier.h"
#include "sdma/IR/SdmaOps.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;

static llvm::cl::opt<bool> translateUnverified(
    "sdma-translate-unverified",
    llvm::cl::desc("--sdma-to-hip, --sdma-to-plan: translate without first "
                   "proving the schedule race- and deadlock-free (to inspect "
                   "what a broken schedule would become; never to run it)"),
    llvm::cl::init(false));

LogicalResult sdma::verifyBeforeTranslation(ModuleOp module) {
  if (translateUnverified)
    return success();
  bool failedAny = false;
  for (ScheduleOp schedule : module.getOps<ScheduleOp>())
    failedAny |= failed(verifySchedule(schedule));
  if (failedAny)
    return module.emitError(
        "not translated: the schedule does not verify (the errors above); "
        "--sdma-translate-unverified translates it anyway");
  return success();
}
