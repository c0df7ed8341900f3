//===- SdmaToSdmaPkt.cpp - engine-level schedule -> SDMA packets ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Conversion/Passes.h"
#include "sdma/IR/SdmaOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <map>
#include <numeric>
#include <set>

namespace sdma {
#define GEN_PASS_DEF_CONVERTSDMATOSDMAPKT
#include "sdma/Conversion/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;
using namespace sdma::pkt;

namespace {
using QueueKey = std::pair<int64_t, int64_t>; // (rank, engine)

struct ConvertSdmaToSdmaPktPass
    : sdma::impl::ConvertSdmaToSdmaPktBase<ConvertSdmaToSdmaPktPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// How transfers are split under one target profile.
struct PacketLimits {
  int64_t chunkBytes; // the largest chunk the program supports
  int64_t copyChunks; // the most chunks one COPY_LINEAR moves
  int64_t swapChunks; // the most chunks one COPY_LINEAR_SWAP moves
};

/// The default largest chunk: 64 MiB, or what one copy packet moves where
/// that is less (4 MiB on gfx9).
constexpr int64_t kDefaultMaxChunkBytes = int64_t(64) << 20;

/// max-chunk-bytes and max-packet-bytes (0: the target's defaults) checked
/// against `profile`; errors name the option, the limit and the target.
FailureOr<PacketLimits> packetLimits(ScheduleOp schedule,
                                     const TargetProfile &profile,
                                     int64_t maxChunkBytes,
                                     int64_t maxPacketBytes) {
  int64_t copyBytes = profile.maxCopyBytes();
  int64_t swapBytes = profile.maxSwapBytes();
  if (maxPacketBytes < 0 || (maxPacketBytes > 0 && maxPacketBytes < 64))
    return schedule.emitError("max-packet-bytes must be 0 (the target's "
                              "limit) or at least 64, got ")
           << maxPacketBytes;
  if (maxPacketBytes > 0) {
    copyBytes = std::min(copyBytes, maxPacketBytes);
    swapBytes = std::min(swapBytes, maxPacketBytes);
  }
  int64_t chunkBytes = maxChunkBytes
                           ? maxChunkBytes
                           : std::min(kDefaultMaxChunkBytes, copyBytes & ~63);
  if (chunkBytes < 64 || chunkBytes % 64)
    return schedule.emitError(
        "max-chunk-bytes must be a positive multiple of 64");
  auto why = [&]() {
    return profile.copyCapBytes
               ? std::string("its per-copy cap")
               : std::to_string(profile.countBits) + "-bit count";
  };
  if (chunkBytes > profile.maxCopyBytes())
    return schedule.emitError("max-chunk-bytes ")
           << chunkBytes << " exceeds the " << profile.maxCopyBytes()
           << " bytes one COPY_LINEAR moves on target '" << profile.name
           << "' (" << why() << ")";
  if (chunkBytes > copyBytes)
    return schedule.emitError("max-chunk-bytes ")
           << chunkBytes << " exceeds what one packet can move (" << copyBytes
           << " bytes, max-packet-bytes)";
  bool hasSwap = !schedule.getBody().getOps<SwapOp>().empty();
  if (hasSwap && profile.swap && chunkBytes > swapBytes)
    return schedule.emitError("max-chunk-bytes ")
           << chunkBytes << " exceeds the " << swapBytes
           << " bytes one COPY_LINEAR_SWAP moves on target '" << profile.name
           << "'";
  return PacketLimits{chunkBytes, copyBytes / chunkBytes,
                      swapBytes / chunkBytes};
}

/// The chunk alignment that keeps a broadcast's two destinations at the
/// same offset within the target's broadcast window (32 bytes) at every
/// chunk size: destination chunk offsets d apart need chunk sizes that are
/// multiples of 32 / gcd(32, d) (1 where both write the same offset).
/// Buffer bases are assumed at least 256-byte aligned.
int64_t broadcastChunkAlign(Operation *op, const TargetProfile &profile) {
  auto transfer = cast<TransferOpInterface>(op);
  int64_t d0 = getStaticSlice(transfer, 1)->offset;
  int64_t d1 = getStaticSlice(transfer, 2)->offset;
  uint64_t window = profile.broadcastOffsetBytes;
  uint64_t apart = d0 > d1 ? uint64_t(d0 - d1) : uint64_t(d1 - d0);
  return static_cast<int64_t>(window / std::gcd(window, apart % window));
}
/// An engine-level schedule's ops by queue, in program order, with what the
/// packets need to know of them as a whole.
struct Queues {
  std::map<QueueKey, SmallVector<Operation *>> ops;
  /// The queues that notify each (rank, flag).
  std::map<std::pair<int64_t, int64_t>, std::set<QueueKey>> writers;
  /// The chunk alignment the packets need (all powers of two: the largest).
  int64_t chunkAlign = 1;
};

/// Groups `schedule`'s ops by queue; an op that is not engine-level, or a
/// swap the target cannot do, is an error on it.
FailureOr<Queues> groupByQueue(ScheduleOp schedule,
                               const TargetProfile &profile) {
  Queues queues;
  auto notEngineLevel = [](Operation &op) {
    return op.emitOpError("is not engine-level: run sdma-lower-dma (or "
                          "sdma-assign-engines and sdma-insert-sync) first");
  };
  for (Operation &op : schedule.getBody().getOps()) {
    QueueKey key;
    if (auto transfer = dyn_cast<TransferOpInterface>(&op)) {
      auto engine = op.getAttrOfType<IntegerAttr>("engine");
      if (!engine || !cast<FieldsOpInterface>(&op).hasStaticFields())
        return notEngineLevel(op);
      key = {*getConstantIntValue(transfer.getIssuingRankField()),
             engine.getInt()};
      if (isa<SwapOp>(op) && !profile.swap)
        return op.emitOpError("needs COPY_LINEAR_SWAP, which target '")
               << profile.name << "' does not support ("
               << targetNamesWith([](const TargetProfile &p) { return p.swap; })
               << " do): lower a variant other than swap, or choose one of "
                  "those targets";
      if (isa<SwapOp>(op))
        queues.chunkAlign = std::max(queues.chunkAlign, profile.swapAlignBytes);
      if (isa<BcastOp>(op))
        queues.chunkAlign =
            std::max(queues.chunkAlign, broadcastChunkAlign(&op, profile));
    } else if (auto notify = dyn_cast<NotifyOp>(&op)) {
      key = {notify.getRank(), notify.getEngine()};
      queues.writers[{notify.getTarget(), notify.getFlag()}].insert(key);
    } else if (auto poll = dyn_cast<PollOp>(&op)) {
      key = {poll.getRank(), poll.getEngine()};
    } else {
      return notEngineLevel(op);
    }
    queues.ops[key].push_back(&op);
  }
  return queues;
}

/// The packet program of `schedule` (empty) and its contract: buffers,
/// flags, timestamp slots, chunk alignment and limit, completions per rank,
/// the collective and count tables.
ProgramOp createProgram(OpBuilder &b, ScheduleOp schedule, int64_t ranks,
                        const Queues &queues, const PacketLimits &limits,
                        const TargetProfile &profile, bool timestamps) {
  SmallVector<Attribute> names, sizes;
  for (BlockArgument buffer : schedule.getBufferArgs()) {
    names.push_back(b.getStringAttr(schedule.getBufferName(buffer)));
    sizes.push_back(
        b.getI64IntegerAttr(*schedule.getBufferChunks(buffer, ranks)));
  }
  int64_t numFlags = 2;
  std::map<int64_t, int64_t> queuesPerRank;
  SmallVector<int64_t> done(ranks, 0);
  for (auto &[key, ops] : queues.ops) {
    ++queuesPerRank[key.first];
    for (Operation *op : ops) {
      if (auto notify = dyn_cast<NotifyOp>(op)) {
        numFlags = std::max<int64_t>(numFlags, notify.getFlag() + 1);
        if (notify.getFlag() == 1)
          ++done[notify.getTarget()];
      }
      if (auto poll = dyn_cast<PollOp>(op))
        numFlags = std::max<int64_t>(numFlags, poll.getFlag() + 1);
    }
  }
  int64_t timestampSlots = 0;
  if (timestamps)
    for (auto &[rank, n] : queuesPerRank)
      timestampSlots = std::max(timestampSlots, 2 * n);

  auto program = ProgramOp::create(
      b, schedule.getLoc(), schedule.getSymName(), ranks, b.getArrayAttr(names),
      b.getArrayAttr(sizes), numFlags, timestampSlots, queues.chunkAlign,
      limits.chunkBytes, b.getI64ArrayAttr(done), profile.name);
  if (std::optional<StringRef> kind = schedule.getCollective()) {
    auto name = [&](unsigned index) {
      return b.getStringAttr(
          schedule.getBufferName(schedule.getBufferArgs()[index]));
    };
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("kind", b.getStringAttr(*kind)),
        b.getNamedAttr("input", name(*schedule.getCollectiveInput())),
        b.getNamedAttr("output", name(*schedule.getCollectiveOutput()))};
    if (std::optional<int64_t> root = schedule.getRoot())
      fields.push_back(b.getNamedAttr("root", b.getI64IntegerAttr(*root)));
    // An all-to-allv whose counts the host knew (sdma-resolve-counts): its
    // count tables, which the packets do not touch but the host checks.
    if (std::optional<unsigned> send = schedule.getCollectiveSendCounts())
      fields.push_back(b.getNamedAttr("send_counts", name(*send)));
    if (std::optional<unsigned> recv = schedule.getCollectiveRecvCounts())
      fields.push_back(b.getNamedAttr("recv_counts", name(*recv)));
    if (kind->starts_with("all_to_allv_2d")) {
      fields.push_back(b.getNamedAttr(
          "experts",
          b.getI64IntegerAttr(schedule.getExpertCount().value_or(1))));
      fields.push_back(b.getNamedAttr(
          "major_align", b.getI64IntegerAttr(schedule.getMajorAlignment())));
    }
    program->setAttr("sdmapkt.collective", b.getDictionaryAttr(fields));
  }
  if (std::optional<ArrayRef<int64_t>> tables = schedule.getCountBuffers())
    program->setAttr("sdmapkt.count_buffers", b.getDenseI64ArrayAttr(*tables));
  program.getBody().emplaceBlock();
  return program;
}

/// How one queue's ops become packets.
struct QueueEmitter {
  OpBuilder &b;
  ScheduleOp schedule;
  const Queues &queues;
  const PacketLimits &limits;
  bool fenceCompletion, timestamps, trap;

