//===- SdmaOps.cpp - sdma operations --------------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Parsers, printers and verifiers. Index-valued fields (ranks, offsets,
// counts) are stored as in memref.subview: a static list with
// ShapedType::kDynamic holes filled by `fields` operands, in order.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace sdma;

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

OpFoldResult sdma::getFieldAt(Operation *op, ArrayRef<int64_t> staticFields,
                              OperandRange dynamicFields, unsigned i) {
  assert(i < staticFields.size() && "field index out of range");
  if (!ShapedType::isDynamic(staticFields[i]))
    return IntegerAttr::get(IndexType::get(op->getContext()), staticFields[i]);
  unsigned dynamicIndex =
      llvm::count_if(staticFields.take_front(i), ShapedType::isDynamic);
  return dynamicFields[dynamicIndex];
}

namespace {
/// Accumulates a mixed static/dynamic field list while parsing.
struct FieldListParser {
  SmallVector<int64_t> statics;
  SmallVector<OpAsmParser::UnresolvedOperand> dynamics;

  /// field ::= integer | ssa-value
  ParseResult parseField(OpAsmParser &parser) {
    int64_t value;
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

  ParseResult finish(OpAsmParser &parser, OperationState &state) {
    if (parser.resolveOperands(dynamics, parser.getBuilder().getIndexType(),
                               state.operands))
      return failure();
    state.addAttribute("static_fields",
                       parser.getBuilder().getDenseI64ArrayAttr(statics));
    return success();
  }
};
} // namespace

static void printField(OpAsmPrinter &printer, OpFoldResult field) {
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

/// Parses `numSlices` slices separated by `separators`, then the attribute
/// dictionary, and resolves everything into `state`.
static ParseResult parseTransfer(OpAsmParser &parser, OperationState &state,
                                 ArrayRef<StringRef> separators) {
  FieldListParser fields;
  SmallVector<OpAsmParser::UnresolvedOperand> buffers;
  if (parseSlice(parser, fields, buffers))
    return failure();
  auto parseSeparator = [&](StringRef separator) -> ParseResult {
    if (separator == "->")
      return parser.parseArrow();
    if (separator == ",")
      return parser.parseComma();
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
  if (parser.resolveOperands(buffers, bufferType, state.operands))
    return failure();
  return fields.finish(parser, state);
}

static void printTransfer(OpAsmPrinter &printer, TransferOpInterface op,
                          ArrayRef<StringRef> separators) {
  printer << " ";
  printSlice(printer, op.getSlice(0));
  for (auto [i, separator] : llvm::enumerate(separators)) {
    printer << (separator == "," ? "" : " ") << separator << " ";
    printSlice(printer, op.getSlice(i + 1));
  }
  printer.printOptionalAttrDict(op->getAttrs(), {"static_fields"});
}

//===----------------------------------------------------------------------===//
// Shared verification
//===----------------------------------------------------------------------===//

/// Checks that the field list is well formed and that `op` sits inside a
/// schedule; returns that schedule.
static FailureOr<ScheduleOp> verifyFieldsAndParent(Operation *op,
                                                   size_t expectedFields) {
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

static LogicalResult verifyRank(Operation *op, OpFoldResult rank,
                                std::optional<int64_t> ranks, StringRef what) {
  std::optional<int64_t> value = getConstantIntValue(rank);
  if (!value)
    return success();
  int64_t limit = ranks.value_or(ScheduleOp::kMaxRanks);
  if (*value < 0 || *value >= limit)
    return op->emitOpError()
           << what << " " << *value << " is out of range [0, " << limit << ")";
  return success();
}

static LogicalResult verifySlice(Operation *op, ScheduleOp schedule,
                                 const Slice &slice, StringRef what) {
  std::optional<int64_t> ranks = schedule.getRanks();
  StringRef name = schedule.getBufferName(slice.buffer);
  if (failed(verifyRank(op, slice.rank, ranks, (what + " rank").str())))
    return failure();
  std::optional<int64_t> offset = getConstantIntValue(slice.offset);
  std::optional<int64_t> count = getConstantIntValue(slice.count);
  if (offset && *offset < 0)
    return op->emitOpError() << what << " offset " << *offset << " in buffer '"
                             << name << "' is negative";
  if (count && *count <= 0)
    return op->emitOpError() << what << " slice of buffer '" << name
                             << "' is empty (count " << *count << ")";
  std::optional<int64_t> chunks = schedule.getBufferChunks(slice.buffer, ranks);
  if (offset && count && chunks) {
    int64_t end;
    if (llvm::AddOverflow(*offset, *count, end) || end > *chunks)
      return op->emitOpError()
             << what << " slice [" << *offset << ", " << *offset << " + "
             << *count << ") is out of bounds of buffer '" << name
             << "', which has " << *chunks << " chunks";
  }
  return success();
}

/// Verifies every slice and that all slices have the same count.
static LogicalResult verifyTransfer(TransferOpInterface op,
                                    ArrayRef<StringRef> names) {
  FailureOr<ScheduleOp> schedule = verifyFieldsAndParent(op, 3 * names.size());
  if (failed(schedule))
    return failure();
  for (auto [i, name] : llvm::enumerate(names))
    if (failed(verifySlice(op, *schedule, op.getSlice(i), name)))
      return failure();
  if (auto engine = op->getAttrOfType<IntegerAttr>("engine"))
    if (engine.getInt() < 0)
      return op->emitOpError("engine ") << engine.getInt() << " is negative";
  std::optional<int64_t> first = getConstantIntValue(op.getSlice(0).count);
  for (unsigned i = 1, e = names.size(); i < e; ++i) {
    std::optional<int64_t> count = getConstantIntValue(op.getSlice(i).count);
    if (first && count && *first != *count)
      return op->emitOpError()
             << names[0] << " has " << *first << " chunks but " << names[i]
             << " has " << *count;
  }
  return success();
}

/// Reports an overlap between two slices if both are static.
static LogicalResult verifyNoOverlap(Operation *op, const Slice &a,
                                     const Slice &b, const Twine &message) {
  std::optional<StaticSlice> sa = getStaticSlice(a), sb = getStaticSlice(b);
  if (sa && sb && sa->overlaps(*sb))
    return op->emitOpError(message);
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

/// size ::= integer | (integer `x`)? `ranks` (`+` integer)?
static ParseResult parseBufferSize(OpAsmParser &parser, int64_t &perRank,
                                   int64_t &fixed) {
  perRank = 0;
  fixed = 0;
  int64_t value;
  if (succeeded(parser.parseOptionalKeyword("ranks"))) {
    perRank = 1;
  } else {
    if (parser.parseInteger(value))
      return failure();
    if (failed(parser.parseOptionalKeyword("x"))) {
      fixed = value;
      return success();
    }
    if (parser.parseKeyword("ranks"))
      return failure();
    perRank = value;
  }
  if (succeeded(parser.parseOptionalPlus()))
    return parser.parseInteger(fixed);
  return success();
}

static void printBufferSize(OpAsmPrinter &printer, int64_t perRank,
                            int64_t fixed) {
  if (perRank == 0) {
    printer << fixed;
    return;
  }
  if (perRank != 1)
    printer << perRank << " x ";
  printer << "ranks";
  if (fixed != 0)
    printer << " + " << fixed;
}

ParseResult ScheduleOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();

  // ranks(%R) or ranks(%R = N)
  SmallVector<OpAsmParser::Argument> args(1);
  if (parser.parseKeyword("ranks") || parser.parseLParen() ||
      parser.parseArgument(args[0]))
    return failure();
  args[0].type = builder.getIndexType();
  if (succeeded(parser.parseOptionalEqual())) {
    int64_t ranks;
    if (parser.parseInteger(ranks))
      return failure();
    result.addAttribute(getNumRanksAttrName(result.name),
                        builder.getI64IntegerAttr(ranks));
  }
  if (parser.parseRParen())
    return failure();

  // buffers(%name : size, ...)
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  Type bufferType = BufferType::get(parser.getContext());
  if (parser.parseKeyword("buffers") ||
      parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
            OpAsmParser::Argument arg;
            int64_t perRank, fixed;
            if (parser.parseArgument(arg) || parser.parseColon() ||
                parseBufferSize(parser, perRank, fixed))
              return failure();
            arg.type = bufferType;
            names.push_back(
                builder.getStringAttr(arg.ssaName.name.drop_front()));
            sizes.push_back(perRank);
            sizes.push_back(fixed);
            args.push_back(arg);
            return success();
          }))
    return failure();
  result.addAttribute(getBufferNamesAttrName(result.name),
                      builder.getArrayAttr(names));
  result.addAttribute(getBufferSizesAttrName(result.name),
                      builder.getDenseI64ArrayAttr(sizes));

  // implements KIND(%in -> %out) (root N)?
  if (succeeded(parser.parseOptionalKeyword("implements"))) {
    StringRef kind;
    OpAsmParser::UnresolvedOperand in, out;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&kind) || parser.parseLParen() ||
        parser.parseOperand(in) || parser.parseArrow() ||
        parser.parseOperand(out) || parser.parseRParen())
      return failure();
    auto indexOf = [&](const OpAsmParser::UnresolvedOperand &operand)
        -> std::optional<int64_t> {
      for (unsigned i = 1; i < args.size(); ++i)
        if (args[i].ssaName.name == operand.name)
          return i - 1;
      return std::nullopt;
    };
    std::optional<int64_t> inIndex = indexOf(in), outIndex = indexOf(out);
    if (!inIndex || !outIndex)
      return parser.emitError(loc, "'implements' names a buffer that the "
                                   "schedule does not declare");
    result.addAttribute(getCollectiveAttrName(result.name),
                        builder.getStringAttr(kind));
    result.addAttribute(getCollectiveBuffersAttrName(result.name),
                        builder.getDenseI64ArrayAttr({*inIndex, *outIndex}));
    if (succeeded(parser.parseOptionalKeyword("root"))) {
      int64_t root;
      if (parser.parseInteger(root))
        return failure();
      result.addAttribute(getRootAttrName(result.name),
                          builder.getI64IntegerAttr(root));
    }
  }

  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args, /*enableNameShadowing=*/false))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void ScheduleOp::print(OpAsmPrinter &printer) {
  printer << " ";
  printer.printSymbolName(getSymName());
  printer << " ranks(";
  printer.printOperand(getRankCountArg());
  if (std::optional<int64_t> ranks = getRanks())
    printer << " = " << *ranks;
  printer << ") buffers(";
  ArrayRef<int64_t> sizes = getBufferSizes();
  llvm::interleaveComma(llvm::enumerate(getBufferArgs()), printer,
                        [&](auto it) {
                          printer.printOperand(it.value());
                          printer << " : ";
                          printBufferSize(printer, sizes[2 * it.index()],
                                          sizes[2 * it.index() + 1]);
                        });
  printer << ")";
  std::optional<unsigned> in = getCollectiveInput(),
                          out = getCollectiveOutput();
  SmallVector<StringRef> elided = {getSymNameAttrName(), getNumRanksAttrName(),
                                   getBufferNamesAttrName(),
                                   getBufferSizesAttrName()};
  if (getCollective() && in && out) {
    printer << " implements " << *getCollective() << "(";
    printer.printOperand(getBufferArgs()[*in]);
    printer << " -> ";
    printer.printOperand(getBufferArgs()[*out]);
    printer << ")";
    if (std::optional<int64_t> root = getRoot())
      printer << " root " << *root;
    llvm::append_range(elided,
                       ArrayRef<StringRef>{getCollectiveAttrName(),
                                           getCollectiveBuffersAttrName(),
                                           getRootAttrName()});
  }
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs(), elided);
  printer << " ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/false);
}

