//===- JSON.h - flat schedules as JSON --------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_JSON_H
#define SDMA_TARGET_JSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace sdma {

/// The version of the schedule JSON format written by translateToJSON.
constexpr int kScheduleJSONVersion = 1;

/// Writes every flat schedule in `module` as JSON. Fails, with a diagnostic
/// at the offending op, if a schedule still has loops or dynamic fields.
mlir::LogicalResult translateToJSON(mlir::ModuleOp module,
                                    llvm::raw_ostream &os);

/// Registers `--sdma-to-json` with mlir-translate style tools.
void registerToJSONTranslation();

} // namespace sdma

#endif // SDMA_TARGET_JSON_H
