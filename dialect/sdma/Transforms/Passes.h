//===- Passes.h - sdma transformation passes --------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TRANSFORMS_PASSES_H
#define SDMA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "sdma/IR/SdmaOps.h"

namespace sdma {

#define GEN_PASS_DECL
#include "sdma/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sdma/Transforms/Passes.h.inc"

} // namespace sdma

#endif // SDMA_TRANSFORMS_PASSES_H
