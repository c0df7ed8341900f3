//===- Passes.h - sdma conversions ------------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_CONVERSION_PASSES_H
#define SDMA_CONVERSION_PASSES_H

#include "sdmapkt/IR/SdmaPkt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sdma {

#define GEN_PASS_DECL
#include "sdma/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sdma/Conversion/Passes.h.inc"

} // namespace sdma

#endif // SDMA_CONVERSION_PASSES_H