void ScheduleOp::getAsmBlockArgumentNames(Region &region,
                                          OpAsmSetValueNameFn setNameFn) {
  Block &block = region.front();
  if (block.getNumArguments() == 0)
    return;
  setNameFn(block.getArgument(0), "R");
  ArrayAttr names = getBufferNames();
  for (auto [arg, name] : llvm::zip(block.getArguments().drop_front(), names))
    setNameFn(arg, cast<StringAttr>(name).getValue());
}

static std::optional<unsigned> getBufferIndex(ScheduleOp schedule,
                                              Value buffer) {
  auto arg = dyn_cast<BlockArgument>(buffer);
  if (!arg || arg.getOwner() != &schedule.getBody().front() ||
      arg.getArgNumber() == 0)
    return std::nullopt;
  return arg.getArgNumber() - 1;
}

StringRef ScheduleOp::getBufferName(Value buffer) {
  std::optional<unsigned> index = getBufferIndex(*this, buffer);
  if (!index || *index >= getBufferNames().size())
    return "<unknown>";
  return cast<StringAttr>(getBufferNames()[*index]).getValue();
}

std::pair<int64_t, int64_t> ScheduleOp::getBufferSize(Value buffer) {
  std::optional<unsigned> index = getBufferIndex(*this, buffer);
  ArrayRef<int64_t> sizes = getBufferSizes();
  if (!index || 2 * *index + 1 >= sizes.size())
    return {0, 0};
  return {sizes[2 * *index], sizes[2 * *index + 1]};
}

