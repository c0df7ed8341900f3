//===- SdmaPkt.cpp - AMD SDMA packet dialect ------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdmapkt/IR/SdmaPkt.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <set>

using namespace mlir;
using namespace sdma::pkt;

#include "sdmapkt/IR/SdmaPktDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "sdmapkt/IR/SdmaPktAttrs.cpp.inc"

void SdmaPktDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "sdmapkt/IR/SdmaPktAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "sdmapkt/IR/SdmaPktOps.cpp.inc"
      >();
}

std::optional<unsigned> sdma::pkt::pollFunctionCode(StringRef name) {
  return llvm::StringSwitch<std::optional<unsigned>>(name)
      .Case("always", 0)
      .Case("lt", 1)
      .Case("le", 2)
      .Case("eq", 3)
      .Case("ne", 4)
      .Case("ge", 5)
      .Case("gt", 6)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// ProgramOp, QueueOp
//===----------------------------------------------------------------------===//

int64_t ProgramOp::findBuffer(StringRef name) {
  for (auto [i, attr] : llvm::enumerate(getBuffers()))
    if (cast<StringAttr>(attr).getValue() == name)
      return i;
  return -1;
}

const TargetProfile *ProgramOp::getProfile() {
  return findTargetProfile(getTarget());
}

LogicalResult ProgramOp::verify() {
  if (!getProfile())
    return emitOpError("unknown target '")
           << getTarget() << "' (" << targetNameList() << ")";
  if (getRanksAttr().getInt() < 1)
    return emitOpError("needs at least one rank");
  if (getBuffers().size() != getBufferChunks().size())
    return emitOpError("has ") << getBuffers().size() << " buffers but "
                               << getBufferChunks().size() << " sizes";
  for (Attribute a : getBufferChunks())
    if (cast<IntegerAttr>(a).getInt() < 1)
      return emitOpError("buffer sizes must be at least one chunk");
  if (getFlagsAttr().getInt() < 2)
    return emitOpError("needs flag slots 0 (launch) and 1 (done)");
  if (getTimestampsAttr().getInt() < 0)
    return emitOpError("timestamp slot count must not be negative");
  int64_t align = getChunkAlignAttr().getInt();
  if (align < 1 || (align & (align - 1)))
    return emitOpError("chunk_align must be a power of two, got ") << align;
  int64_t maxChunk = getMaxChunkBytesAttr().getInt();
  if (maxChunk < align || maxChunk % align)
    return emitOpError("max_chunk_bytes must be a multiple of chunk_align");
  if (static_cast<int64_t>(getDone().size()) != getRanksAttr().getInt())
    return emitOpError("done needs one value per rank");
  std::set<std::pair<int64_t, int64_t>> seen;
  for (Operation &op : getBody().front()) {
    auto queue = dyn_cast<QueueOp>(op);
    if (!queue)
      return op.emitOpError("cannot appear directly in a program: only "
                            "sdmapkt.queue can");
    if (!seen.insert({queue.getRank(), queue.getEngine()}).second)
      return queue.emitOpError("duplicates queue ")
             << queue.getRank() << " : " << queue.getEngine();
  }
  return success();
}

LogicalResult QueueOp::verify() {
  auto program = (*this)->getParentOfType<ProgramOp>();
  int64_t rank = getRankAttr().getInt();
  if (rank < 0 || rank >= program.getRanksAttr().getInt())
    return emitOpError("rank ")
           << rank << " out of range [0, " << program.getRanks() << ")";
  if (getEngineAttr().getInt() < 0)
    return emitOpError("engine must not be negative");
  return success();
}

//===----------------------------------------------------------------------===//
// Packet verifiers
//===----------------------------------------------------------------------===//

namespace {
enum class AddrKind { Data, Flag, Timestamp };

ProgramOp programOf(Operation *op) { return op->getParentOfType<ProgramOp>(); }

LogicalResult checkRank(Operation *op, ProgramOp program, int64_t rank,
                        StringRef what) {
  if (rank < 0 || rank >= program.getRanksAttr().getInt())
    return op->emitOpError(what) << " rank " << rank << " out of range [0, "
                                 << program.getRanks() << ")";
  return success();
}

/// Checks one address operand: its kind, its range and its alignment.
/// `chunks` is the transfer's length in chunks where it is a relocation.
LogicalResult verifyAddress(Operation *op, Attribute attr, StringRef what,
                            AddrKind kind, int64_t align,
                            std::optional<int64_t> chunks = std::nullopt) {
  ProgramOp program = programOf(op);
  if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    int64_t value = integer.getInt();
    if (value < 0)
      return op->emitOpError(what) << " address must not be negative";
    if (value % align)
      return op->emitOpError(what) << " address 0x" << llvm::utohexstr(value)
                                   << " must be " << align << "-byte aligned";
    return success();
  }
  if (auto chunk = dyn_cast<ChunkAttr>(attr)) {
    if (kind != AddrKind::Data)
      return op->emitOpError(what)
             << " must be a " << (kind == AddrKind::Flag ? "flag" : "timestamp")
             << " slot, not a buffer chunk";
    int64_t b = program.findBuffer(chunk.getBuffer());
    if (b < 0)
      return op->emitOpError(what)
             << " names unknown buffer '" << chunk.getBuffer() << "'";
    if (failed(checkRank(op, program, chunk.getRank(), what)))
      return failure();
    int64_t size = cast<IntegerAttr>(program.getBufferChunks()[b]).getInt();
    int64_t end = chunk.getChunk() + chunks.value_or(1);
    if (chunk.getChunk() < 0 || end > size)
      return op->emitOpError(what)
             << " chunks [" << chunk.getChunk() << ", " << end
             << ") out of buffer '" << chunk.getBuffer() << "' (" << size
             << " chunks)";
    if (chunk.getChunk() != 0 && program.getChunkAlignAttr().getInt() % align)
      return op->emitOpError(what)
             << " must be " << align << "-byte aligned, but the program's "
             << "chunk_align " << program.getChunkAlign()
             << " does not guarantee it for chunk " << chunk.getChunk();
    return success();
  }
  if (auto flag = dyn_cast<FlagAttr>(attr)) {
    if (kind != AddrKind::Flag)
      return op->emitOpError(what) << " must not be a flag slot";
    if (failed(checkRank(op, program, flag.getRank(), what)))
      return failure();
    if (flag.getSlot() < 0 || flag.getSlot() >= program.getFlagsAttr().getInt())
      return op->emitOpError(what)
             << " flag slot " << flag.getSlot() << " out of range [0, "
             << program.getFlags() << ")";
    return success();
  }
  if (auto ts = dyn_cast<TimestampAttr>(attr)) {
    if (kind != AddrKind::Timestamp)
      return op->emitOpError(what) << " must not be a timestamp slot";
    if (failed(checkRank(op, program, ts.getRank(), what)))
      return failure();
    if (ts.getIndex() < 0 ||
        ts.getIndex() >= program.getTimestampsAttr().getInt())
      return op->emitOpError(what)
             << " timestamp slot " << ts.getIndex() << " out of range [0, "
             << program.getTimestamps() << ")";
    return success();
  }
  return op->emitOpError(what)
         << " must be an integer address or #sdmapkt.chunk/flag/timestamp";
}

/// Checks a byte count (raw bytes or #sdmapkt.chunks) against `maxBytes`,
/// the program's target's limit, and returns its length in chunks where it
/// is a relocation.
FailureOr<std::optional<int64_t>> verifyCount(Operation *op, Attribute attr,
                                              int64_t maxBytes) {
  ProgramOp program = programOf(op);
  std::string target = "(target '" + program.getTarget().str() + "')";
  if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    int64_t bytes = integer.getInt();
    if (bytes < 1 || bytes > maxBytes)
      return op->emitOpError("count ") << bytes << " bytes out of range [1, "
                                       << maxBytes << "] " << target;
    return std::optional<int64_t>();
  }
  if (auto chunks = dyn_cast<ChunksAttr>(attr)) {
    int64_t n = chunks.getCount();
    if (n < 1)
      return op->emitOpError("count must be at least one chunk");
    if (n > maxBytes / program.getMaxChunkBytesAttr().getInt())
      return op->emitOpError("count of ")
             << n << " chunks may exceed " << maxBytes
             << " bytes at max_chunk_bytes " << program.getMaxChunkBytes()
             << ": split the transfer " << target;
    return std::optional<int64_t>(n);
  }
  return op->emitOpError("count must be a byte count or #sdmapkt.chunks");
}

