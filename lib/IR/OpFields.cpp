//===- OpFields.cpp - field lists and slices of sdma ops ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The syntax and the checks shared by the ops with index fields.
//
//===----------------------------------------------------------------------===//

#include "OpFields.h"
#include "sdma/runtime/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace sdma;
using namespace sdma::detail;

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

ParseResult sdma::detail::FieldListParser::parseField(OpAsmParser &parser) {
  int64_t value = 0; // set by a successful parse; GCC cannot tell
  SMLoc loc = parser.getCurrentLocation();
  OptionalParseResult intResult = parser.parseOptionalInteger(value);
  if (intResult.has_value()) {
    if (failed(*intResult))
      return failure();
    if (ShapedType::isDynamic(value))
      return parser.emitError(loc, "field value ")
             << value << " is out of range";
    statics.push_back(value);
    return success();
  }
  OpAsmParser::UnresolvedOperand operand;
  if (parser.parseOperand(operand))
    return failure();
  statics.push_back(ShapedType::kDynamic);
  dynamics.push_back(operand);
  return success();
}

ParseResult sdma::detail::FieldListParser::resolve(OpAsmParser &parser,
                                                   OperationState &state) {
  return parser.resolveOperands(dynamics, parser.getBuilder().getIndexType(),
                                state.operands);
}

void sdma::detail::printField(OpAsmPrinter &printer, OpFoldResult field) {
  if (auto value = dyn_cast<Value>(field))
    printer.printOperand(value);
  else
    printer << *getConstantIntValue(field);
}

/// slice ::= ssa-value `[` field `,` field `]` `on` field
static ParseResult
parseSlice(OpAsmParser &parser, FieldListParser &fields,
           SmallVectorImpl<OpAsmParser::UnresolvedOperand> &buffers) {
  OpAsmParser::UnresolvedOperand buffer;
  if (parser.parseOperand(buffer) || parser.parseLSquare() ||
      fields.parseField(parser) || parser.parseComma() ||
      fields.parseField(parser) || parser.parseRSquare() ||
      parser.parseKeyword("on") || fields.parseField(parser))
    return failure();
  // Fields are stored rank, offset, count: move the rank to the front.
  std::rotate(fields.statics.end() - 3, fields.statics.end() - 1,
              fields.statics.end());
  if (ShapedType::isDynamic(fields.statics[fields.statics.size() - 3]))
    std::rotate(fields.dynamics.end() -
                    llvm::count_if(ArrayRef(fields.statics).take_back(3),
                                   ShapedType::isDynamic),
                fields.dynamics.end() - 1, fields.dynamics.end());
  buffers.push_back(buffer);
  return success();
}

static void printSlice(OpAsmPrinter &printer, const Slice &slice) {
  printer.printOperand(slice.buffer);
  printer << "[";
  printField(printer, slice.offset);
  printer << ", ";
  printField(printer, slice.count);
  printer << "] on ";
  printField(printer, slice.rank);
}

ParseResult sdma::detail::parseTransferSlices(OpAsmParser &parser,
                                              OperationState &state,
                                              ArrayRef<StringRef> separators,
                                              FieldListParser &fields) {
  SmallVector<OpAsmParser::UnresolvedOperand> buffers;
  if (parseSlice(parser, fields, buffers))
    return failure();
  auto parseSeparator = [&](StringRef separator) -> ParseResult {
    if (separator == "->")
      return parser.parseArrow();
    if (separator == ",")
      return parser.parseComma();
    if (separator == "<-")
      return failure(parser.parseLess() || parser.parseMinus());
    assert(separator == "<->" && "unknown slice separator");
    if (parser.parseLess())
      return failure();
    return parser.parseArrow();
  };
  for (StringRef separator : separators)
    if (parseSeparator(separator) || parseSlice(parser, fields, buffers))
      return failure();
  if (parser.parseOptionalAttrDict(state.attributes))
    return failure();
  Type bufferType = BufferType::get(parser.getContext());
  return parser.resolveOperands(buffers, bufferType, state.operands);
}

void sdma::detail::printTransfer(OpAsmPrinter &printer, TransferOpInterface op,
                                 ArrayRef<StringRef> separators,
                                 ArrayRef<StringRef> elided) {
  printer << " ";
  printSlice(printer, op.getSlice(0));
  for (auto [i, separator] : llvm::enumerate(separators)) {
    printer << (separator == "," ? "" : " ") << separator << " ";
    printSlice(printer, op.getSlice(i + 1));
  }
  printAttributes(printer, op, elided);
}

void sdma::detail::printAttributes(OpAsmPrinter &printer, Operation *op,
                                   ArrayRef<StringRef> elided,
                                   bool withKeyword) {
  NamedAttrList list;
  op->getName().populateInherentAttrs(op, list);
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : list)
    if (!llvm::is_contained(elided, attr.getName().getValue()))
      attrs.push_back(attr);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (!llvm::is_contained(elided, attr.getName().getValue()))
      attrs.push_back(attr);
  if (attrs.empty())
    return;
  // The order a DictionaryAttr has, so the text is as before.
  llvm::sort(attrs);
  if (withKeyword)
    printer.printOptionalAttrDictWithKeyword(attrs);
  else
    printer.printOptionalAttrDict(attrs);
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

