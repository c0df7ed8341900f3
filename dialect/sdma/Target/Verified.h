//===- Verified.h - translate only what the verifier proves -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The translations that emit something a machine runs (--sdma-to-hip,
// --sdma-to-plan) prove every schedule of their input first -- race-free,
// deadlock-free, its collective -- and refuse one that does not prove, with
// the verifier's diagnostics: a racy schedule never becomes a kernel or a
// plan by accident. --sdma-translate-unverified skips the proof (to look at
// what a broken schedule would become).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_VERIFIED_H
#define SDMA_TARGET_VERIFIED_H

#include "mlir/IR/BuiltinOps.h"

namespace sdma {

/// Proves every schedule in `module` unless --sdma-translate-unverified;
/// failure (with the verifier's errors) if one does not prove.
mlir::LogicalResult verifyBeforeTranslation(mlir::ModuleOp module);

} // namespace sdma

#endif // SDMA_TARGET_VERIFIED_H
