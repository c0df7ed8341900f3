//===- InitAllDialects.h - the dialects sdma's inputs use -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The one list of dialects a context needs to parse anything sdma reads or
// writes: schedules (sdma with affine, arith, index and scf in their
// bodies) and packet programs (sdmapkt). Every tool, translation, the compile
// library and the tests fill their registry here, as MLIR's own
// InitAllDialects.h does; a user links SdmaIR, SdmaPktIR and the four
// upstream dialect libraries.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_INITALLDIALECTS_H
#define SDMA_INITALLDIALECTS_H

#include "sdma/IR/SdmaDialect.h"
#include "sdmapkt/IR/SdmaPkt.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

namespace sdma {

/// Adds sdma's dialects and the upstream ones schedules are written with.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<SdmaDialect, pkt::SdmaPktDialect, mlir::affine::AffineDialect,
                  mlir::arith::ArithDialect, mlir::index::IndexDialect,
                  mlir::scf::SCFDialect>();
}

} // namespace sdma

#endif // SDMA_INITALLDIALECTS_H
