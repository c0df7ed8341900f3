//===- SdmaOps.cpp - sdma operations --------------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The op classes, slices, sdma.rank_add and sdma.root. The other ops' syntax
// and verifiers live by concern: ScheduleOp.cpp (the schedule), TransferOps.cpp
// (copy, bcast, swap), SyncOps.cpp (fence, signal, wait, barrier, notify,
// poll), and OpFields.cpp (the field lists and slices they share).
//
//===----------------------------------------------------------------------===//

#include "OpFields.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace sdma;
using namespace sdma::detail;

#include "sdma/IR/SdmaInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Slices and fields
//===----------------------------------------------------------------------===//

bool StaticSlice::overlaps(const StaticSlice &other) const {
  return buffer == other.buffer && rank == other.rank &&
         offset < other.offset + other.count && other.offset < offset + count;
}

std::optional<StaticSlice> sdma::getStaticSlice(const Slice &slice) {
  std::optional<int64_t> rank = getConstantIntValue(slice.rank);
  std::optional<int64_t> offset = getConstantIntValue(slice.offset);
  std::optional<int64_t> count = getConstantIntValue(slice.count);
  if (!rank || !offset || !count)
    return std::nullopt;
  return StaticSlice{slice.buffer, *rank, *offset, *count};
}

std::optional<StaticSlice> sdma::getStaticSlice(TransferOpInterface op,
                                                unsigned i) {
  auto fields = cast<FieldsOpInterface>(op.getOperation());
  if (3 * i + 2 >= fields.getStaticFields().size())
    return std::nullopt;
  std::optional<int64_t> rank = fields.getConstantField(3 * i);
  std::optional<int64_t> offset = fields.getConstantField(3 * i + 1);
  std::optional<int64_t> count = fields.getConstantField(3 * i + 2);
  if (!rank || !offset || !count)
    return std::nullopt;
  return StaticSlice{op->getOperand(i), *rank, *offset, *count};
}

OpFoldResult sdma::getFieldAt(Operation *op, ArrayRef<int64_t> staticFields,
                              OperandRange dynamicFields, unsigned i) {
  assert(i < staticFields.size() && "field index out of range");
  if (!ShapedType::isDynamic(staticFields[i]))
    return IntegerAttr::get(IndexType::get(op->getContext()), staticFields[i]);
  unsigned dynamicIndex =
      llvm::count_if(staticFields.take_front(i), ShapedType::isDynamic);
  return dynamicFields[dynamicIndex];
}

//===----------------------------------------------------------------------===//
// RankAddOp
//===----------------------------------------------------------------------===//

ParseResult RankAddOp::parse(OpAsmParser &parser, OperationState &result) {
  FieldListParser fields;
  if (fields.parseField(parser) || parser.parseComma() ||
      fields.parseField(parser) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addTypes(parser.getBuilder().getIndexType());
  return fields.finish<RankAddOp>(parser, result);
}

void RankAddOp::print(OpAsmPrinter &printer) {
  printer << " ";
  printField(printer, getField(0));
  printer << ", ";
  printField(printer, getField(1));
  sdma::detail::printAttributes(printer, *this, {});
}

LogicalResult RankAddOp::verify() {
  FailureOr<ScheduleOp> schedule = verifyFieldsAndParent(*this, 2);
  if (failed(schedule))
    return failure();
  return verifyRank(*this, getField(0), schedule->getRanks(), "rank");
}

/// (rank + delta) mod ranks, in [0, ranks).
static int64_t rankAdd(int64_t rank, int64_t delta, int64_t ranks) {
  int64_t sum = (rank % ranks) + (delta % ranks); // no overflow: |each| < ranks
  return ((sum % ranks) + ranks) % ranks;
}

OpFoldResult RankAddOp::fold(FoldAdaptor adaptor) {
  auto schedule = (*this)->getParentOfType<ScheduleOp>();
  if (!schedule || !schedule.getRanks())
    return {};
  int64_t ranks = *schedule.getRanks();
  std::optional<int64_t> rank = getConstantField(0);
  std::optional<int64_t> delta = getConstantField(1);
  // Dynamic fields are operands: look at their folded constants too.
  unsigned dynamicIndex = 0;
  for (unsigned i = 0; i < 2; ++i) {
    if (!ShapedType::isDynamic(getStaticFields()[i]))
      continue;
    auto attr =
        dyn_cast_if_present<IntegerAttr>(adaptor.getFields()[dynamicIndex++]);
    if (attr)
      (i == 0 ? rank : delta) = attr.getInt();
  }
  if (delta && *delta % ranks == 0 && !rank)
    return getField(0);
  if (!rank || !delta)
    return {};
  return IntegerAttr::get(IndexType::get(getContext()),
                          rankAdd(*rank, *delta, ranks));
}

//===----------------------------------------------------------------------===//
// RootOp
//===----------------------------------------------------------------------===//

void RootOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "root");
}

LogicalResult RootOp::verify() {
  auto schedule = (*this)->getParentOfType<ScheduleOp>();
  if (!schedule)
    return emitOpError("expects to be inside an 'sdma.schedule'");
  if (!schedule.getRoot())
    return emitOpError("needs a schedule that declares a root (`implements "
                       "KIND(...) root N`), but '@")
           << schedule.getSymName() << "' declares none";
  return success();
}

//===----------------------------------------------------------------------===//
// ExpertsOp
//===----------------------------------------------------------------------===//

void ExpertsOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "experts");
}

LogicalResult ExpertsOp::verify() {
  if (!(*this)->getParentOfType<ScheduleOp>())
    return emitOpError("expects to be inside an 'sdma.schedule'");
  return success();
}

//===----------------------------------------------------------------------===//
// LocalRanksOp
//===----------------------------------------------------------------------===//

void LocalRanksOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "local_ranks");
}

LogicalResult LocalRanksOp::verify() {
  if (!(*this)->getParentOfType<ScheduleOp>())
    return emitOpError("expects to be inside an 'sdma.schedule'");
  return success();
}

#define GET_OP_CLASSES
#include "sdma/IR/SdmaOps.cpp.inc"
