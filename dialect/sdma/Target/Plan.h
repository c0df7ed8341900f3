//===- Plan.h - engine-level schedules as the runtime's plan ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_PLAN_H
#define SDMA_TARGET_PLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace sdma {

/// The plan format version written here and accepted by the runtime
/// (runtime/include/sdma/runtime/Plan.h checks the same number).
constexpr int kPlanVersion = 1;

/// Writes the one engine-level schedule in `module` (after
/// sdma-insert-sync) as a plan: per-(rank, engine) queues of copy, bcast,
/// swap, notify and poll commands. Diagnoses anything else.
mlir::LogicalResult translateToPlan(mlir::ModuleOp module,
                                    llvm::raw_ostream &os);

/// Registers `--sdma-to-plan`.
void registerToPlanTranslation();

} // namespace sdma

#endif // SDMA_TARGET_PLAN_H
