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

#include "CountTables.h"
#include "FuseReductions.h"
#include "LowLatency.h"
#include "Specialise.h"
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
        raw(ranks), engineFootprints(ranks), fuse(options.fuseReductions),
        specialise(options.specialise) {}
  LogicalResult emit(raw_ostream &os);

private:
  /// The schedule's ops as each rank's steps and the tables they index.
  LogicalResult collect();
  LogicalResult checkReduceTypes();
  int slotFor(int64_t from, int64_t tag);
  /// One op of the flat schedule into its ranks' raw steps.
  LogicalResult addOp(Operation &op);
  /// A copy, broadcast, swap or reduce into its issuer's open phase (a
  /// new one after a sync where it conflicts on its engine).
  void addTransfer(Operation &op, TransferOpInterface transfer);
  /// Appends `step` to `rank`'s raw steps (a sync after a sync once).
  void addRaw(int64_t rank, Step step);
  /// Rank `r`'s raw steps as steps, its phases' rows appended to `ops`
  /// and its reduce groups' operands laid out in `rsrc`.
  void layOut(int64_t r, int barrierSlot);

  ScheduleOp schedule;
  int64_t ranks;
  std::vector<int64_t> ops; // kOpStride per op
  /// sdma.copyv's sides and the tables the kernel resolves them with.
  std::optional<CountTables> counts;
  /// sdma.reduce sources (rank, buffer, offset), 3 each, by row.
  std::vector<int64_t> rsrc;
  size_t maxSources = 0, maxDests = 0;
  /// The element type and operator codes of the schedule's reduces.
  int reduceType = -1, reduceOp = -1;
  std::vector<std::vector<Step>> steps;
  /// Data ops go to per-rank phases, kept open until an ordering step.
  std::vector<std::vector<RawStep>> raw;
  /// What each engine of a rank touched since the rank's last sync (a wait
  /// is no sync: blocks pass it one by one, the previous phase may still
  /// run in other blocks).
  std::vector<EngineFootprints> engineFootprints;
  std::map<int64_t, int> tagIndex;
  std::map<std::pair<int, int64_t>, int> signalsTo; // (slot, rank)
  std::map<std::pair<int, int64_t>, int> waitsOn;   // (slot, rank)
  int barriers = 0;
  bool fuse, specialise;
};

} // namespace

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

void HIPEmitter::addRaw(int64_t rank, Step step) {
  if (step.kind == kSync)
    engineFootprints[rank].clear();
  if (step.kind == kSync && !raw[rank].empty() &&
      raw[rank].back().step.kind == kSync)
    return;
  raw[rank].push_back({step, {}});
}

void HIPEmitter::addTransfer(Operation &op, TransferOpInterface transfer) {
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
  if (engine && engineFootprints[rank].conflicts(engine.getInt(), transfer)) {
    addRaw(rank, {kSync, 0, 0});
    open = false;
  }
  if (!open)
    raw[rank].push_back({{kPhase, 0, 0}, {}});
  if (engine)
    engineFootprints[rank].add(engine.getInt(), transfer);
  RawStep &phase = raw[rank].back();
  if (!isa<sdma::ReduceOp>(op)) {
    llvm::append_range(phase.opRows, row);
    return;
  }
  // One row per destination slice: row[7] names its source list until
  // the lists are laid out (layOut).
  std::array<int64_t, 4> key = {s0.rank, bufferOf(s0), s0.offset, s0.count};
  auto [it, added] = phase.groups.try_emplace(key, phase.sources.size());
  if (added) {
    phase.sources.emplace_back();
    phase.dests.emplace_back();
    row[5] = reduceOp, row[6] = reduceType;
    row[7] = it->second;
    llvm::append_range(phase.opRows, row);
  }
  phase.sources[it->second].push_back({s1.rank, bufferOf(s1), s1.offset});
}

LogicalResult HIPEmitter::addOp(Operation &op) {
  auto notFlat = [&] {
    return op.emitOpError("is not flat: run sdma-unroll before "
                          "--sdma-to-hip");
  };
  if (auto transfer = dyn_cast<TransferOpInterface>(&op)) {
    if (!cast<FieldsOpInterface>(&op).hasStaticFields())
      return notFlat();
    addTransfer(op, transfer);
  } else if (auto copyv = dyn_cast<CopyvOp>(&op)) {
    if (!copyv.hasStaticFields())
      return notFlat();
    int64_t rank = *copyv.getConstantField(copyv.getIssuingRankField());
    std::vector<int64_t> row = counts->addCopyv(copyv);
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
      return notFlat();
    for (int64_t r = 0; r < ranks; ++r)
      if (!fence.hasRank() || *fence.getConstantField(0) == r)
        addRaw(r, {kSync, 0, 0});
  } else if (auto signal = dyn_cast<SignalOp>(&op)) {
    if (!signal.hasStaticFields())
      return notFlat();
    int64_t from = *signal.getConstantField(0);
    int64_t to = *signal.getConstantField(1);
    int slot = slotFor(from, signal.getTag());
    ++signalsTo[{slot, to}];
    addRaw(from, {kSync, 0, 0});
    addRaw(from, {kSignal, static_cast<int>(to), slot});
  } else if (auto wait = dyn_cast<WaitOp>(&op)) {
    if (!wait.hasStaticFields())
      return notFlat();
    int64_t at = *wait.getConstantField(0);
    int64_t from = *wait.getConstantField(1);
    int slot = slotFor(from, wait.getTag());
    int k = ++waitsOn[{slot, at}];
    addRaw(at, {kWait, slot, k});
  } else if (isa<BarrierOp>(op)) {
    ++barriers;
    for (int64_t r = 0; r < ranks; ++r) {
      addRaw(r, {kSync, 0, 0});
      // The slot is fixed once all tags are known (layOut).
      addRaw(r, {kBarrier, -1, static_cast<int>(barriers * ranks)});
    }
  } else {
    return op.emitOpError("is not part of a flat schedule: run sdma-unroll "
                          "(and sdma-verify) before --sdma-to-hip");
  }
  return success();
}

