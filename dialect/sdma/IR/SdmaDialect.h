//===- SdmaDialect.h - sdma dialect -----------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMADIALECT_H
#define SDMA_IR_SDMADIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "sdma/IR/SdmaDialect.h.inc"

#endif // SDMA_IR_SDMADIALECT_H