/// Whether `chunks` chunks are a multiple of `n` bytes (a power of two) at
/// every chunk size the program allows (the multiples of chunk_align).
bool multipleAtEveryChunkSize(ProgramOp program, uint64_t chunks, int64_t n) {
  uint64_t align = program.getChunkAlignAttr().getInt();
  return (chunks % n) * (align % n) % n == 0;
}

/// ROCr's broadcast rule: both destinations at the same offset within `n`
/// bytes. Buffer bases are at least 256-byte aligned, so a chunk
/// relocation's offset within `n` is its chunk offset times the chunk size.
LogicalResult verifySameOffset(Operation *op, Attribute a, Attribute b,
                               int64_t n) {
  ProgramOp program = programOf(op);
  auto rawA = dyn_cast<IntegerAttr>(a), rawB = dyn_cast<IntegerAttr>(b);
  auto chunkA = dyn_cast<ChunkAttr>(a), chunkB = dyn_cast<ChunkAttr>(b);
  auto fail = [&]() {
    return op->emitOpError("destinations must lie at the same offset within ")
           << n << " bytes (ROCr's broadcast rule), but ";
  };
  if (rawA && rawB) {
    if (rawA.getInt() % n != rawB.getInt() % n)
      return fail() << "0x" << llvm::utohexstr(rawA.getInt()) << " and 0x"
                    << llvm::utohexstr(rawB.getInt()) << " do not";
    return success();
  }
  if (chunkA && chunkB) {
    uint64_t x = chunkA.getChunk(), y = chunkB.getChunk();
    if (!multipleAtEveryChunkSize(program, x > y ? x - y : y - x, n))
      return fail() << "chunks " << x << " and " << y
                    << " are not, at every chunk size the program's "
                       "chunk_align "
                    << program.getChunkAlign() << " allows";
    return success();
  }
  // One raw address, one chunk: both must be at offset 0 within n.
  IntegerAttr raw = rawA ? rawA : rawB;
  ChunkAttr chunk = chunkA ? chunkA : chunkB;
  if (raw.getInt() % n)
    return fail() << "address 0x" << llvm::utohexstr(raw.getInt()) << " is not "
                  << n << "-byte aligned while the other is "
                  << "a buffer chunk";
  if (!multipleAtEveryChunkSize(program, chunk.getChunk(), n))
    return fail() << "chunk " << chunk.getChunk()
                  << " is not, at every chunk size the program's chunk_align "
                  << program.getChunkAlign()
                  << " allows, while the other is an aligned address";
  return success();
}