void HIPEmitter::layOut(int64_t r, int barrierSlot) {
  if (fuse)
    fuseReductions(raw[r]);
  for (RawStep &rs : raw[r]) {
    if (rs.step.kind == kBarrier)
      rs.step.a = barrierSlot;
    if (rs.step.kind == kPhase) {
      for (size_t i = 0; i < rs.opRows.size(); i += kOpStride) {
        if (rs.opRows[i] != 4)
          continue;
        // Every operand in (rank, buffer, offset) order, the destination's
        // own value among them where the row reads it (the kernel then
        // starts from the first operand): a slice reduced on several
        // ranks, as one-shot and in-place all-reduce do, gets the same
        // bits on each, whichever rank's value it started from. Then the
        // extra destinations.
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

LogicalResult HIPEmitter::collect() {
  if (failed(checkReduceTypes()))
    return failure();
  FailureOr<CountTables> tables = CountTables::build(schedule);
  if (failed(tables))
    return failure();
  counts = std::move(*tables);
  for (Operation &op : schedule.getBody().getOps())
    if (failed(addOp(op)))
      return failure();
  for (auto &[key, k] : waitsOn) {
    auto it = signalsTo.find(key);
    if (it == signalsTo.end() || it->second < k)
      return schedule.emitOpError("has a wait that no signal satisfies: run "
                                  "sdma-verify before --sdma-to-hip");
  }
  int barrierSlot = static_cast<int>(tagIndex.size() * ranks);
  for (int64_t r = 0; r < ranks; ++r)
    layOut(r, barrierSlot);
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
  int64_t peerSlot = counts->readsPeerCounts() ? numSlots++ : -1;
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
  counts->plan(steps, ops);

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
      counts->empty() ? planLowLatency(ranks, steps, ops, rsrc, noLowLatency)
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
  if (!counts->empty())
    counts->emitDefines(os, steps, peerSlot);
  // sdma.reduce: the type and operator (a runtime may define others before
  // this file), and the most sources one row adds.
  if (reduceType >= 0)
    os << "#define SDMA_REDUCE 1\n#define SDMA_REDUCE_MAX_SRCS " << maxSources
       << "\n#define SDMA_REDUCE_MAX_DSTS " << std::max<size_t>(maxDests, 1)
       << "\n#ifndef SDMA_REDUCE_TYPE\n#define SDMA_REDUCE_TYPE " << reduceType
       << "\n#endif\n#ifndef SDMA_REDUCE_OP\n#define "
       << "SDMA_REDUCE_OP " << reduceOp << "\n#endif\n";
  os << "\n";

  emitArray(os, "long long", "sdma_ops", ops);
  if (reduceType >= 0)
    emitArray(os, "long long", "sdma_rsrc", rsrc);
  if (!counts->empty())
    counts->emitTables(os);
  std::vector<int> stepValues;
  std::vector<int> begin{0};
  for (int64_t r = 0; r < ranks; ++r) {
    for (const Step &s : steps[r])
      llvm::append_range(stepValues,
                         std::initializer_list<int>{s.kind, s.a, s.b});
    begin.push_back(stepValues.size() / 3);
  }
  emitArray(os, "int", "sdma_steps", stepValues);
  emitArray(os, "int", "sdma_rank_begin", begin);
  if (lowLatency) {
    emitArray(os, "long long", "sdma_ll_push", lowLatency->push);
    emitArray(os, "int", "sdma_ll_push_begin", lowLatency->pushBegin);
    emitArray(os, "long long", "sdma_ll_local", lowLatency->local);
    emitArray(os, "int", "sdma_ll_local_begin", lowLatency->localBegin);
    emitArray(os, "long long", "sdma_ll_recv", lowLatency->recv);
    emitArray(os, "int", "sdma_ll_recv_begin", lowLatency->recvBegin);
    emitArray(os, "long long", "sdma_ll_red", lowLatency->reduce);
    emitArray(os, "int", "sdma_ll_red_begin", lowLatency->reduceBegin);
    emitArray(os, "long long", "sdma_ll_rsrc", lowLatency->reduceSources);
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
