//===- TranslateToHIP.cpp - flat schedules as load/store kernels ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every rank's part of the schedule becomes a list of steps:
//   PHASE  ops [a, a + b)  data ops that may run concurrently: all blocks of
//                          the rank share their 16-byte units; a data op
//                          that conflicts with an earlier op of the same
//                          engine since the last SYNC (sdma's engine order)
//                          starts a new phase after a SYNC
//   SYNC                   the rank's blocks meet (a fence on the rank, and
//                          before every signal and barrier)
//   SIGNAL rank a, slot b  system-scope fence, then flag b of rank a += 1
//   WAIT   slot a, k = b   every block spins until its flag a >= k (bounded)
//   BARRIER slot a, k = b  every rank adds 1 to every rank's slot a, waits
// sdma.reduce ops of one phase into the same destination slice (they
// accumulate) become one row: the destination and a list of sources in
// sdma_rsrc, added in one pass in ascending (rank, buffer, offset) order.
// The kernel is generic; the schedule lives in constant tables, and the
// chunk size, buffer addresses and run counter are arguments, so one
// compiled kernel serves every message size. Flags only grow: run n waits
// for n * (signals per run) + k, so nothing is reset between runs.
//
//===----------------------------------------------------------------------===//

#include "FuseReductions.h"
#include "LowLatency.h"
#include "Specialise.h"
#include "sdma/Analysis/CountForwarding.h"
#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/Manifest.h"
#include "sdma/Target/Verified.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

using namespace mlir;
using namespace sdma;
using json = nlohmann::ordered_json;
using namespace sdma::hip;

namespace {

// Per side: table or -1, rank, index, form, and where the phase's scan of
// the table puts its offsets in shared memory (-1: the kernel sums).
constexpr int kVopStride = 10;
// A phase's scanned count tables (sdma_vtabs): rank, buffer, entries, form,
// offset in the phase's shared memory; and the most words of it one phase
// may take (32 KiB; LdstPhases.hip's sdma_phase).
constexpr int kScanRow = 5;
/// Entries per segment of a packed (form 0) table's scan; an expert-major
/// table's segment is one group of ranks (the kernel's SDMA_SCAN_SEG,
/// which the emitter defines from this).
constexpr int64_t kScanSeg = 16;
constexpr int64_t kScanCacheWords = 4096;

/// The device code every generated file carries: LdstKernel.hip,
/// LdstReduce.hip, LdstCounts.hip, LdstLowLatency.hip and LdstPhases.hip
/// after their banners,
/// embedded at build time (adjacent string literals: one text). (The order of
/// the parts is the order of the code: not sorted.)
// clang-format off
constexpr const char *kKernelSource =
#include "LdstKernel.hip.inc"
#include "LdstReduce.hip.inc"
#include "LdstCounts.hip.inc"
#include "LdstLowLatency.hip.inc"
#include "LdstPhases.hip.inc"
    ;
// clang-format on

/// The chunks each engine's ops touch within one phase of a rank, to keep
/// the program order of ops on one engine where it matters. Per (engine,
/// rank, buffer), the union of the chunks read and of those written, as
/// disjoint intervals: O(log n) per op.
class EngineFootprints {
public:
  /// True when `op` reads or writes chunks that an op already added on
  /// `engine` writes, or writes chunks such an op reads.
  bool conflicts(int64_t engine, TransferOpInterface op) const {
    for (const Access &a : accessesOf(op)) {
      auto it = touched.find({engine, a.rank, a.buffer});
      if (it == touched.end())
        continue;
      if (overlaps(it->second.written, a) ||
          (a.write && overlaps(it->second.read, a)))
        return true;
    }
    return false;
  }
  void add(int64_t engine, TransferOpInterface op) {
    for (const Access &a : accessesOf(op)) {
      Touched &t = touched[{engine, a.rank, a.buffer}];
      insert(a.write ? t.written : t.read, a.begin, a.end);
    }
  }
  void clear() { touched.clear(); }

private:
  struct Access {
    int64_t rank;
    unsigned buffer;
    int64_t begin, end;
    bool write;
  };
  /// Disjoint, non-adjacent [begin, end) intervals keyed by begin.
  using Intervals = std::map<int64_t, int64_t>;
  struct Touched {
    Intervals read, written;
  };