int64_t maxCopyBytes(Operation *op) {
  const TargetProfile *profile = programOf(op).getProfile();
  return profile ? profile->maxCopyBytes() : kSwapFieldMaxBytes;
}
} // namespace

LogicalResult CopyLinearOp::verify() {
  auto chunks = verifyCount(*this, getCount(), maxCopyBytes(*this));
  if (failed(chunks) ||
      failed(verifyAddress(*this, getSrc(), "source", AddrKind::Data, 1,
                           *chunks)) ||
      failed(verifyAddress(*this, getDst(), "destination", AddrKind::Data, 1,
                           *chunks)))
    return failure();
  return success();
}

LogicalResult CopyBroadcastOp::verify() {
  auto chunks = verifyCount(*this, getCount(), maxCopyBytes(*this));
  if (failed(chunks) ||
      failed(verifyAddress(*this, getSrc(), "source", AddrKind::Data, 1,
                           *chunks)) ||
      failed(verifyAddress(*this, getDst0(), "first destination",
                           AddrKind::Data, 1, *chunks)) ||
      failed(verifyAddress(*this, getDst1(), "second destination",
                           AddrKind::Data, 1, *chunks)))
    return failure();
  if (getDst0() == getDst1())
    return emitOpError("needs two different destinations");
  const TargetProfile *profile = programOf(*this).getProfile();
  return verifySameOffset(*this, getDst0(), getDst1(),
                          profile ? profile->broadcastOffsetBytes : 32);
}

