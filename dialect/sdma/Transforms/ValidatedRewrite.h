//===- ValidatedRewrite.h - rewrites that re-prove their output -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Translation validation for the optimising passes: a rewrite of a schedule
// that verified must verify again (sdma-verify's proof: races, deadlocks,
// postcondition); where it does not, the schedule is left as it was, with a
// warning naming the pass and the first reason. A pass therefore never turns
// a proved schedule into one the runtime refuses or runs wrongly.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TRANSFORMS_VALIDATEDREWRITE_H
#define SDMA_TRANSFORMS_VALIDATEDREWRITE_H

#include "sdma/IR/SdmaOps.h"

namespace sdma {

/// Runs `rewrite` on `schedule`; if the result does not verify while the
/// original did, restores the original and warns. Returns the schedule
/// that is in place afterwards, and whether the rewrite was kept.
/// `rewrite` may fail (an error it reported): then the result is failure.
mlir::FailureOr<bool>
rewriteValidated(ScheduleOp &schedule, llvm::StringRef passName,
                 llvm::function_ref<mlir::LogicalResult(ScheduleOp)> rewrite);

} // namespace sdma

#endif // SDMA_TRANSFORMS_VALIDATEDREWRITE_H