  static bool overlaps(const Intervals &set, const Access &a) {
    auto it = set.lower_bound(a.end); // first interval starting at/after end
    return it != set.begin() && std::prev(it)->second > a.begin;
  }
  static void insert(Intervals &set, int64_t begin, int64_t end) {
    auto it = set.upper_bound(begin);
    if (it != set.begin() && std::prev(it)->second >= begin)
      --it;
    while (it != set.end() && it->first <= end) {
      begin = std::min(begin, it->first);
      end = std::max(end, it->second);
      it = set.erase(it);
    }
    set.emplace(begin, end);
  }
  /// Every slice as the kernel accesses it: a copy onto itself included (a
  /// kernel reads and writes it, so it is not the verifier's pure read).
  static SmallVector<Access> accessesOf(TransferOpInterface op) {
    SmallVector<Access> result;
    for (unsigned i = 0, e = op.getNumSlices(); i < e; ++i) {
      StaticSlice s = *getStaticSlice(op, i);
      unsigned buffer = cast<BlockArgument>(s.buffer).getArgNumber();
      if (op.isSliceRead(i))
        result.push_back({s.rank, buffer, s.offset, s.offset + s.count, false});
      if (op.isSliceWritten(i))
        result.push_back({s.rank, buffer, s.offset, s.offset + s.count, true});
    }
    return result;
  }
  std::map<std::tuple<int64_t, int64_t, unsigned>, Touched> touched;
};

class HIPEmitter {
public:
  HIPEmitter(ScheduleOp schedule, const HIPOptions &options)
      : schedule(schedule), ranks(*schedule.getRanks()), steps(ranks),
        fuse(options.fuseReductions), specialise(options.specialise) {}
  LogicalResult emit(raw_ostream &os);

private:
  LogicalResult collect();
  void planForwarding();
  int64_t planScans(std::vector<int64_t> &rows, std::vector<int> &begin);
  std::vector<int64_t> copyvRow(CopyvOp op);
  void notePeerCounts(CopyvOp op);
  LogicalResult checkReduceTypes();
  int slotFor(int64_t from, int64_t tag);

  ScheduleOp schedule;
  int64_t ranks;
  std::vector<int64_t> ops; // kOpStride per op
  /// Per sdma.copyv: the prefix tables of its sides (buffer or -1, rank,
  /// index), kVopStride each; its op row points here.
  std::vector<int64_t> vops;
  /// Forwarded sides (CountForwarding.h): the entries each forwarded table
  /// row's scan needs, by (rank, buffer); then, in sdma_fwd, each row's
  /// entries as (rank * buffers + buffer) << 32 | entry of their source.
  std::optional<CountForwarding> forwarding;
  /// Whether some copyv reads a count table that another rank's launch
  /// copies in (its caller's counts: forwarded, or a pull's count and
  /// offsets), and whether some copyv's count lives on a rank other than
  /// the one issuing it (each rank then checks every count it holds).
  bool peerCounts = false, peerCountChecks = false;
  std::map<std::pair<int64_t, int64_t>, int64_t> forwardedRows;
  std::vector<int64_t> fwd;
  /// sdma.reduce sources (rank, buffer, offset), 3 each, by row.
  std::vector<int64_t> rsrc;
  size_t maxSources = 0, maxDests = 0;
  /// The element type and operator codes of the schedule's reduces.
  int reduceType = -1, reduceOp = -1;
  std::vector<std::vector<Step>> steps;
  std::map<int64_t, int> tagIndex;
  std::map<std::pair<int, int64_t>, int> signalsTo; // (slot, rank)
  std::map<std::pair<int, int64_t>, int> waitsOn;   // (slot, rank)
  int barriers = 0;
  bool fuse, specialise;
};

} // namespace

std::vector<int64_t> HIPEmitter::copyvRow(CopyvOp op) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  auto bufferOf = [&](Value buffer) -> int64_t {
    return cast<BlockArgument>(buffer).getArgNumber() - 1;
  };
  std::vector<int64_t> row = {3,
                              field(CopyvOp::kSourceRank),
                              bufferOf(op.getSource()),
                              field(CopyvOp::kSourceOffset),
                              op.getMaxCount(),
                              field(CopyvOp::kTargetRank),
                              bufferOf(op.getTarget()),
                              field(CopyvOp::kTargetOffset),
                              field(CopyvOp::kCountRank),
                              bufferOf(op.getCounts()),
                              field(CopyvOp::kCountIndex),
                              static_cast<int64_t>(vops.size() / kVopStride)};
  for (unsigned side = 0; side < 2; ++side) {
    unsigned rank =
        side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
    bool packed = op.getPacked()[side];
    Value table = side ? op.getTargetPrefix() : op.getSourcePrefix();
    // A forwarded side's form word is its form + 4; its rank word becomes
    // its row's place in sdma_fwd (planForwarding).
    bool forwarded = op.isForwarded(side);
    if (forwarded) {
      int64_t &end = forwardedRows[{field(rank), bufferOf(table)}];
      end = std::max(end, field(rank + 1));
    }
    llvm::append_range(
        vops, std::initializer_list<int64_t>{
                  packed ? bufferOf(table) : -1, packed ? field(rank) : 0,
                  packed ? field(rank + 1) : 0, getTableCode(op, side), -1});
  }
  return row;
}

