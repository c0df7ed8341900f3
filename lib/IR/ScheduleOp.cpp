//===- ScheduleOp.cpp - the sdma.schedule op ------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The custom syntax of a schedule (ranks, buffers and their sizes, the
// collective it implements), its buffer and collective accessors, and the
// checks of its signature and of what its body may contain.
//
//===----------------------------------------------------------------------===//

#include "OpFields.h"
#include "sdma/IR/SdmaOps.h"
#include "sdma/runtime/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sdma;

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

/// size ::= integer | (integer `x`)? (`experts` `x`)? `ranks` (`+` integer)?
/// `experts x ranks` is stored as a negative chunks-per-rank (-k for
/// `k x experts x ranks`), which sdma-unroll experts=E resolves.
static ParseResult parseBufferSize(OpAsmParser &parser, int64_t &perRank,
                                   int64_t &fixed) {
  perRank = 0;
  fixed = 0;
  int64_t value = 1;
  bool experts = false;
  if (succeeded(parser.parseOptionalKeyword("experts"))) {
    experts = true;
    if (parser.parseKeyword("x") || parser.parseKeyword("ranks"))
      return failure();
  } else if (failed(parser.parseOptionalKeyword("ranks"))) {
    if (parser.parseInteger(value))
      return failure();
    if (failed(parser.parseOptionalKeyword("x"))) {
      fixed = value;
      return success();
    }
    experts = succeeded(parser.parseOptionalKeyword("experts"));
    if ((experts && parser.parseKeyword("x")) || parser.parseKeyword("ranks"))
      return failure();
  }
  if (value < 0 || (experts && value == 0))
    return parser.emitError(parser.getCurrentLocation(),
                            "a buffer size of K x ranks or K x experts x "
                            "ranks needs K >= 1");
  perRank = experts ? -value : value;
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
  int64_t k = perRank < 0 ? -perRank : perRank;
  if (k != 1)
    printer << k << " x ";
  if (perRank < 0)
    printer << "experts x ";
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
  SmallVector<int64_t> sizes, countBuffers;
  SmallVector<Attribute> types;
  bool typed = false;
  Type bufferType = BufferType::get(parser.getContext());
  if (parser.parseKeyword("buffers") ||
      parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
            OpAsmParser::Argument arg;
            int64_t perRank, fixed;
            if (parser.parseArgument(arg) || parser.parseColon())
              return failure();
            // counts[size]: a count table; f32[size]: typed elements.
            bool counts = succeeded(parser.parseOptionalKeyword("counts"));
            Type element;
            OptionalParseResult hasType =
                counts ? OptionalParseResult(std::nullopt)
                       : parser.parseOptionalType(element);
            if (hasType.has_value() && failed(*hasType))
              return failure();
            if (counts)
              countBuffers.push_back(args.size() - 1);
            bool bracketed = counts || hasType.has_value();
            if (bracketed && parser.parseLSquare())
              return failure();
            if (parseBufferSize(parser, perRank, fixed) ||
                (bracketed && parser.parseRSquare()))
              return failure();
            typed |= static_cast<bool>(element);
            types.push_back(
                TypeAttr::get(element ? element : builder.getNoneType()));
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
  if (!countBuffers.empty())
    result.addAttribute(getCountBuffersAttrName(result.name),
                        builder.getDenseI64ArrayAttr(countBuffers));
  if (typed)
    result.addAttribute(getBufferTypesAttrName(result.name),
                        builder.getArrayAttr(types));

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
    SmallVector<int64_t> collectiveBuffers = {*inIndex, *outIndex};
    // counts(%send) or counts(%send -> %recv) (all_to_allv)
    if (succeeded(parser.parseOptionalKeyword("counts"))) {
      OpAsmParser::UnresolvedOperand send, recv;
      SMLoc countsLoc = parser.getCurrentLocation();
      if (parser.parseLParen() || parser.parseOperand(send))
        return failure();
      bool packed = succeeded(parser.parseOptionalArrow());
      if ((packed && parser.parseOperand(recv)) || parser.parseRParen())
        return failure();
      std::optional<int64_t> sendIndex = indexOf(send);
      std::optional<int64_t> recvIndex =
          packed ? indexOf(recv) : std::optional<int64_t>(-1);
      if (!sendIndex || !recvIndex)
        return parser.emitError(countsLoc, "'counts' names a buffer that the "
                                           "schedule does not declare");
      collectiveBuffers.push_back(*sendIndex);
      if (packed)
        collectiveBuffers.push_back(*recvIndex);
    }
    result.addAttribute(getCollectiveAttrName(result.name),
                        builder.getStringAttr(kind));
    result.addAttribute(getCollectiveBuffersAttrName(result.name),
                        builder.getDenseI64ArrayAttr(collectiveBuffers));
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
                          bool counts = isCountBuffer(it.index());
                          Type element = getBufferElementType(it.index());
                          if (counts)
                            printer << "counts";
                          else if (element)
                            printer << element;
                          if (counts || element)
                            printer << "[";
                          printBufferSize(printer, sizes[2 * it.index()],
                                          sizes[2 * it.index() + 1]);
                          if (counts || element)
                            printer << "]";
                        });
  printer << ")";
  std::optional<unsigned> in = getCollectiveInput(),
                          out = getCollectiveOutput();
  SmallVector<StringRef> elided = {
      getSymNameAttrName(),      getNumRanksAttrName(),
      getBufferNamesAttrName(),  getBufferSizesAttrName(),
      getCountBuffersAttrName(), getBufferTypesAttrName()};
  if (getCollective() && in && out) {
    printer << " implements " << *getCollective() << "(";
    printer.printOperand(getBufferArgs()[*in]);
    printer << " -> ";
    printer.printOperand(getBufferArgs()[*out]);
    printer << ")";
    if (std::optional<unsigned> send = getCollectiveSendCounts()) {
      printer << " counts(";
      printer.printOperand(getBufferArgs()[*send]);
      if (std::optional<unsigned> recv = getCollectiveRecvCounts()) {
        printer << " -> ";
        printer.printOperand(getBufferArgs()[*recv]);
      }
      printer << ")";
    }
    if (std::optional<int64_t> root = getRoot())
      printer << " root " << *root;
    llvm::append_range(elided,
                       ArrayRef<StringRef>{getCollectiveAttrName(),
                                           getCollectiveBuffersAttrName(),
                                           getRootAttrName()});
  }
  sdma::detail::printAttributes(printer, *this, elided, /*withKeyword=*/true);
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

