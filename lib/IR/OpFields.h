//===- OpFields.h - field lists and slices of sdma ops ----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The syntax and the checks shared by the ops with index fields; private to
// the SdmaIR library. Index-valued fields (ranks, offsets, counts) are stored
// as in memref.subview: a static list with ShapedType::kDynamic holes filled
// by `fields` operands, in order.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_IR_OPFIELDS_H
#define SDMA_LIB_IR_OPFIELDS_H

#include "sdma/IR/SdmaOps.h"

namespace sdma::detail {

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

/// Accumulates a mixed static/dynamic field list while parsing.
struct FieldListParser {
  llvm::SmallVector<int64_t> statics;
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand> dynamics;

  /// field ::= integer | ssa-value
  mlir::ParseResult parseField(mlir::OpAsmParser &parser);

  /// Resolves the dynamic fields into operands of `state` and stores the
  /// static list as OpTy's `static_fields` property.
  template <typename OpTy>
  mlir::ParseResult finish(mlir::OpAsmParser &parser,
                           mlir::OperationState &state) {
    if (resolve(parser, state))
      return mlir::failure();
    state.getOrAddProperties<typename OpTy::Properties>().setStaticFields(
        statics);
    return mlir::success();
  }

  /// Resolves the dynamic fields into operands of `state`.
  mlir::ParseResult resolve(mlir::OpAsmParser &parser,
                            mlir::OperationState &state);
};

/// Prints a field as an integer or as the value that holds it.
void printField(mlir::OpAsmPrinter &printer, mlir::OpFoldResult field);

/// Prints the attribute dictionary of `op` but `elided`, as
/// printOptionalAttrDict(op->getAttrs(), elided) would, without
/// `getAttrs()`: for an op with properties that uniques a DictionaryAttr of
/// its inherent and discardable attributes on every call, one per printed
/// op, which at a million ops makes printing the largest stage of a
/// pipeline and grows the context's tables by as much again.
void printAttributes(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                     llvm::ArrayRef<llvm::StringRef> elided,
                     bool withKeyword = false);

/// transfer ::= slice (separator slice)* attr-dict, one separator (`->`, `,`,
/// `<->` or `<-`) between each two slices; resolves the buffers into `state`
/// and leaves the fields in `fields`.
mlir::ParseResult
parseTransferSlices(mlir::OpAsmParser &parser, mlir::OperationState &state,
                    llvm::ArrayRef<llvm::StringRef> separators,
                    FieldListParser &fields);
/// A transfer op of type OpTy, as above, fields included.
template <typename OpTy>
mlir::ParseResult parseTransfer(mlir::OpAsmParser &parser,
                                mlir::OperationState &state,
                                llvm::ArrayRef<llvm::StringRef> separators) {
  FieldListParser fields;
  if (parseTransferSlices(parser, state, separators, fields))
    return mlir::failure();
  return fields.finish<OpTy>(parser, state);
}
/// Prints the slices and the attributes but `elided`.
void printTransfer(mlir::OpAsmPrinter &printer, TransferOpInterface op,
                   llvm::ArrayRef<llvm::StringRef> separators,
                   llvm::ArrayRef<llvm::StringRef> elided = {});

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// Checks that the field list is well formed and that `op` sits inside a
/// schedule; returns that schedule.
mlir::FailureOr<ScheduleOp> verifyFieldsAndParent(mlir::Operation *op,
                                                  size_t expectedFields);

/// Checks that a constant rank lies in [0, ranks) (ranks: the schedule's
/// rank count, or kMaxRanks when open). `what` names the field.
mlir::LogicalResult verifyRank(mlir::Operation *op, mlir::OpFoldResult rank,
                               std::optional<int64_t> ranks,
                               llvm::StringRef what);
/// The same for a rank read as a constant (nullopt: not a constant).
mlir::LogicalResult verifyRank(mlir::Operation *op, std::optional<int64_t> rank,
                               std::optional<int64_t> ranks,
                               llvm::StringRef what);

/// Verifies every slice of a transfer (`names` names them, in order) and
/// that all slices have the same count.
mlir::LogicalResult verifyTransfer(TransferOpInterface op,
                                   llvm::ArrayRef<llvm::StringRef> names);

/// Reports an overlap between slices `a` and `b` of a transfer if both are
/// static.
mlir::LogicalResult verifyNoOverlap(TransferOpInterface op, unsigned a,
                                    unsigned b, const llvm::Twine &message);

} // namespace sdma::detail

#endif // SDMA_LIB_IR_OPFIELDS_H
