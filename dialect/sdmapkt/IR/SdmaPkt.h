//===- SdmaPkt.h - AMD SDMA packet dialect ----------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMAPKT_IR_SDMAPKT_H
#define SDMAPKT_IR_SDMAPKT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "sdmapkt/IR/Targets.h"

#include "sdmapkt/IR/SdmaPktDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "sdmapkt/IR/SdmaPktAttrs.h.inc"

#define GET_OP_CLASSES
#include "sdmapkt/IR/SdmaPktOps.h.inc"

namespace sdma::pkt {

/// POLL_REGMEM's retry count that polls forever. The limits that depend on
/// the engine generation are in Targets.h.
constexpr int64_t kRetryForever = 0xfff;

/// POLL_REGMEM compare functions by name, with their hardware codes.
std::optional<unsigned> pollFunctionCode(llvm::StringRef name);

} // namespace sdma::pkt

#endif // SDMAPKT_IR_SDMAPKT_H
