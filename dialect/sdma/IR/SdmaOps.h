//===- SdmaOps.h - sdma operations ------------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMAOPS_H
#define SDMA_IR_SDMAOPS_H

#include "sdma/IR/SdmaDialect.h"
#include "sdma/IR/SdmaTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sdma {

/// A run of chunks on one rank: `buffer[offset, offset + count)` on `rank`.
/// Each field is a constant or an index value.
struct Slice {
  mlir::Value buffer;
  mlir::OpFoldResult rank;
  mlir::OpFoldResult offset;
  mlir::OpFoldResult count;
};

/// A slice whose fields are all constants.
struct StaticSlice {
  mlir::Value buffer;
  int64_t rank;
  int64_t offset;
  int64_t count;

  /// True when both slices name the same buffer on the same rank and their
  /// chunk ranges intersect.
  bool overlaps(const StaticSlice &other) const;
  bool operator==(const StaticSlice &other) const {
    return buffer == other.buffer && rank == other.rank &&
           offset == other.offset && count == other.count;
  }
};

/// The slice if all of its fields are constants.
std::optional<StaticSlice> getStaticSlice(const Slice &slice);

/// Field `i` of a mixed static/dynamic field list.
mlir::OpFoldResult getFieldAt(mlir::Operation *op,
                              llvm::ArrayRef<int64_t> staticFields,
                              mlir::OperandRange dynamicFields, unsigned i);

} // namespace sdma

#include "sdma/IR/SdmaInterfaces.h.inc"

namespace sdma {
/// Slice `i` of a transfer if its fields are constants. The same as
/// getStaticSlice(op.getSlice(i)), without building an attribute per field
/// (the verifiers and passes ask this of every op, many times).
std::optional<StaticSlice> getStaticSlice(TransferOpInterface op, unsigned i);
} // namespace sdma

#define GET_OP_CLASSES
#include "sdma/IR/SdmaOps.h.inc"

#endif // SDMA_IR_SDMAOPS_H