/// Sets peerCounts and peerCountChecks for `op`. A count table some op
/// writes is ordered by the schedule; one that none writes is the caller's,
/// copied in by its rank's launch before that rank arrives anywhere.
void HIPEmitter::notePeerCounts(CopyvOp op) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  int64_t issuer = field(op.getIssuingRankField());
  auto copiedIn = [&](Value table) {
    return llvm::none_of(schedule.getBody().getOps<CopyOp>(),
                         [&](CopyOp c) { return c.getTarget() == table; });
  };
  if (field(CopyvOp::kCountRank) != issuer) {
    peerCountChecks = true;
    peerCounts |= copiedIn(op.getCounts());
  }
  for (unsigned side = 0; side < 2; ++side) {
    Value table = side ? op.getTargetPrefix() : op.getSourcePrefix();
    unsigned rank =
        side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
    peerCounts |=
        op.isForwarded(side) ||
        (op.getPacked()[side] && field(rank) != issuer && copiedIn(table));
  }
}

/// sdma_fwd: each forwarded row's entries where the count copies read
/// them; every forwarded side's rank word set to its row's first.
void HIPEmitter::planForwarding() {
  std::map<std::pair<int64_t, int64_t>, int64_t> place;
  const int64_t buffers = schedule.getBufferArgs().size();
  for (auto [key, end] : forwardedRows) {
    place[key] = fwd.size();
    for (const CountEntry &e : forwarding->view(key.first, key.second, end))
      fwd.push_back(((e.rank * buffers + e.buffer) << 32) | e.index);
  }
  for (size_t at = 0; at < vops.size(); at += kVopStride / 2)
    if (vops[at] >= 0 && vops[at + 3] >= 4)
      vops[at + 1] = place.at({vops[at + 1], vops[at]});
}

/// The count tables each phase's sdma.copyv ops take packed offsets from
/// (forms 0 and 1; form 2 reads one entry), scanned once per phase into
/// shared memory by every block (LdstCounts.hip's sdma_scan) instead of
/// summed per op: rows (kScanRow each) per global step in `begin`, every
/// side's vops word 4 set to its table's place. A phase whose tables pass
/// kScanCacheWords keeps the per-op sums. Returns the most words a phase
/// takes.
int64_t HIPEmitter::planScans(std::vector<int64_t> &rows,
                              std::vector<int> &begin) {
  int64_t most = 0;
  begin.assign(1, 0);
  for (const std::vector<Step> &rankSteps : steps)
    for (const Step &step : rankSteps) {
      // (rank, buffer, form) -> the highest index read; the sides.
      std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> tables;
      std::vector<size_t> sides;
      for (int64_t i = 0; step.kind == kPhase && i < step.b; ++i) {
        const int64_t *row = &ops[(step.a + i) * kOpStride];
        if (row[0] != 3)
          continue;
        for (int side = 0; side < 2; ++side) {
          size_t at = row[11] * kVopStride + side * (kVopStride / 2);
          if (vops[at] < 0 || vops[at + 3] == 2)
            continue;
          int64_t &last = tables[{vops[at + 1], vops[at], vops[at + 3]}];
          last = std::max(last, vops[at + 2]);
          sides.push_back(at);
        }
      }
      int64_t words = 0;
      std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> place;
      for (auto &[key, entries] : tables) {
        int64_t seg = (std::get<2>(key) & 3) == 1 ? ranks : kScanSeg;
        place[key] = words;
        words += entries + 1 + (entries + seg - 1) / seg;
      }
      if (!tables.empty() && words <= kScanCacheWords) {
        for (auto &[key, entries] : tables)
          llvm::append_range(rows, std::initializer_list<int64_t>{
                                       std::get<0>(key), std::get<1>(key),
                                       entries, std::get<2>(key), place[key]});
        for (size_t at : sides)
          vops[at + 4] = place[{vops[at + 1], vops[at], vops[at + 3]}];
        most = std::max(most, words);
      }
      begin.push_back(rows.size() / kScanRow);
    }
  return most;
}

int HIPEmitter::slotFor(int64_t from, int64_t tag) {
  auto [it, inserted] = tagIndex.try_emplace(tag, tagIndex.size());
  return it->second * ranks + from;
}

/// SDMA_REDUCE_TYPE of an element type (LdstReduce.hip lists them).
static int getReduceTypeCode(Type type) {
  if (type.isF32())
    return 0;
  if (type.isF16())
    return 1;
  if (type.isBF16())
    return 2;
  if (type.isF64())
    return 7;
  unsigned width = type.getIntOrFloatBitWidth();
  bool isUnsigned = type.isUnsignedInteger();
  if (width == 8)
    return isUnsigned ? 9 : 8;
  if (width == 32)
    return isUnsigned ? 5 : 3;
  return isUnsigned ? 6 : 4;
}