std::optional<int64_t>
ScheduleOp::getBufferChunks(Value buffer, std::optional<int64_t> ranks) {
  auto [perRank, fixed] = getBufferSize(buffer);
  if (perRank == 0)
    return fixed;
  if (!ranks)
    return std::nullopt;
  int64_t scaled, total;
  if (llvm::MulOverflow(perRank, *ranks, scaled) ||
      llvm::AddOverflow(scaled, fixed, total))
    return std::nullopt;
  return total;
}

ArrayRef<StringRef> ScheduleOp::getCollectiveKinds() {
  static const StringRef kinds[] = {"all_gather", "all_to_all", "broadcast",
                                    "scatter", "gather"};
  return kinds;
}

bool ScheduleOp::collectiveNeedsRoot(StringRef kind) {
  return kind == "broadcast" || kind == "scatter" || kind == "gather";
}

static std::optional<unsigned> getCollectiveBuffer(ScheduleOp op,
                                                   unsigned which) {
  std::optional<ArrayRef<int64_t>> buffers = op.getCollectiveBuffers();
  if (!buffers || buffers->size() != 2 || (*buffers)[which] < 0 ||
      (*buffers)[which] >= static_cast<int64_t>(op.getBufferArgs().size()))
    return std::nullopt;
  return (*buffers)[which];
}