//===----------------------------------------------------------------------===//
// Buffers and collective
//===----------------------------------------------------------------------===//

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
  if (perRank < 0) { // k x experts x ranks
    std::optional<int64_t> experts = getExpertCount();
    if (!experts || llvm::MulOverflow(-perRank, *experts, perRank))
      return std::nullopt;
  }
  if (!ranks)
    return std::nullopt;
  int64_t scaled, total;
  if (llvm::MulOverflow(perRank, *ranks, scaled) ||
      llvm::AddOverflow(scaled, fixed, total))
    return std::nullopt;
  return total;
}

ArrayRef<StringRef> ScheduleOp::getCollectiveKinds() {
  static const StringRef kinds[] = {
      "all_gather",         "all_to_all",     "all_to_allv",
      "all_to_allv_packed", "all_to_allv_2d", "all_to_allv_2d_offset",
      "broadcast",          "scatter",        "gather",
      "all_reduce",         "reduce_scatter", "reduce"};
  return kinds;
}

bool ScheduleOp::collectiveNeedsRoot(StringRef kind) {
  return kind == "broadcast" || kind == "scatter" || kind == "gather" ||
         kind == "reduce";
}

bool ScheduleOp::isReduction(StringRef kind) {
  return kind == "all_reduce" || kind == "reduce_scatter" || kind == "reduce";
}

Type ScheduleOp::getBufferElementType(unsigned index) {
  std::optional<ArrayAttr> types = getBufferTypes();
  if (!types || index >= types->size())
    return {};
  auto attr = dyn_cast<TypeAttr>((*types)[index]);
  if (!attr || isa<NoneType>(attr.getValue()))
    return {};
  return attr.getValue();
}

