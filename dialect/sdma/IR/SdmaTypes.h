//===- SdmaTypes.h - sdma types ---------------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMATYPES_H
#define SDMA_IR_SDMATYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "sdma/IR/SdmaTypes.h.inc"

#endif // SDMA_IR_SDMATYPES_H