std::optional<unsigned> ScheduleOp::getCollectiveInput() {
  return getCollectiveBuffer(*this, 0);
}
std::optional<unsigned> ScheduleOp::getCollectiveOutput() {
  return getCollectiveBuffer(*this, 1);
}

static bool isIdentifier(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult ScheduleOp::verifyRegions() {
  std::optional<int64_t> ranks = getRanks();
  if (ranks && (*ranks < 1 || *ranks > kMaxRanks))
    return emitOpError("rank count ")
           << *ranks << " is out of range [1, " << kMaxRanks << "]";

  Block &block = getBody().front();
  if (block.getNumArguments() == 0 || !block.getArgument(0).getType().isIndex())
    return emitOpError("expects the rank count as its first block argument");
  size_t numBuffers = block.getNumArguments() - 1;
  if (getBufferNames().size() != numBuffers ||
      getBufferSizes().size() != 2 * numBuffers)
    return emitOpError("expects a name and a size for each of its ")
           << numBuffers << " buffers";

  llvm::StringSet<> seen;
  for (auto [i, arg] : llvm::enumerate(getBufferArgs())) {
    if (!isa<BufferType>(arg.getType()))
      return emitOpError("block argument ")
             << i + 1 << " must be an '!sdma.buffer', got " << arg.getType();
    auto name = dyn_cast<StringAttr>(getBufferNames()[i]);
    if (!name || !isIdentifier(name.getValue()))
      return emitOpError("buffer name ")
             << getBufferNames()[i] << " is not an identifier";
    if (!seen.insert(name.getValue()).second)
      return emitOpError("buffer '")
             << name.getValue() << "' is declared twice";
    auto [perRank, fixed] = getBufferSize(arg);
    if (perRank < 0 || fixed < 0 || (perRank == 0 && fixed == 0))
      return emitOpError("buffer '")
             << name.getValue() << "' must have a positive size";
    int64_t scaled, largest;
    if (llvm::MulOverflow(perRank, ranks.value_or(kMaxRanks), scaled) ||
        llvm::AddOverflow(scaled, fixed, largest) || largest > kMaxChunks)
      return emitOpError("buffer '") << name.getValue() << "' is larger than "
                                     << kMaxChunks << " chunks";
  }

  if (std::optional<StringRef> kind = getCollective()) {
    if (!llvm::is_contained(getCollectiveKinds(), *kind))
      return emitOpError("implements unknown collective '")
             << *kind << "' (expected all_gather, all_to_all, broadcast, "
             << "scatter or gather)";
    if (!getCollectiveInput() || !getCollectiveOutput())
      return emitOpError("expects 'collective_buffers' to name an input and "
                         "an output buffer");
    bool inPlace = *getCollectiveInput() == *getCollectiveOutput();
    if (inPlace && *kind != "all_to_all" && *kind != "broadcast")
      return emitOpError("'") << *kind << "' cannot be in place";
    if (collectiveNeedsRoot(*kind) != getRoot().has_value())
      return emitOpError("'")
             << *kind << "' " << (getRoot() ? "takes no" : "needs a")
             << " root";
    std::optional<int64_t> root = getRoot(); // stored as uint64_t
    if (root && (*root < 0 || *root >= ranks.value_or(kMaxRanks)))
      return emitOpError("root ") << *root << " is out of range [0, "
                                  << ranks.value_or(kMaxRanks) << ")";
  } else if (getCollectiveBuffers() || getRoot()) {
    return emitOpError("has collective buffers or a root but no collective");
  }

  for (Operation &op : getBody().getOps()) {
    WalkResult result = op.walk([&](Operation *nested) {
      StringRef dialect = nested->getName().getDialectNamespace();
      if (dialect == "sdma" || dialect == "arith" || dialect == "affine" ||
          dialect == "scf" || dialect == "index")
        return WalkResult::advance();
      nested->emitOpError("is not allowed in an 'sdma.schedule' (use sdma, "
                          "arith, affine, scf or index ops)");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

ParseResult CopyOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseTransfer(parser, result, {"->"});
}
void CopyOp::print(OpAsmPrinter &printer) {
  printTransfer(printer, *this, {"->"});
}
unsigned CopyOp::getNumSlices() { return 2; }
bool CopyOp::isSliceRead(unsigned i) { return i == 0; }
bool CopyOp::isSliceWritten(unsigned i) { return i == 1; }

LogicalResult CopyOp::verify() {
  if (failed(verifyTransfer(*this, {"source", "destination"})))
    return failure();
  std::optional<StaticSlice> src = getStaticSlice(getSourceSlice());
  std::optional<StaticSlice> dst = getStaticSlice(getTargetSlice());
  // A copy of a slice onto itself is a no-op (canonicalisation drops it);
  // any other overlap has no defined result.
  if (src && dst && !(*src == *dst) && src->overlaps(*dst))
    return emitOpError("source and destination overlap");
  return success();
}

//===----------------------------------------------------------------------===//
// BcastOp
//===----------------------------------------------------------------------===//

ParseResult BcastOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseTransfer(parser, result, {"->", ","});
}
void BcastOp::print(OpAsmPrinter &printer) {
  printTransfer(printer, *this, {"->", ","});
}
unsigned BcastOp::getNumSlices() { return 3; }
bool BcastOp::isSliceRead(unsigned i) { return i == 0; }
bool BcastOp::isSliceWritten(unsigned i) { return i != 0; }

LogicalResult BcastOp::verify() {
  if (failed(
          verifyTransfer(*this, {"source", "destination 0", "destination 1"})))
    return failure();
  if (failed(verifyNoOverlap(*this, getSlice(1), getSlice(2),
                             "destinations overlap")) ||
      failed(verifyNoOverlap(*this, getSlice(0), getSlice(1),
                             "destination 0 overlaps the source")) ||
      failed(verifyNoOverlap(*this, getSlice(0), getSlice(2),
                             "destination 1 overlaps the source")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// SwapOp
//===----------------------------------------------------------------------===//

ParseResult SwapOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseTransfer(parser, result, {"<->"});
}
void SwapOp::print(OpAsmPrinter &printer) {
  printTransfer(printer, *this, {"<->"});
}
unsigned SwapOp::getNumSlices() { return 2; }
bool SwapOp::isSliceRead(unsigned) { return true; }
bool SwapOp::isSliceWritten(unsigned) { return true; }

LogicalResult SwapOp::verify() {
  if (failed(verifyTransfer(*this, {"first slice", "second slice"})))
    return failure();
  return verifyNoOverlap(*this, getSlice(0), getSlice(1),
                         "swap slices overlap");
}

//===----------------------------------------------------------------------===//
// FenceOp
//===----------------------------------------------------------------------===//

ParseResult FenceOp::parse(OpAsmParser &parser, OperationState &result) {
  FieldListParser fields;
  if (succeeded(parser.parseOptionalKeyword("on")) && fields.parseField(parser))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  return fields.finish(parser, result);
}

void FenceOp::print(OpAsmPrinter &printer) {
  if (hasRank()) {
    printer << " on ";
    printField(printer, getField(0));
  }
  printer.printOptionalAttrDict((*this)->getAttrs(), {"static_fields"});
}

LogicalResult FenceOp::verify() {
  size_t numFields = getStaticFields().size();
  FailureOr<ScheduleOp> schedule =
      verifyFieldsAndParent(*this, numFields <= 1 ? numFields : 1);
  if (failed(schedule))
    return failure();
  if (hasRank())
    return verifyRank(*this, getField(0), schedule->getRanks(), "rank");
  return success();
}

//===----------------------------------------------------------------------===//
// SignalOp / WaitOp
//===----------------------------------------------------------------------===//

/// pair ::= field (`->` | `<-`) field (`tag` integer)?
static ParseResult parseRankPair(OpAsmParser &parser, OperationState &result,
                                 bool isWait) {
  FieldListParser fields;
  if (fields.parseField(parser))
    return failure();
  if (isWait) {
    if (parser.parseLess() || parser.parseMinus())
      return failure();
  } else if (parser.parseArrow()) {
    return failure();
  }
  if (fields.parseField(parser))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("tag"))) {
    int64_t tag;
    if (parser.parseInteger(tag))
      return failure();
    result.addAttribute("tag", parser.getBuilder().getI64IntegerAttr(tag));
  }
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  return fields.finish(parser, result);
}

static void printRankPair(OpAsmPrinter &printer, FieldsOpInterface op,
                          int64_t tag, bool isWait) {
  printer << " ";
  printField(printer, op.getField(0));
  printer << (isWait ? " <- " : " -> ");
  printField(printer, op.getField(1));
  if (tag != 0)
    printer << " tag " << tag;
  printer.printOptionalAttrDict(op->getAttrs(), {"static_fields", "tag"});
}

static LogicalResult verifyRankPair(Operation *op, int64_t tag, StringRef first,
                                    StringRef second) {
  FailureOr<ScheduleOp> schedule = verifyFieldsAndParent(op, 2);
  if (failed(schedule))
    return failure();
  auto fields = cast<FieldsOpInterface>(op);
  if (tag < 0)
    return op->emitOpError("tag ") << tag << " is negative";
  if (failed(verifyRank(op, fields.getField(0), schedule->getRanks(), first)) ||
      failed(verifyRank(op, fields.getField(1), schedule->getRanks(), second)))
    return failure();
  return success();
}

ParseResult SignalOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseRankPair(parser, result, /*isWait=*/false);
}
void SignalOp::print(OpAsmPrinter &printer) {
  printRankPair(printer, *this, getTag(), /*isWait=*/false);
}
LogicalResult SignalOp::verify() {
  return verifyRankPair(*this, getTag(), "signalling rank", "signalled rank");
}

ParseResult WaitOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseRankPair(parser, result, /*isWait=*/true);
}
void WaitOp::print(OpAsmPrinter &printer) {
  printRankPair(printer, *this, getTag(), /*isWait=*/true);
}
LogicalResult WaitOp::verify() {
  return verifyRankPair(*this, getTag(), "waiting rank", "awaited rank");
}

//===----------------------------------------------------------------------===//
// BarrierOp
//===----------------------------------------------------------------------===//

LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<ScheduleOp>())
    return emitOpError("must be nested in an 'sdma.schedule'");
  return success();
}