  ChunkAttr chunk(const StaticSlice &s, int64_t offset) {
    return ChunkAttr::get(b.getContext(), schedule.getBufferName(s.buffer),
                          s.rank, s.offset + offset);
  }
  FlagAttr flag(int64_t rank, int64_t slot) {
    return FlagAttr::get(b.getContext(), rank, slot);
  }
  /// Split transfers: packet i moves chunks [i x per, ...) of each slice.
  static void pieces(int64_t count, int64_t per,
                     llvm::function_ref<void(int64_t, int64_t)> emit) {
    for (int64_t at = 0; at < count; at += per)
      emit(at, std::min(per, count - at));
  }
  /// Appends queue `key`'s packets (its ops in order) to `program`.
  void emit(ProgramOp program, QueueKey key, ArrayRef<Operation *> ops);
};

void QueueEmitter::emit(ProgramOp program, QueueKey key,
                        ArrayRef<Operation *> ops) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = key.first;
  b.setInsertionPointToEnd(&program.getBody().front());
  auto queue = QueueOp::create(b, schedule.getLoc(), rank, key.second);
  queue.getBody().emplaceBlock();
  b.setInsertionPointToEnd(&queue.getBody().front());
  int64_t localIndex = 0;
  for (auto &[other, unused] : queues.ops)
    if (other.first == rank && other < key)
      ++localIndex;
  std::map<std::pair<int64_t, int64_t>, int64_t> sent;
  bool started = false;
  auto startTimestamp = [&] {
    if (timestamps && !started)
      TimestampOp::create(b, schedule.getLoc(),
                          TimestampAttr::get(ctx, rank, 2 * localIndex));
    started = true;
  };
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    // The launch trigger stays the first packet; the clock starts after.
    auto poll = dyn_cast<PollOp>(op);
    if (!(poll && poll.getFlag() == 0))
      startTimestamp();
    if (isa<CopyOp>(op)) {
      auto t = cast<TransferOpInterface>(op);
      StaticSlice src = *getStaticSlice(t, 0);
      StaticSlice dst = *getStaticSlice(t, 1);
      pieces(src.count, limits.copyChunks, [&](int64_t at, int64_t n) {
        CopyLinearOp::create(b, loc, chunk(src, at), chunk(dst, at),
                             ChunksAttr::get(ctx, n));
      });
    } else if (isa<BcastOp>(op)) {
      auto t = cast<TransferOpInterface>(op);
      StaticSlice src = *getStaticSlice(t, 0);
      StaticSlice d0 = *getStaticSlice(t, 1);
      StaticSlice d1 = *getStaticSlice(t, 2);
      pieces(src.count, limits.copyChunks, [&](int64_t at, int64_t n) {
        CopyBroadcastOp::create(b, loc, chunk(src, at), chunk(d0, at),
                                chunk(d1, at), ChunksAttr::get(ctx, n));
      });
    } else if (isa<SwapOp>(op)) {
      auto t = cast<TransferOpInterface>(op);
      StaticSlice a = *getStaticSlice(t, 0);
      StaticSlice c = *getStaticSlice(t, 1);
      pieces(a.count, limits.swapChunks, [&](int64_t at, int64_t n) {
        CopySwapOp::create(b, loc, chunk(a, at), chunk(c, at),
                           ChunksAttr::get(ctx, n));
      });
    } else if (auto notify = dyn_cast<NotifyOp>(op)) {
      std::pair<int64_t, int64_t> target{notify.getTarget(), notify.getFlag()};
      int64_t k = ++sent[target];
      // One writer of the flag: its k-th notify may set it to k (a fence
      // packet); several add.
      if (fenceCompletion && queues.writers.at(target).size() == 1)
        pkt::FenceOp::create(b, loc, flag(target.first, target.second), k);
      else
        AtomicAdd64Op::create(b, loc, flag(target.first, target.second), 1);
    } else if (poll) {
      PollRegMemOp::create(b, loc, flag(rank, poll.getFlag()), "ge",
                           poll.getValue(), 0xffffffffll, 10, kRetryForever);
    }
  }
  startTimestamp();
  if (timestamps)
    TimestampOp::create(b, schedule.getLoc(),
                        TimestampAttr::get(ctx, rank, 2 * localIndex + 1));
  if (trap)
    TrapOp::create(b, schedule.getLoc(),
                   static_cast<int64_t>(std::distance(queues.ops.begin(),
                                                      queues.ops.find(key))));
}
} // namespace

void ConvertSdmaToSdmaPktPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() != 1) {
    module.emitError("expected exactly one sdma.schedule, found ")
        << schedules.size();
    return signalPassFailure();
  }
  ScheduleOp schedule = schedules.front();
  if (completion != "atomic" && completion != "fence") {
    schedule.emitError("completion must be 'atomic' or 'fence', got '")
        << completion << "'";
    return signalPassFailure();
  }
  if (!schedule.getRanks()) {
    schedule.emitOpError("has no fixed rank count: run sdma-lower-dma first");
    return signalPassFailure();
  }
  int64_t ranks = *schedule.getRanks();
  const TargetProfile *profile = findTargetProfile(target);
  if (!profile) {
    schedule.emitError("unknown target '")
        << target << "' (" << targetNameList() << ")";
    return signalPassFailure();
  }
  FailureOr<PacketLimits> limits =
      packetLimits(schedule, *profile, maxChunkBytes, maxPacketBytes);
  if (failed(limits))
    return signalPassFailure();
  FailureOr<Queues> queues = groupByQueue(schedule, *profile);
  if (failed(queues))
    return signalPassFailure();

  OpBuilder b(schedule);
  ProgramOp program =
      createProgram(b, schedule, ranks, *queues, *limits, *profile, timestamps);
  QueueEmitter emitter{
      b, schedule, *queues, *limits, completion == "fence", timestamps, trap};
  for (auto &[key, ops] : queues->ops)
    emitter.emit(program, key, ops);
  schedule.erase();
  if (failed(mlir::verify(program)))
    return signalPassFailure();
}
