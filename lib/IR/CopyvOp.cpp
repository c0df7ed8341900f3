//===- CopyvOp.cpp - sdma.copyv, the run-time-count copy ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The syntax and the static checks of sdma.copyv:
//
//   sdma.copyv [`pull`] SIDE -> SIDE, count %table[INDEX] on RANK max N
//   SIDE ::= %buffer[OFFSET] on RANK
//   OFFSET ::= field | FORM %table[INDEX] on RANK
//   FORM ::= `packed` [`forwarded`] | `expert_major` [`forwarded`] | `at`
//
// Fields are stored in CopyvOp::Field order, so sdma-unroll evaluates them
// as it does every op's fields.
//
//===----------------------------------------------------------------------===//

#include "OpFields.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace sdma;
using namespace sdma::detail;

namespace {

/// One field as parsed: a constant or an operand.
struct ParsedField {
  int64_t value = 0;
  std::optional<OpAsmParser::UnresolvedOperand> operand;

  ParseResult parse(OpAsmParser &parser) {
    OptionalParseResult intResult = parser.parseOptionalInteger(value);
    if (intResult.has_value())
      return *intResult;
    operand.emplace();
    return parser.parseOperand(*operand);
  }
};

/// `%table[INDEX] on RANK`
ParseResult parseTableEntry(OpAsmParser &parser,
                            OpAsmParser::UnresolvedOperand &table,
                            ParsedField &index, ParsedField &rank) {
  return failure(parser.parseOperand(table) || parser.parseLSquare() ||
                 index.parse(parser) || parser.parseRSquare() ||
                 parser.parseKeyword("on") || rank.parse(parser));
}

} // namespace