//===----------------------------------------------------------------------===//
// NotifyOp / PollOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyEngineOp(Operation *op, IntegerAttr rank,
                                    int64_t engine, int64_t flag) {
  auto schedule = op->getParentOfType<ScheduleOp>();
  if (!schedule)
    return op->emitOpError("must be nested in an 'sdma.schedule'");
  if (failed(verifyRank(op, rank, schedule.getRanks(), "rank")))
    return failure();
  if (engine < 0)
    return op->emitOpError("engine ") << engine << " is negative";
  if (flag < 0)
    return op->emitOpError("flag ") << flag << " is negative";
  return success();
}

LogicalResult NotifyOp::verify() {
  if (failed(verifyEngineOp(*this, getRankAttr(), getEngine(), getFlag())))
    return failure();
  if (getFlag() == 0)
    return emitOpError("notifies flag 0, the launch flag, which only the "
                       "host raises (flags from 1 up)");
  auto schedule = (*this)->getParentOfType<ScheduleOp>();
  return verifyRank(*this, getTargetAttr(), schedule.getRanks(), "target rank");
}

LogicalResult PollOp::verify() {
  if (failed(verifyEngineOp(*this, getRankAttr(), getEngine(), getFlag())))
    return failure();
  if (static_cast<int64_t>(getValue()) < 1)
    return emitOpError("value ")
           << static_cast<int64_t>(getValue()) << " is not positive";
  if (getFlag() == 0 && getValue() != 1)
    return emitOpError("polls the launch flag 0 for ")
           << static_cast<int64_t>(getValue())
           << ", but the host raises it to 1 (once per launch)";
  return success();
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
  return fields.finish(parser, result);
}

void RankAddOp::print(OpAsmPrinter &printer) {
  printer << " ";
  printField(printer, getField(0));
  printer << ", ";
  printField(printer, getField(1));
  printer.printOptionalAttrDict((*this)->getAttrs(), {"static_fields"});
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

#define GET_OP_CLASSES
#include "sdma/IR/SdmaOps.cpp.inc"