LogicalResult CopySwapOp::verify() {
  const TargetProfile *profile = programOf(*this).getProfile();
  if (profile && !profile->swap)
    return emitOpError("COPY_LINEAR_SWAP is not supported by target '")
           << profile->name << "' ("
           << targetNamesWith([](const TargetProfile &p) { return p.swap; })
           << " support it)";
  int64_t align = profile ? profile->swapAlignBytes : 64;
  auto chunks =
      verifyCount(*this, getCount(),
                  profile ? profile->maxSwapBytes() : kSwapFieldMaxBytes);
  if (failed(chunks) ||
      failed(verifyAddress(*this, getA(), "first operand", AddrKind::Data,
                           align, *chunks)) ||
      failed(verifyAddress(*this, getB(), "second operand", AddrKind::Data,
                           align, *chunks)))
    return failure();
  if (getA() == getB())
    return emitOpError("swaps a range with itself");
  return success();
}

LogicalResult FenceOp::verify() {
  if (getValueAttr().getInt() < 0 || getValueAttr().getInt() > 0xffffffffll)
    return emitOpError("value ")
           << getValueAttr().getInt() << " does not fit in 32 bits";
  return verifyAddress(*this, getAddr(), "address", AddrKind::Flag, 4);
}

LogicalResult AtomicAdd64Op::verify() {
  return verifyAddress(*this, getAddr(), "address", AddrKind::Flag, 8);
}

LogicalResult PollRegMemOp::verify() {
  if (!pollFunctionCode(getFunc()))
    return emitOpError("unknown compare function '")
           << getFunc() << "' (always, lt, le, eq, ne, ge, gt)";
  if (getReferenceAttr().getInt() < 0 ||
      getReferenceAttr().getInt() > 0xffffffffll)
    return emitOpError("reference does not fit in 32 bits");
  if (getMaskAttr().getInt() < 0 || getMaskAttr().getInt() > 0xffffffffll)
    return emitOpError("mask does not fit in 32 bits");
  if (getIntervalAttr().getInt() < 0 || getIntervalAttr().getInt() > 0xffff)
    return emitOpError("interval does not fit in 16 bits");
  if (getRetryAttr().getInt() < 0 || getRetryAttr().getInt() > 0xfff)
    return emitOpError("retry count does not fit in 12 bits");
  return verifyAddress(*this, getAddr(), "address", AddrKind::Flag, 4);
}

LogicalResult NopOp::verify() {
  int64_t extra = getExtraAttr().getInt();
  if (extra < 0 || extra > 0x3fff)
    return emitOpError("extra dword count does not fit in 14 bits");
  const TargetProfile *profile = programOf(*this).getProfile();
  if (profile && extra > profile->maxNopExtra())
    return emitOpError("a NOP of ")
           << extra << " extra dwords needs a NOP count, which target '"
           << profile->name << "' lacks (SDMA firmware feature_version >= 20: "
           << targetNamesWith([](const TargetProfile &p) { return p.nopCount; })
           << ")";
  return success();
}

LogicalResult TimestampOp::verify() {
  return verifyAddress(*this, getAddr(), "address", AddrKind::Timestamp, 32);
}

LogicalResult TrapOp::verify() {
  if (getContextAttr().getInt() < 0 || getContextAttr().getInt() > 0xfffffff)
    return emitOpError("context does not fit in 28 bits");
  return success();
}

#define GET_OP_CLASSES
#include "sdmapkt/IR/SdmaPktOps.cpp.inc"