Type ScheduleOp::getBufferElementType(Value buffer) {
  std::optional<unsigned> index = getBufferIndex(*this, buffer);
  return index ? getBufferElementType(*index) : Type();
}

bool ScheduleOp::isElementType(Type type) {
  // NCCL's element types.
  return type.isF32() || type.isF16() || type.isBF16() || type.isF64() ||
         type.isSignlessInteger(8) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64) || type.isUnsignedInteger(8) ||
         type.isUnsignedInteger(32) || type.isUnsignedInteger(64);
}

static std::optional<unsigned> getCollectiveBuffer(ScheduleOp op,
                                                   unsigned which) {
  std::optional<ArrayRef<int64_t>> buffers = op.getCollectiveBuffers();
  if (!buffers || buffers->size() < 2 || buffers->size() > 4 ||
      which >= buffers->size() || (*buffers)[which] < 0 ||
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
std::optional<unsigned> ScheduleOp::getCollectiveSendCounts() {
  return getCollectiveBuffer(*this, 2);
}
std::optional<unsigned> ScheduleOp::getCollectiveRecvCounts() {
  return getCollectiveBuffer(*this, 3);
}

bool ScheduleOp::isCountBuffer(unsigned index) {
  std::optional<ArrayRef<int64_t>> tables = getCountBuffers();
  return tables && llvm::is_contained(*tables, static_cast<int64_t>(index));
}

bool ScheduleOp::isCountBuffer(Value buffer) {
  std::optional<unsigned> index = getBufferIndex(*this, buffer);
  return index && isCountBuffer(*index);
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// all_to_allv names its count tables, every other kind none; the data
/// buffers are not count tables and the count tables are.
static LogicalResult verifyCountTables(ScheduleOp op, StringRef kind) {
  size_t named = op.getCollectiveBuffers()->size();
  if (!kind.starts_with("all_to_allv"))
    return named == 2
               ? success()
               : op.emitOpError("'") << kind << "' takes no count tables";
  if (named < 3)
    return op.emitOpError("'") << kind
                               << "' needs its count tables: counts(%send) or "
                                  "counts(%send -> %recv)";
  if (kind != "all_to_allv" && named < 4)
    return op.emitOpError("'")
           << kind << "' needs a receive-count table: counts(%send -> %recv)";
  if (!op.getCollectiveSendCounts() ||
      (named == 4 && !op.getCollectiveRecvCounts()))
    return op.emitOpError("expects 'collective_buffers' to name count tables");
  for (unsigned i = 0; i < named; ++i) {
    unsigned buffer = (*op.getCollectiveBuffers())[i];
    StringRef name = cast<StringAttr>(op.getBufferNames()[buffer]).getValue();
    if (op.isCountBuffer(buffer) != (i >= 2))
      return op.emitOpError("buffer '")
             << name << "' "
             << (i >= 2 ? "holds counts but is not declared counts[...]"
                        : "is a count table, not data");
  }
  if (named == 4 &&
      op.getCollectiveSendCounts() == op.getCollectiveRecvCounts())
    return op.emitOpError("'")
           << kind << "' needs distinct send and receive count tables";
  return success();
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
  if (std::optional<int64_t> local = getLocalRanks()) {
    if (*local < 1 || *local > kMaxRanks)
      return emitOpError("local rank count ")
             << *local << " is out of range [1, " << kMaxRanks << "]";
    if (ranks && *ranks % *local != 0)
      return emitOpError("local rank count ")
             << *local << " does not divide the rank count " << *ranks
             << " (every node holds the same number of ranks)";
  }

  if (std::optional<int64_t> experts = getExpertCount())
    if (*experts < 1 || *experts > kMaxExperts)
      return emitOpError("expert count ")
             << *experts << " is out of range [1, " << kMaxExperts << "]";
  if (getMajorAlign() && (*getMajorAlign() < 1 || *getMajorAlign() > (1 << 20)))
    return emitOpError("major alignment ")
           << *getMajorAlign() << " is out of range [1, 1048576] rows";

  Block &block = getBody().front();
  if (block.getNumArguments() == 0 || !block.getArgument(0).getType().isIndex())
    return emitOpError("expects the rank count as its first block argument");
  size_t numBuffers = block.getNumArguments() - 1;
  if (getBufferNames().size() != numBuffers ||
      getBufferSizes().size() != 2 * numBuffers)
    return emitOpError("expects a name and a size for each of its ")
           << numBuffers << " buffers";

  if (std::optional<ArrayRef<int64_t>> tables = getCountBuffers())
    for (int64_t index : *tables)
      if (index < 0 || index >= static_cast<int64_t>(numBuffers))
        return emitOpError("count table index ")
               << index << " is out of range [0, " << numBuffers << ")";
  if (std::optional<ArrayAttr> types = getBufferTypes()) {
    if (types->size() != numBuffers)
      return emitOpError("expects an element type (or none) for each of its ")
             << numBuffers << " buffers";
    for (auto [i, attr] : llvm::enumerate(*types)) {
      auto type = dyn_cast<TypeAttr>(attr);
      if (!type ||
          (!isa<NoneType>(type.getValue()) && !isElementType(type.getValue())))
        return emitOpError("buffer '")
               << cast<StringAttr>(getBufferNames()[i]).getValue()
               << "' has element type " << attr
               << ", expected f16, bf16, f32, f64, i8, ui8, i32, ui32, i64 or "
                  "ui64";
      if (type && !isa<NoneType>(type.getValue()) && isCountBuffer(i))
        return emitOpError("count table '")
               << cast<StringAttr>(getBufferNames()[i]).getValue()
               << "' cannot have an element type (it holds 64-bit counts)";
    }
  }
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
    if (fixed < 0 || (perRank == 0 && fixed == 0))
      return emitOpError("buffer '")
             << name.getValue() << "' must have a positive size";
    int64_t scaled, largest;
    // k x experts x ranks: as large as the bound E, or the most experts.
    if (perRank < 0 &&
        llvm::MulOverflow(-perRank, getExpertCount().value_or(kMaxExperts),
                          perRank))
      perRank = kMaxBufferChunks;
    if (llvm::MulOverflow(perRank, ranks.value_or(kMaxRanks), scaled) ||
        llvm::AddOverflow(scaled, fixed, largest) || largest > kMaxBufferChunks)
      return emitOpError("buffer '") << name.getValue() << "' is larger than "
                                     << kMaxBufferChunks << " chunks";
  }

  if (std::optional<StringRef> kind = getCollective()) {
    if (!llvm::is_contained(getCollectiveKinds(), *kind))
      return emitOpError("implements unknown collective '")
             << *kind << "' (expected all_gather, all_to_all, all_to_allv, "
             << "all_to_allv_packed, all_to_allv_2d, all_to_allv_2d_offset, "
             << "broadcast, scatter, gather, "
             << "all_reduce, reduce_scatter or reduce)";
    if (!getCollectiveInput() || !getCollectiveOutput())
      return emitOpError("expects 'collective_buffers' to name an input and "
                         "an output buffer");
    if (failed(verifyCountTables(*this, *kind)))
      return failure();
    bool inPlace = *getCollectiveInput() == *getCollectiveOutput();
    if (inPlace && *kind != "all_to_all" && *kind != "broadcast" &&
        *kind != "all_reduce" && *kind != "reduce")
      return emitOpError("'") << *kind << "' cannot be in place";
    if (isReduction(*kind)) {
      Type in = getBufferElementType(*getCollectiveInput());
      Type out = getBufferElementType(*getCollectiveOutput());
      auto name = [](Type type) {
        std::string text = "untyped";
        if (type) {
          text.clear();
          llvm::raw_string_ostream(text) << "'" << type << "'";
        }
        return text;
      };
      if (!in || in != out)
        return emitOpError("'")
               << *kind << "' needs an input and an output of one element "
               << "type (e.g. f32[1]), got " << name(in) << " and "
               << name(out);
    }
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