/// The kernel computes in one element type with one operator per schedule
/// (SDMA_REDUCE_TYPE, SDMA_REDUCE_OP); a runtime may recompile it for
/// another pair, which the proof (operator- and type-agnostic) covers.
LogicalResult HIPEmitter::checkReduceTypes() {
  WalkResult result = schedule.walk([&](sdma::ReduceOp op) {
    int code = getReduceTypeCode(schedule.getBufferElementType(op.getTarget()));
    int kind = llvm::find(sdma::ReduceOp::getKinds(), op.getKind()) -
               sdma::ReduceOp::getKinds().begin();
    if (reduceType < 0)
      reduceType = code, reduceOp = kind;
    if (code == reduceType && kind == reduceOp)
      return WalkResult::advance();
    op.emitOpError("uses a different element type or operator than the "
                   "schedule's other reduces; the load/store kernel computes "
                   "in one type with one operator");
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

LogicalResult HIPEmitter::collect() {
  if (failed(checkReduceTypes()))
    return failure();
  FailureOr<CountForwarding> forwarded = CountForwarding::build(schedule);
  if (failed(forwarded))
    return failure();
  forwarding = std::move(*forwarded);
  // Data ops go to per-rank phases, kept open until an ordering step.
  std::vector<std::vector<RawStep>> raw(ranks);
  // What each engine of a rank touched since the rank's last sync (a wait
  // is no sync: blocks pass it one by one, the previous phase may still
  // run in other blocks).
  std::vector<EngineFootprints> engineFootprints(ranks);
  auto addRaw = [&](int64_t rank, Step step) {
    if (step.kind == kSync)
      engineFootprints[rank].clear();
    if (step.kind == kSync && !raw[rank].empty() &&
        raw[rank].back().step.kind == kSync)
      return;
    raw[rank].push_back({step, {}});
  };

  for (Operation &op : schedule.getBody().getOps()) {
    if (auto transfer = dyn_cast<TransferOpInterface>(&op)) {
      if (!cast<FieldsOpInterface>(&op).hasStaticFields())
        return op.emitOpError("is not flat: run sdma-unroll before "
                              "--sdma-to-hip");
      auto slice = [&](unsigned i) { return *getStaticSlice(transfer, i); };
      auto bufferOf = [&](const StaticSlice &s) -> int64_t {
        return cast<BlockArgument>(s.buffer).getArgNumber() - 1;
      };
      StaticSlice s0 = slice(0), s1 = slice(1);
      std::vector<int64_t> row(kOpStride, 0);
      row[0] = isa<CopyOp>(op)           ? 0
               : isa<BcastOp>(op)        ? 1
               : isa<sdma::ReduceOp>(op) ? 4
                                         : 2;
      row[1] = s0.rank, row[2] = bufferOf(s0), row[3] = s0.offset;
      row[4] = s0.count;
      row[5] = s1.rank, row[6] = bufferOf(s1), row[7] = s1.offset;
      if (isa<BcastOp>(op)) {
        StaticSlice s2 = slice(2);
        row[8] = s2.rank, row[9] = bufferOf(s2), row[10] = s2.offset;
      }
      // The unit of offsets and counts: a chunk, or 8 bytes in count tables.
      row[11] = schedule.isCountBuffer(s0.buffer) ? 8 : 0;
      int64_t rank = *getConstantIntValue(transfer.getIssuingRankField());
      // Ops on one engine run in program order: one that touches what an
      // earlier op of the same engine touched since the last sync (one of
      // the two writing) starts a new phase after a sync.
      auto engine = op.getAttrOfType<IntegerAttr>("engine");
      bool open = !raw[rank].empty() && raw[rank].back().step.kind == kPhase;
      if (engine &&
          engineFootprints[rank].conflicts(engine.getInt(), transfer)) {
        addRaw(rank, {kSync, 0, 0});
        open = false;
      }
      if (!open)
        raw[rank].push_back({{kPhase, 0, 0}, {}});
      if (engine)
        engineFootprints[rank].add(engine.getInt(), transfer);
      RawStep &phase = raw[rank].back();
      if (isa<sdma::ReduceOp>(op)) {
        // One row per destination slice: row[7] names its source list
        // until the lists are laid out below.
        std::array<int64_t, 4> key = {s0.rank, bufferOf(s0), s0.offset,
                                      s0.count};
        auto [it, added] = phase.groups.try_emplace(key, phase.sources.size());
        if (added) {
          phase.sources.emplace_back();
          phase.dests.emplace_back();
          row[5] = reduceOp, row[6] = reduceType;
          row[7] = it->second;
          llvm::append_range(phase.opRows, row);
        }
        phase.sources[it->second].push_back({s1.rank, bufferOf(s1), s1.offset});
        continue;
      }
      llvm::append_range(phase.opRows, row);
    } else if (auto copyv = dyn_cast<CopyvOp>(&op)) {
      if (!copyv.hasStaticFields())
        return op.emitOpError("is not flat: run sdma-unroll before "
                              "--sdma-to-hip");
      int64_t rank = *copyv.getConstantField(copyv.getIssuingRankField());
      std::vector<int64_t> row = copyvRow(copyv);
      notePeerCounts(copyv);
      // On an engine, program order: alone between two syncs.
      bool engine = op.hasAttr("engine");
      if (engine)
        addRaw(rank, {kSync, 0, 0});
      if (engine || raw[rank].empty() || raw[rank].back().step.kind != kPhase)
        raw[rank].push_back({{kPhase, 0, 0}, {}});
      llvm::append_range(raw[rank].back().opRows, row);
      if (engine)
        addRaw(rank, {kSync, 0, 0});
    } else if (auto fence = dyn_cast<FenceOp>(&op)) {
      if (!fence.hasStaticFields())
        return op.emitOpError("is not flat: run sdma-unroll before "
                              "--sdma-to-hip");
      for (int64_t r = 0; r < ranks; ++r)
        if (!fence.hasRank() || *fence.getConstantField(0) == r)
          addRaw(r, {kSync, 0, 0});
    } else if (auto signal = dyn_cast<SignalOp>(&op)) {
      if (!signal.hasStaticFields())
        return op.emitOpError("is not flat: run sdma-unroll before "
                              "--sdma-to-hip");
      int64_t from = *signal.getConstantField(0);
      int64_t to = *signal.getConstantField(1);
      int slot = slotFor(from, signal.getTag());
      ++signalsTo[{slot, to}];
      addRaw(from, {kSync, 0, 0});
      addRaw(from, {kSignal, static_cast<int>(to), slot});
    } else if (auto wait = dyn_cast<WaitOp>(&op)) {
      if (!wait.hasStaticFields())
        return op.emitOpError("is not flat: run sdma-unroll before "
                              "--sdma-to-hip");
      int64_t at = *wait.getConstantField(0);
      int64_t from = *wait.getConstantField(1);
      int slot = slotFor(from, wait.getTag());
      int k = ++waitsOn[{slot, at}];
      addRaw(at, {kWait, slot, k});
    } else if (isa<BarrierOp>(op)) {
      ++barriers;
      for (int64_t r = 0; r < ranks; ++r) {
        addRaw(r, {kSync, 0, 0});
        // The slot is fixed once all tags are known (see below).
        addRaw(r, {kBarrier, -1, static_cast<int>(barriers * ranks)});
      }
    } else {
      return op.emitOpError("is not part of a flat schedule: run sdma-unroll "
                            "(and sdma-verify) before --sdma-to-hip");
    }
  }
  for (auto &[key, k] : waitsOn) {
    auto it = signalsTo.find(key);
    if (it == signalsTo.end() || it->second < k)
      return schedule.emitOpError("has a wait that no signal satisfies: run "
                                  "sdma-verify before --sdma-to-hip");
  }
  int barrierSlot = static_cast<int>(tagIndex.size() * ranks);
  for (int64_t r = 0; r < ranks; ++r) {
    if (fuse)
      fuseReductions(raw[r]);
    for (RawStep &rs : raw[r]) {
      if (rs.step.kind == kBarrier)
        rs.step.a = barrierSlot;
      if (rs.step.kind == kPhase) {
        for (size_t i = 0; i < rs.opRows.size(); i += kOpStride) {
          if (rs.opRows[i] != 4)
            continue;
          // Every operand in (rank, buffer, offset) order, the
          // destination's own value among them where the row reads it
          // (the kernel then starts from the first operand): a slice
          // reduced on several ranks, as one-shot and in-place all-reduce
          // do, gets the same bits on each, whichever rank's value it
          // started from. Then the extra destinations.
          size_t group = rs.opRows[i + 7];
          auto &list = rs.sources[group];
          if (!rs.opRows[i + 9])
            list.push_back(
                {rs.opRows[i + 1], rs.opRows[i + 2], rs.opRows[i + 3]});
          rs.opRows[i + 9] = 1;
          llvm::sort(list);
          rs.opRows[i + 7] = rsrc.size() / 3;
          rs.opRows[i + 8] = list.size();
          rs.opRows[i + 10] = rs.dests[group].size();
          maxSources = std::max(maxSources, list.size());
          maxDests = std::max(maxDests, rs.dests[group].size());
          for (const auto &source : list)
            llvm::append_range(rsrc, source);
          for (const auto &dest : rs.dests[group])
            llvm::append_range(rsrc, dest);
        }
        rs.step.a = ops.size() / kOpStride;
        rs.step.b = rs.opRows.size() / kOpStride;
        llvm::append_range(ops, rs.opRows);
      }
      steps[r].push_back(rs.step);
    }
  }
  return success();
}

LogicalResult HIPEmitter::emit(raw_ostream &os) {
  if (failed(collect()))
    return failure();
  int64_t numSlots = tagIndex.size() * ranks + (barriers ? 1 : 0);
  // Reads of the counts other ranks copy in: where a launch has no job
  // barriers (one launch runs every rank), a barrier of their own, on the
  // last slot, after the ranks' counts are copied in and checked
  // (LdstPhases.hip's sdma_ldst).
  int64_t peerSlot = peerCounts ? numSlots++ : -1;
  int64_t numBuffers = schedule.getBufferArgs().size();

  // Increments per run of every (rank, slot): waits in run n wait for
  // n * that + k, so flags never need resetting.
  int64_t slots = std::max<int64_t>(numSlots, 1);
  std::vector<unsigned long long> perEpoch(ranks * slots, 0);
  for (auto &[key, count] : signalsTo)
    perEpoch[key.second * slots + key.first] = count;
  if (barriers)
    for (int64_t r = 0; r < ranks; ++r)
      perEpoch[r * slots + tagIndex.size() * ranks] = barriers * ranks;
  if (peerSlot >= 0)
    for (int64_t r = 0; r < ranks; ++r)
      perEpoch[r * slots + peerSlot] = ranks;

  // sdma.copyv's offset tables, scanned once per phase.
  std::vector<int64_t> scanRows;
  std::vector<int> scanBegin;
  planForwarding();
  int64_t scanWords = vops.empty() ? 0 : planScans(scanRows, scanBegin);

  // Each rank's steps as code (Specialise.h), or the step table.
  std::optional<SpecialisedCode> specialised;
  if (specialise)
    specialised = specialiseRanks(steps, ops, perEpoch, slots);

  json meta{{"format", "sdma.ldst"},
            {"version", kLdstVersion},
            {"schedule", schedule.getSymName().str()},
            {"ranks", ranks},
            {"entry", "sdma_ldst"},
            {"flag_slots", std::max<int64_t>(numSlots, 1)},
            {"op_stride", kOpStride},
            {"kernel", specialised ? "specialised" : "table"}};
  meta["buffers"] = buffersToJSON(schedule);
  meta["collective"] = collectiveToJSON(schedule);
  if (reduceOp >= 0 && meta["collective"].is_object())
    meta["collective"]["op"] = sdma::ReduceOp::getKinds()[reduceOp].str();
  json phases = json::array();
  for (int64_t r = 0; r < ranks; ++r) {
    int64_t n = 0;
    for (const Step &s : steps[r])
      n += s.kind == kPhase;
    phases.push_back(n);
  }
  meta["phases_per_rank"] = std::move(phases);
  // Small calls of a communicator without a job barrier (LowLatency.h).
  std::string noLowLatency;
  std::optional<LowLatencyTables> lowLatency =
      vops.empty() ? planLowLatency(ranks, steps, ops, rsrc, noLowLatency)
                   : std::nullopt;
  if (lowLatency)
    meta["low_latency"] = {{"pair_chunks", lowLatency->pairChunks}};

  os << "// sdma-ldst: "
     << meta.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  os << "// Load/store kernel for schedule @" << schedule.getSymName() << " ("
     << ranks << " ranks), generated by sdma-translate --sdma-to-hip.\n"
     << "// Compile it after a prelude that defines the SDMA_* macros "
        "(runtime/include/sdma/runtime/LdstPrelude.h).\n\n";
  os << "#define SDMA_RANKS " << ranks << "\n#define SDMA_BUFFERS "
     << numBuffers << "\n#define SDMA_FLAG_SLOTS "
     << std::max<int64_t>(numSlots, 1) << "\n#define SDMA_OP_STRIDE "
     << kOpStride << "\n";
  if (specialised)
    os << specialised->defines;
  if (lowLatency)
    os << "#define SDMA_LL 1\n";
  // sdma.copyv resolves its counts and prefix sums with loads from other
  // ranks: one thread per op, all ops at once (staged) beats every thread
  // resolving every op in turn.
  if (!vops.empty()) {
    os << "#define SDMA_COUNT_OPS 1\n#define SDMA_VOP_STRIDE " << kVopStride
       << "\n#ifndef SDMA_STAGED_OPS\n#define SDMA_STAGED_OPS 1\n#endif\n";
    // An expert-major offset pads each group of SDMA_RANKS counts.
    os << "#define SDMA_MAJOR_ALIGN " << schedule.getMajorAlignment() << "\n";
    if (forwarding->used())
      os << "#define SDMA_FORWARDED 1\n";
    if (peerSlot >= 0)
      os << "#define SDMA_PEER_COUNTS_SLOT " << peerSlot << "\n";
    if (peerCountChecks)
      os << "#define SDMA_PEER_COUNT_CHECKS 1\n";
    if (scanWords)
      os << "#define SDMA_PREFIX_CACHE " << scanWords
         << "\n#define SDMA_SCAN_SEG " << kScanSeg << "\n";
    // The count tables a communicator's call copies in (its send counts)
    // and out (its receive counts, then with SDMA_COUNTS_OFFSETS the
    // offsets of the segments they count: 1 packed, 2 expert-major).
    std::optional<unsigned> send = schedule.getCollectiveSendCounts();
    std::optional<unsigned> recv = schedule.getCollectiveRecvCounts();
    auto entries = [&](std::optional<unsigned> table) -> int64_t {
      return table ? *schedule.getBufferChunks(schedule.getBufferArgs()[*table],
                                               ranks)
                   : ranks;
    };
    std::optional<StringRef> kind = schedule.getCollective();
    int offsets = kind == "all_to_allv_2d"          ? 2
                  : kind == "all_to_allv_2d_offset" ? 1
                                                    : 0;
    os << "#define SDMA_COUNTS_IN " << entries(send)
       << "\n#define SDMA_COUNTS_OUT " << entries(recv)
       << "\n#define SDMA_COUNTS_OFFSETS " << offsets << "\n";
    // Ops resolved per window of a staged phase: the largest phase at once
    // where shared memory allows (each window is a resolve round and a
    // drain that every block of the rank waits for; an MoE dispatch's 256
    // expert segments took four of each per phase at the kernel's default
    // of 64). Under 46 KiB of static shared memory (CUDA's limit: 48)
    // with the phase's scan (scanWords), sdma_counts_out's scan and 80
    // bytes per op (a 48-byte descriptor and SDMA_WARP_SPAN's four scan
    // words); a runtime may define its own before this file.
    int64_t maxPhaseOps = 0;
    for (const auto &rankSteps : steps)
      for (const Step &s : rankSteps)
        if (s.kind == kPhase)
          maxPhaseOps = std::max<int64_t>(maxPhaseOps, s.b);
    const int64_t outEntries = entries(recv);
    const int64_t seg = offsets == 2 ? ranks : kScanSeg;
    const int64_t countWords = outEntries + 1 + (outEntries + seg - 1) / seg;
    const int64_t freeBytes = 47104 - 8 * (scanWords + countWords) - 256;
    const int64_t fit = freeBytes > 0 ? freeBytes / 80 / 32 * 32 : 0;
    const int64_t cap = std::max<int64_t>(
        64, std::min<int64_t>(fit, (maxPhaseOps + 31) / 32 * 32));
    if (cap != 64)
      os << "#ifndef SDMA_STAGE_CAP\n#define SDMA_STAGE_CAP " << cap
         << "\n#endif\n";
  }
  // sdma.reduce: the type and operator (a runtime may define others before
  // this file), and the most sources one row adds.
  if (reduceType >= 0)
    os << "#define SDMA_REDUCE 1\n#define SDMA_REDUCE_MAX_SRCS " << maxSources
       << "\n#define SDMA_REDUCE_MAX_DSTS " << std::max<size_t>(maxDests, 1)
       << "\n#ifndef SDMA_REDUCE_TYPE\n#define SDMA_REDUCE_TYPE " << reduceType
       << "\n#endif\n#ifndef SDMA_REDUCE_OP\n#define "
       << "SDMA_REDUCE_OP " << reduceOp << "\n#endif\n";
  os << "\n";

  auto emitArray = [&](StringRef type, StringRef name, auto &&values) {
    // Small tables go to constant memory (cached, broadcast to a warp).
    os << "static "
       << (values.size() * 8 <= 16384 ? "__constant__" : "__device__")
       << " const " << type << " " << name << "[] = {";
    size_t i = 0;
    for (auto v : values)
      os << (i++ % 12 ? " " : "\n    ") << v << ",";
    if (i == 0)
      os << "0";
    os << "};\n";
  };
  emitArray("long long", "sdma_ops", ops);
  if (reduceType >= 0)
    emitArray("long long", "sdma_rsrc", rsrc);
  if (!vops.empty()) {
    // sdma.copyv: the prefix tables, and every buffer's size in its unit
    // (the bound a run-time offset is checked against).
    emitArray("long long", "sdma_vops", vops);
    std::vector<int64_t> chunks;
    for (BlockArgument buffer : schedule.getBufferArgs())
      chunks.push_back(*schedule.getBufferChunks(buffer, ranks));
    emitArray("long long", "sdma_buffer_units", chunks);
    if (!fwd.empty())
      emitArray("long long", "sdma_fwd", fwd);
    if (scanWords) {
      emitArray("long long", "sdma_vtabs", scanRows);
      emitArray("int", "sdma_vtab_begin", scanBegin);
    }
    if (peerCountChecks) {
      // The copyv rows whose count each rank holds (row word 8), whoever
      // issues them: what its block 0 checks (LdstCounts.hip).
      std::vector<std::vector<int64_t>> held(ranks);
      for (size_t i = 0; i < ops.size(); i += kOpStride)
        if (ops[i] == 3)
          held[ops[i + 8]].push_back(i / kOpStride);
      std::vector<int64_t> checks;
      std::vector<int> checkBegin{0};
      for (const std::vector<int64_t> &rows : held) {
        llvm::append_range(checks, rows);
        checkBegin.push_back(checks.size());
      }
      emitArray("int", "sdma_count_checks", checks);
      emitArray("int", "sdma_count_check_begin", checkBegin);
    }
  }
  std::vector<int> stepValues;
  std::vector<int> begin{0};
  for (int64_t r = 0; r < ranks; ++r) {
    for (const Step &s : steps[r])
      llvm::append_range(stepValues,
                         std::initializer_list<int>{s.kind, s.a, s.b});
    begin.push_back(stepValues.size() / 3);
  }
  emitArray("int", "sdma_steps", stepValues);
  emitArray("int", "sdma_rank_begin", begin);
  if (lowLatency) {
    emitArray("long long", "sdma_ll_push", lowLatency->push);
    emitArray("int", "sdma_ll_push_begin", lowLatency->pushBegin);
    emitArray("long long", "sdma_ll_local", lowLatency->local);
    emitArray("int", "sdma_ll_local_begin", lowLatency->localBegin);
    emitArray("long long", "sdma_ll_recv", lowLatency->recv);
    emitArray("int", "sdma_ll_recv_begin", lowLatency->recvBegin);
    emitArray("long long", "sdma_ll_red", lowLatency->reduce);
    emitArray("int", "sdma_ll_red_begin", lowLatency->reduceBegin);
    emitArray("long long", "sdma_ll_rsrc", lowLatency->reduceSources);
  }
  os << "static "
     << (perEpoch.size() * 8 <= 16384 ? "__constant__" : "__device__")
     << " const unsigned long long sdma_per_epoch[] = {";
  for (auto [i, v] : llvm::enumerate(perEpoch))
    os << (i % 12 ? " " : "\n    ") << v << "ull,";
  os << "};\n";
  os << kKernelSource;
  if (specialised)
    os << "\n// Each rank's steps (SDMA_SPECIALISED).\n" << specialised->ranks;
  return success();
}

LogicalResult sdma::translateToHIP(ModuleOp module, raw_ostream &os,
                                   const HIPOptions &options) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() != 1)
    return module.emitError("expected exactly one sdma.schedule, found ")
           << schedules.size();
  if (!schedules.front().getRanks())
    return schedules.front().emitOpError(
        "has no fixed rank count: run sdma-unroll before --sdma-to-hip");
  return HIPEmitter(schedules.front(), options).emit(os);
}

static llvm::cl::opt<bool> noReduceFusion(
    "sdma-hip-no-reduce-fusion",
    llvm::cl::desc("--sdma-to-hip: keep reduce rows apart from the copies "
                   "before and after them (same results, more memory "
                   "traffic; for comparison)"),
    llvm::cl::init(false));

static llvm::cl::opt<bool> tableKernel(
    "sdma-hip-table-kernel",
    llvm::cl::desc("--sdma-to-hip: keep the schedule in tables that one "
                   "generic kernel interprets, instead of writing each "
                   "rank's steps as code (the fallback for schedules too "
                   "large to specialise; for comparison)"),
    llvm::cl::init(false));

void sdma::registerToHIPTranslation() {
  TranslateFromMLIRRegistration registration(
      "sdma-to-hip", "write a flat sdma schedule as a load/store HIP kernel",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        HIPOptions options;
        options.fuseReductions = !noReduceFusion;
        options.specialise = !tableKernel;
        if (failed(verifyBeforeTranslation(module)))
          return failure();
        return translateToHIP(module, os, options);
      },
      registerAllDialects);
}