ParseResult CopyvOp::parse(OpAsmParser &parser, OperationState &result) {
  ParsedField fields[kNumFields];
  OpAsmParser::UnresolvedOperand source, target, counts;
  std::optional<OpAsmParser::UnresolvedOperand> prefix[2];
  int64_t forms[2] = {CopyvOp::kPrefix, CopyvOp::kPrefix};
  bool forwarded[2] = {false, false};
  auto parseSide = [&](OpAsmParser::UnresolvedOperand &buffer,
                       unsigned side) -> ParseResult {
    unsigned rank = side ? kTargetRank : kSourceRank;
    unsigned offset = side ? kTargetOffset : kSourceOffset;
    unsigned prefixRank = side ? kTargetPrefixRank : kSourcePrefixRank;
    if (parser.parseOperand(buffer) || parser.parseLSquare())
      return failure();
    StringRef form;
    if (succeeded(parser.parseOptionalKeyword(
            &form, {"packed", "expert_major", "at"}))) {
      forms[side] = form == "packed"         ? CopyvOp::kPrefix
                    : form == "expert_major" ? CopyvOp::kExpertMajor
                                             : CopyvOp::kAt;
      SMLoc at = parser.getCurrentLocation();
      forwarded[side] = succeeded(parser.parseOptionalKeyword("forwarded"));
      if (forwarded[side] && form == "at")
        return parser.emitError(at, "'at' reads one entry of its table; "
                                    "only packed and expert_major offsets "
                                    "may be forwarded");
      prefix[side].emplace();
      if (parseTableEntry(parser, *prefix[side], fields[prefixRank + 1],
                          fields[prefixRank]))
        return failure();
    } else if (fields[offset].parse(parser)) {
      return failure();
    }
    return failure(parser.parseRSquare() || parser.parseKeyword("on") ||
                   fields[rank].parse(parser));
  };
  int64_t max = 0; // set by a successful parse; GCC cannot tell
  if (succeeded(parser.parseOptionalKeyword("pull")))
    result.addAttribute(getPullAttrName(result.name),
                        parser.getBuilder().getUnitAttr());
  if (parseSide(source, 0) || parser.parseArrow() || parseSide(target, 1) ||
      parser.parseComma() || parser.parseKeyword("count") ||
      parseTableEntry(parser, counts, fields[kCountIndex],
                      fields[kCountRank]) ||
      parser.parseKeyword("max") || parser.parseInteger(max) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();

  Builder &builder = parser.getBuilder();
  Type bufferType = BufferType::get(parser.getContext());
  SmallVector<OpAsmParser::UnresolvedOperand> buffers = {
      source, target, counts, prefix[0].value_or(counts),
      prefix[1].value_or(counts)};
  if (parser.resolveOperands(buffers, bufferType, result.operands))
    return failure();
  SmallVector<int64_t> statics;
  SmallVector<OpAsmParser::UnresolvedOperand> dynamics;
  for (const ParsedField &field : fields) {
    statics.push_back(field.operand ? ShapedType::kDynamic : field.value);
    if (field.operand)
      dynamics.push_back(*field.operand);
  }
  if (parser.resolveOperands(dynamics, builder.getIndexType(), result.operands))
    return failure();
  result.getOrAddProperties<Properties>().setStaticFields(statics);
  result.addAttribute(getMaxAttrName(result.name),
                      builder.getI64IntegerAttr(max));
  result.addAttribute(getPackedAttrName(result.name),
                      builder.getDenseBoolArrayAttr(
                          {prefix[0].has_value(), prefix[1].has_value()}));
  if (forms[0] != kPrefix || forms[1] != kPrefix)
    result.addAttribute(getTableFormsAttrName(result.name),
                        builder.getDenseI64ArrayAttr({forms[0], forms[1]}));
  if (forwarded[0] || forwarded[1])
    result.addAttribute(
        getForwardedAttrName(result.name),
        builder.getDenseBoolArrayAttr({forwarded[0], forwarded[1]}));
  return success();
}

void CopyvOp::print(OpAsmPrinter &printer) {
  auto printEntry = [&](Value table, unsigned index, unsigned rank) {
    printer.printOperand(table);
    printer << "[";
    printField(printer, getField(index));
    printer << "] on ";
    printField(printer, getField(rank));
  };
  auto printSide = [&](Value buffer, unsigned side) {
    printer.printOperand(buffer);
    printer << "[";
    if (getPacked()[side]) {
      TableForm form = getTableForm(side);
      printer << (form == kPrefix        ? "packed "
                  : form == kExpertMajor ? "expert_major "
                                         : "at ");
      if (isForwarded(side))
        printer << "forwarded ";
      printEntry(side ? getTargetPrefix() : getSourcePrefix(),
                 side ? kTargetPrefixIndex : kSourcePrefixIndex,
                 side ? kTargetPrefixRank : kSourcePrefixRank);
    } else {
      printField(printer, getField(side ? kTargetOffset : kSourceOffset));
    }
    printer << "] on ";
    printField(printer, getField(side ? kTargetRank : kSourceRank));
  };
  printer << (getPull() ? " pull " : " ");
  printSide(getSource(), 0);
  printer << " -> ";
  printSide(getTarget(), 1);
  printer << ", count ";
  printEntry(getCounts(), kCountIndex, kCountRank);
  printer << " max " << getMaxCount();
  sdma::detail::printAttributes(printer, *this,
                                {getMaxAttrName(), getPackedAttrName(),
                                 getTableFormsAttrName(),
                                 getForwardedAttrName(), getPullAttrName()});
}

/// A table entry `table[index] on rank`: a count table, index in range.
static LogicalResult verifyTableEntry(CopyvOp op, ScheduleOp schedule,
                                      Value table, unsigned index,
                                      StringRef what) {
  StringRef name = schedule.getBufferName(table);
  if (!schedule.isCountBuffer(table))
    return op.emitOpError()
           << what << " table '" << name
           << "' is not a count table (declare it counts[SIZE])";
  std::optional<int64_t> value = op.getConstantField(index);
  std::optional<int64_t> size =
      schedule.getBufferChunks(table, schedule.getRanks());
  if (value && (*value < 0 || (size && *value >= *size)))
    return op.emitOpError()
           << what << " index " << *value << " is out of range of count table '"
           << name << "'" << (size ? ", which has " : "")
           << (size ? std::to_string(*size) + " entries" : "");
  return success();
}

/// One side: a data buffer; a fixed offset leaves room for `max` chunks.
static LogicalResult verifySide(CopyvOp op, ScheduleOp schedule, unsigned side,
                                StringRef what) {
  Value buffer = side ? op.getTarget() : op.getSource();
  StringRef name = schedule.getBufferName(buffer);
  if (schedule.isCountBuffer(buffer))
    return op.emitOpError()
           << what << " buffer '" << name << "' is a count table, not data";
  if (failed(verifyRank(
          op, op.getField(side ? CopyvOp::kTargetRank : CopyvOp::kSourceRank),
          schedule.getRanks(), (what + " rank").str())))
    return failure();
  if (op.getPacked()[side]) {
    unsigned rank =
        side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
    CopyvOp::TableForm form = op.getTableForm(side);
    std::string table = (what + (form == CopyvOp::kPrefix ? " prefix"
                                 : form == CopyvOp::kAt   ? " at"
                                                          : " expert_major"))
                            .str();
    if (failed(verifyRank(op, op.getField(rank), schedule.getRanks(),
                          table + " rank")))
      return failure();
    return verifyTableEntry(op, schedule,
                            side ? op.getTargetPrefix() : op.getSourcePrefix(),
                            rank + 1, table);
  }
  std::optional<int64_t> offset = op.getConstantField(
      side ? CopyvOp::kTargetOffset : CopyvOp::kSourceOffset);
  if (!offset)
    return success();
  if (*offset < 0)
    return op.emitOpError() << what << " offset " << *offset << " in buffer '"
                            << name << "' is negative";
  std::optional<int64_t> chunks =
      schedule.getBufferChunks(buffer, schedule.getRanks());
  int64_t end;
  if (chunks &&
      (llvm::AddOverflow(*offset, op.getMaxCount(), end) || end > *chunks))
    return op.emitOpError()
           << what << " slot [" << *offset << ", " << *offset << " + max "
           << op.getMaxCount() << ") is out of bounds of buffer '" << name
           << "', which has " << *chunks << " chunks";
  return success();
}

LogicalResult CopyvOp::verify() {
  FailureOr<ScheduleOp> schedule = verifyFieldsAndParent(*this, kNumFields);
  if (failed(schedule))
    return failure();
  if (getPacked().size() != 2)
    return emitOpError("expects 'packed' to hold two flags");
  if (std::optional<ArrayRef<int64_t>> forms = getTableForms())
    for (unsigned side = 0; side < 2; ++side)
      if (forms->size() != 2 || (*forms)[side] < kPrefix ||
          (*forms)[side] > kAt ||
          ((*forms)[side] != kPrefix && !getPacked()[side]))
        return emitOpError("expects 'table_forms' to hold two forms (0 "
                           "packed, 1 expert_major, 2 at) of table sides");
  if (std::optional<ArrayRef<bool>> forwarded = getForwarded())
    for (unsigned side = 0; side < 2; ++side)
      if (forwarded->size() != 2 ||
          ((*forwarded)[side] &&
           (!getPacked()[side] || getTableForm(side) == kAt)))
        return emitOpError("expects 'forwarded' to hold two flags, set only "
                           "on sides read packed or expert_major");
  if (getMaxCount() < 1)
    return emitOpError("max ") << getMaxCount() << " must be positive";
  if (failed(verifySide(*this, *schedule, 0, "source")) ||
      failed(verifySide(*this, *schedule, 1, "destination")) ||
      failed(verifyRank(*this, getField(kCountRank), schedule->getRanks(),
                        "count rank")) ||
      failed(verifyTableEntry(*this, *schedule, getCounts(), kCountIndex,
                              "count")))
    return failure();
  // Two fixed slots of one buffer on one rank must not overlap.
  std::optional<int64_t> sr = getConstantField(kSourceRank),
                         so = getConstantField(kSourceOffset),
                         tr = getConstantField(kTargetRank),
                         to = getConstantField(kTargetOffset);
  if (getSource() == getTarget() && !isSourcePacked() && !isTargetPacked() &&
      sr && so && tr && to && *sr == *tr && *so < *to + getMaxCount() &&
      *to < *so + getMaxCount())
    return emitOpError("source and destination slots overlap");
  if (getSource() == getTarget() && (isSourcePacked() || isTargetPacked()))
    return emitOpError("source and destination are one buffer; a packed "
                       "side could overlap the other");
  return success();
}