FailureOr<ScheduleOp>
sdma::detail::verifyFieldsAndParent(Operation *op, size_t expectedFields) {
  auto fieldsOp = cast<FieldsOpInterface>(op);
  ArrayRef<int64_t> statics = fieldsOp.getStaticFields();
  if (statics.size() != expectedFields)
    return op->emitOpError("expects ")
           << expectedFields << " fields, got " << statics.size();
  size_t numDynamic = llvm::count_if(statics, ShapedType::isDynamic);
  if (numDynamic != fieldsOp.getFields().size())
    return op->emitOpError("has ")
           << numDynamic << " dynamic fields but "
           << fieldsOp.getFields().size() << " field operands";
  auto schedule = op->getParentOfType<ScheduleOp>();
  if (!schedule)
    return op->emitOpError("must be nested in an 'sdma.schedule'");
  return schedule;
}

LogicalResult sdma::detail::verifyRank(Operation *op, OpFoldResult rank,
                                       std::optional<int64_t> ranks,
                                       StringRef what) {
  return verifyRank(op, getConstantIntValue(rank), ranks, what);
}

LogicalResult sdma::detail::verifyRank(Operation *op,
                                       std::optional<int64_t> value,
                                       std::optional<int64_t> ranks,
                                       StringRef what) {
  if (!value)
    return success();
  int64_t limit = ranks.value_or(kMaxRanks);
  if (*value < 0 || *value >= limit)
    return op->emitOpError()
           << what << " " << *value << " is out of range [0, " << limit << ")";
  return success();
}

/// A slice's buffer and its constant fields (nullopt where dynamic), read
/// without building an attribute per field.
struct ConstantSlice {
  Value buffer;
  std::optional<int64_t> rank, offset, count;
};

static ConstantSlice getConstantSlice(TransferOpInterface op, unsigned i) {
  auto fields = cast<FieldsOpInterface>(op.getOperation());
  return {op->getOperand(i), fields.getConstantField(3 * i),
          fields.getConstantField(3 * i + 1),
          fields.getConstantField(3 * i + 2)};
}

static LogicalResult verifySlice(Operation *op, ScheduleOp schedule,
                                 const ConstantSlice &slice, StringRef what) {
  std::optional<int64_t> ranks = schedule.getRanks();
  if (failed(verifyRank(op, slice.rank, ranks, (what + " rank").str())))
    return failure();
  std::optional<int64_t> offset = slice.offset, count = slice.count;
  if (offset && *offset < 0)
    return op->emitOpError()
           << what << " offset " << *offset << " in buffer '"
           << schedule.getBufferName(slice.buffer) << "' is negative";
  if (count && *count <= 0)
    return op->emitOpError() << what << " slice of buffer '"
                             << schedule.getBufferName(slice.buffer)
                             << "' is empty (count " << *count << ")";
  std::optional<int64_t> chunks = schedule.getBufferChunks(slice.buffer, ranks);
  if (offset && count && chunks) {
    int64_t end;
    if (llvm::AddOverflow(*offset, *count, end) || end > *chunks)
      return op->emitOpError()
             << what << " slice [" << *offset << ", " << *offset << " + "
             << *count << ") is out of bounds of buffer '"
             << schedule.getBufferName(slice.buffer) << "', which has "
             << *chunks << " chunks";
  }
  return success();
}

LogicalResult sdma::detail::verifyTransfer(TransferOpInterface op,
                                           ArrayRef<StringRef> names) {
  FailureOr<ScheduleOp> schedule = verifyFieldsAndParent(op, 3 * names.size());
  if (failed(schedule))
    return failure();
  SmallVector<ConstantSlice, 3> slices;
  for (unsigned i = 0, e = names.size(); i < e; ++i)
    slices.push_back(getConstantSlice(op, i));
  for (auto [i, name] : llvm::enumerate(names))
    if (failed(verifySlice(op, *schedule, slices[i], name)))
      return failure();
  // Count tables hold 64-bit integers, not chunks: they move only into
  // count tables.
  bool counts = schedule->isCountBuffer(slices[0].buffer);
  for (unsigned i = 1, e = names.size(); i < e; ++i)
    if (schedule->isCountBuffer(slices[i].buffer) != counts)
      return op->emitOpError()
             << "moves between count table '"
             << schedule->getBufferName(counts ? slices[0].buffer
                                               : slices[i].buffer)
             << "' and data buffer '"
             << schedule->getBufferName(counts ? slices[i].buffer
                                               : slices[0].buffer)
             << "'";
  if (auto engine = op->getAttrOfType<IntegerAttr>("engine"))
    if (engine.getInt() < 0)
      return op->emitOpError("engine ") << engine.getInt() << " is negative";
  std::optional<int64_t> first = slices[0].count;
  for (unsigned i = 1, e = names.size(); i < e; ++i) {
    std::optional<int64_t> count = slices[i].count;
    if (first && count && *first != *count)
      return op->emitOpError()
             << names[0] << " has " << *first << " chunks but " << names[i]
             << " has " << *count;
  }
  return success();
}

LogicalResult sdma::detail::verifyNoOverlap(TransferOpInterface op, unsigned a,
                                            unsigned b, const Twine &message) {
  std::optional<StaticSlice> sa = getStaticSlice(op, a),
                             sb = getStaticSlice(op, b);
  if (sa && sb && sa->overlaps(*sb))
    return op->emitOpError(message);
  return success();
}
