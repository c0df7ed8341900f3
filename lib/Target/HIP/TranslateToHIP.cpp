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
// The kernel is generic; the schedule lives in constant tables, and the
// chunk size, buffer addresses and run counter are arguments, so one
// compiled kernel serves every message size. Flags only grow: run n waits
// for n * (signals per run) + k, so nothing is reset between runs.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/Manifest.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include <map>
#include <nlohmann/json.hpp>

using namespace mlir;
using namespace sdma;
using json = nlohmann::ordered_json;

namespace {

enum StepKind { kPhase = 0, kSync = 1, kSignal = 2, kWait = 3, kBarrier = 4 };
constexpr int kOpStride = 12;

struct Step {
  int kind, a, b;
};

/// The generic device code every generated file carries.
constexpr const char *kKernelSource = R"SDMA(
// SDMA_STAGED_OPS=1 (the runtime's stagedOps option) resolves each phase's
// ops into shared memory first; see sdma_phase.
#ifndef SDMA_STAGED_OPS
#define SDMA_STAGED_OPS 0
#endif
#ifndef SDMA_STAGE_CAP
#define SDMA_STAGE_CAP 64
#endif
// A prelude may give spinning threads a pause (the CPU emulator yields).
#ifndef SDMA_SPIN_PAUSE
#define SDMA_SPIN_PAUSE()
#endif

struct SdmaTable {
  char *buf[SDMA_RANKS * SDMA_BUFFERS]; // buf[r * SDMA_BUFFERS + b]
  unsigned long long *flags[SDMA_RANKS]; // SDMA_FLAG_SLOTS per rank
  unsigned int *sync[SDMA_RANKS];        // per rank: arrivals, generation
  unsigned long long *error; // status (0 ok, 1 wait timed out), rank, slot,
                             // value awaited, value seen
  unsigned long long timeoutNs;
};

struct __attribute__((aligned(16))) sdma_v16 {
  unsigned long long x, y;
};

static __device__ bool sdma_aborted(const SdmaTable *T) {
  return *(volatile unsigned long long *)T->error != 0;
}

static __device__ void sdma_report(const SdmaTable *T, int rank, int slot,
                                   unsigned long long value,
                                   unsigned long long seen) {
  if (SDMA_ATOMIC_CAS_U64(T->error, 0ull, 1ull) == 0ull) {
    T->error[1] = rank;
    T->error[2] = slot;
    T->error[3] = value;
    T->error[4] = seen;
    SDMA_FENCE_SYSTEM();
  }
}

// The blocks of one rank meet; everything they wrote before is visible to
// every rank after.
static __device__ void sdma_rank_sync(const SdmaTable *T, int rank) {
  SDMA_SYNC();
  if (SDMA_TID == 0) {
    unsigned int *c = T->sync[rank];
    volatile unsigned int *gen = c + 1;
    unsigned int g = *gen;
    SDMA_FENCE_SYSTEM();
    if (SDMA_ATOMIC_ADD_U32(c, 1u) == SDMA_NBID - 1) {
      *(volatile unsigned int *)c = 0;
      SDMA_FENCE();
      SDMA_ATOMIC_ADD_U32(c + 1, 1u);
    } else {
      unsigned long long start = SDMA_NOW_NS();
      while (*gen == g) {
        SDMA_SPIN_PAUSE();
        if (sdma_aborted(T))
          break;
        if (SDMA_NOW_NS() - start > T->timeoutNs) {
          sdma_report(T, rank, -1, SDMA_NBID, 0);
          break;
        }
      }
    }
    SDMA_FENCE();
  }
  SDMA_SYNC();
}

// Every block waits until flag `slot` of `rank` reaches `value`.
static __device__ bool sdma_wait(const SdmaTable *T, int rank, int slot,
                                 unsigned long long value) {
  if (SDMA_TID == 0) {
    volatile unsigned long long *f = T->flags[rank] + slot;
    unsigned long long start = SDMA_NOW_NS();
    unsigned long long seen;
    while ((seen = *f) < value) {
      SDMA_SPIN_PAUSE();
      if (sdma_aborted(T))
        break;
      if (SDMA_NOW_NS() - start > T->timeoutNs) {
        sdma_report(T, rank, slot, value, seen);
        break;
      }
    }
    SDMA_FENCE_SYSTEM();
  }
  SDMA_SYNC();
  return !sdma_aborted(T);
}

// One data op resolved to addresses: source a, destinations b (and c for
// a broadcast; a and b swap for a swap), n bytes.
struct sdma_desc {
  char *a, *b, *c;
  unsigned long long n;
  int kind; // 0 copy, 1 bcast, 2 swap
};

static __device__ inline sdma_desc sdma_resolve(
    const SdmaTable *T, const long long *op, unsigned long long chunk) {
  sdma_desc d;
  d.kind = (int)op[0];
  d.a = T->buf[op[1] * SDMA_BUFFERS + op[2]] + op[3] * chunk;
  d.n = (unsigned long long)op[4] * chunk;
  d.b = T->buf[op[5] * SDMA_BUFFERS + op[6]] + op[7] * chunk;
  d.c = d.kind == 1 ? T->buf[op[8] * SDMA_BUFFERS + op[9]] + op[10] * chunk
                    : d.b;
  return d;
}

// Ops [0, nops) of a phase (from the op table, or already resolved into
// `staged`), spread over all threads of the rank's blocks in 16-byte units;
// tails and unaligned slices go byte by byte. `u` is the thread's next
// unit and `base` the first unit of op 0, both carried across calls.
static __device__ void sdma_phase_ops(const SdmaTable *T, const long long *ops,
                                      const sdma_desc *staged, int nops,
                                      unsigned long long chunk,
                                      unsigned long long nthreads,
                                      unsigned long long &u,
                                      unsigned long long &base) {
  for (int i = 0; i < nops; ++i) {
    const sdma_desc d =
        staged ? staged[i] : sdma_resolve(T, ops + i * SDMA_OP_STRIDE, chunk);
    const int kind = (int)d.kind;
    char *a = d.a, *b = d.b, *c = d.c;
    const unsigned long long n = d.n;
    const unsigned long long units = (n + 15) / 16;
    const bool aligned =
        ((((unsigned long long)a) | ((unsigned long long)b) |
          ((unsigned long long)c)) & 15ull) == 0;
    // Whole 16-byte units, four per thread per round: the four loads are
    // issued before any store, so each thread keeps four in flight.
    const unsigned long long full = aligned ? n / 16 : 0;
    while (u < base + full) {
      sdma_v16 va[4], vb[4];
      unsigned long long offs[4];
      int k = 0;
      for (; k < 4 && u + k * nthreads < base + full; ++k) {
        offs[k] = (u + k * nthreads - base) * 16;
        va[k] = *(const sdma_v16 *)(a + offs[k]);
        if (kind == 2)
          vb[k] = *(const sdma_v16 *)(b + offs[k]);
      }
      for (int i = 0; i < k; ++i) {
        if (kind == 2) {
          *(sdma_v16 *)(a + offs[i]) = vb[i];
          *(sdma_v16 *)(b + offs[i]) = va[i];
        } else {
          *(sdma_v16 *)(b + offs[i]) = va[i];
          if (kind == 1)
            *(sdma_v16 *)(c + offs[i]) = va[i];
        }
      }
      // Only the units this round took: the rest of the thread's share
      // continues into the next op's units.
      u += k * nthreads;
    }
    // The tail (and unaligned slices): byte by byte, 16 bytes per unit.
    for (; u < base + units; u += nthreads) {
      const unsigned long long off = (u - base) * 16;
      const unsigned long long end = off + 16 < n ? off + 16 : n;
      for (unsigned long long j = off; j < end; ++j) {
        char va = a[j];
        if (kind == 2) {
          char vb = b[j];
          a[j] = vb;
          b[j] = va;
        } else {
          b[j] = va;
          if (kind == 1)
            c[j] = va;
        }
      }
    }
    base += units;
  }
}

// One phase. With SDMA_STAGED_OPS, the block first resolves up to
// SDMA_STAGE_CAP ops at once into shared memory (one thread per op: the
// op-table and buffer-table loads of all ops in flight together), then
// copies from there; otherwise every thread resolves each op in turn.
static __device__ void sdma_phase(const SdmaTable *T, const long long *ops,
                                  int nops, unsigned long long chunk) {
  const unsigned long long nthreads =
      (unsigned long long)SDMA_NBID * SDMA_NTID;
  unsigned long long u = (unsigned long long)SDMA_BID * SDMA_NTID + SDMA_TID;
  unsigned long long base = 0;
#if SDMA_STAGED_OPS
  SDMA_BLOCK_SHARED(sdma_desc, staged, SDMA_STAGE_CAP);
  for (int w = 0; w < nops; w += SDMA_STAGE_CAP) {
    const int m = nops - w < SDMA_STAGE_CAP ? nops - w : SDMA_STAGE_CAP;
    for (int i = (int)SDMA_TID; i < m; i += (int)SDMA_NTID)
      staged[i] = sdma_resolve(T, ops + (w + i) * SDMA_OP_STRIDE, chunk);
    SDMA_SYNC();
    sdma_phase_ops(T, ops, staged, m, chunk, nthreads, u, base);
    SDMA_SYNC(); // the next window overwrites `staged`
  }
#else
  sdma_phase_ops(T, ops, nullptr, nops, chunk, nthreads, u, base);
#endif
}

// The table comes by value (kernel parameter space: no dependent global
// load before the first data access).
extern "C" __global__ void __launch_bounds__(SDMA_MAX_THREADS)
    sdma_ldst(const SDMA_GRID_CONSTANT SdmaTable table,
              unsigned long long chunk, unsigned long long epoch,
              int rankBase) {
  const SdmaTable *T = &table;
  const int rank = rankBase + (int)SDMA_BID_Y;
  for (int s = sdma_rank_begin[rank]; s < sdma_rank_begin[rank + 1]; ++s) {
    const int *st = sdma_steps + 3 * s;
    switch (st[0]) {
    case 0:
      sdma_phase(T, sdma_ops + (long long)st[1] * SDMA_OP_STRIDE, st[2], chunk);
      break;
    case 1:
      sdma_rank_sync(T, rank);
      break;
    case 2:
      if (SDMA_BID == 0 && SDMA_TID == 0) {
        SDMA_FENCE_SYSTEM();
        SDMA_ATOMIC_ADD_SYSTEM_U64(T->flags[st[1]] + st[2], 1ull);
      }
      break;
    case 3:
      if (!sdma_wait(T, rank, st[1],
                     epoch * sdma_per_epoch[rank * SDMA_FLAG_SLOTS + st[1]] +
                         (unsigned long long)st[2]))
        return;
      break;
    case 4:
      if (SDMA_BID == 0 && SDMA_TID == 0) {
        SDMA_FENCE_SYSTEM();
        for (int r = 0; r < SDMA_RANKS; ++r)
          SDMA_ATOMIC_ADD_SYSTEM_U64(T->flags[r] + st[1], 1ull);
      }
      if (!sdma_wait(T, rank, st[1],
                     epoch * sdma_per_epoch[rank * SDMA_FLAG_SLOTS + st[1]] +
                         (unsigned long long)st[2]))
        return;
      break;
    }
  }
}
)SDMA";

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
      StaticSlice s = *getStaticSlice(op.getSlice(i));
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
  explicit HIPEmitter(ScheduleOp schedule)
      : schedule(schedule), ranks(*schedule.getRanks()), steps(ranks) {}
  LogicalResult emit(raw_ostream &os);

private:
  LogicalResult collect();
  int slotFor(int64_t from, int64_t tag);

  ScheduleOp schedule;
  int64_t ranks;
  std::vector<int64_t> ops; // kOpStride per op
  std::vector<std::vector<Step>> steps;
  std::map<int64_t, int> tagIndex;
  std::map<std::pair<int, int64_t>, int> signalsTo; // (slot, rank)
  std::map<std::pair<int, int64_t>, int> waitsOn;   // (slot, rank)
  int barriers = 0;
};

} // namespace

int HIPEmitter::slotFor(int64_t from, int64_t tag) {
  auto [it, inserted] = tagIndex.try_emplace(tag, tagIndex.size());
  return it->second * ranks + from;
}

LogicalResult HIPEmitter::collect() {
  // Data ops go to per-rank phases, kept open until an ordering step.
  struct RawStep {
    Step step;
    std::vector<int64_t> opRows; // for phases: rows of 12
  };
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
      auto slice = [&](unsigned i) {
        return *getStaticSlice(transfer.getSlice(i));
      };
      auto bufferOf = [&](const StaticSlice &s) -> int64_t {
        return cast<BlockArgument>(s.buffer).getArgNumber() - 1;
      };
      StaticSlice s0 = slice(0), s1 = slice(1);
      std::vector<int64_t> row(kOpStride, 0);
      row[0] = isa<CopyOp>(op) ? 0 : isa<BcastOp>(op) ? 1 : 2;
      row[1] = s0.rank, row[2] = bufferOf(s0), row[3] = s0.offset;
      row[4] = s0.count;
      row[5] = s1.rank, row[6] = bufferOf(s1), row[7] = s1.offset;
      if (isa<BcastOp>(op)) {
        StaticSlice s2 = slice(2);
        row[8] = s2.rank, row[9] = bufferOf(s2), row[10] = s2.offset;
      }
      int64_t rank = s0.rank;
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
      llvm::append_range(raw[rank].back().opRows, row);
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
  for (int64_t r = 0; r < ranks; ++r)
    for (RawStep &rs : raw[r]) {
      if (rs.step.kind == kBarrier)
        rs.step.a = barrierSlot;
      if (rs.step.kind == kPhase) {
        rs.step.a = ops.size() / kOpStride;
        rs.step.b = rs.opRows.size() / kOpStride;
        llvm::append_range(ops, rs.opRows);
      }
      steps[r].push_back(rs.step);
    }
  return success();
}

LogicalResult HIPEmitter::emit(raw_ostream &os) {
  if (failed(collect()))
    return failure();
  int64_t numSlots = tagIndex.size() * ranks + (barriers ? 1 : 0);
  int64_t numBuffers = schedule.getBufferArgs().size();

  // Increments per run of every (rank, slot): waits in run n wait for
  // n * that + k, so flags never need resetting.
  int64_t slots = std::max<int64_t>(numSlots, 1);
  std::vector<unsigned long long> perEpoch(ranks * slots, 0);
  for (auto &[key, count] : signalsTo)
    perEpoch[key.second * slots + key.first] = count;
  if (barriers)
    for (int64_t r = 0; r < ranks; ++r)
      perEpoch[r * slots + numSlots - 1] = barriers * ranks;

  json meta{{"format", "sdma.ldst"},
            {"version", kLdstVersion},
            {"schedule", schedule.getSymName().str()},
            {"ranks", ranks},
            {"entry", "sdma_ldst"},
            {"flag_slots", std::max<int64_t>(numSlots, 1)},
            {"op_stride", kOpStride}};
  meta["buffers"] = buffersToJSON(schedule);
  meta["collective"] = collectiveToJSON(schedule);
  json phases = json::array();
  for (int64_t r = 0; r < ranks; ++r) {
    int64_t n = 0;
    for (const Step &s : steps[r])
      n += s.kind == kPhase;
    phases.push_back(n);
  }
  meta["phases_per_rank"] = std::move(phases);

  os << "// sdma-ldst: "
     << meta.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  os << "// Load/store kernel for schedule @" << schedule.getSymName() << " ("
     << ranks << " ranks), generated by sdma-translate --sdma-to-hip.\n"
     << "// Compile it after a prelude that defines the SDMA_* macros "
        "(runtime/include/sdma/runtime/LdstPrelude.h).\n\n";
  os << "#define SDMA_RANKS " << ranks << "\n#define SDMA_BUFFERS "
     << numBuffers << "\n#define SDMA_FLAG_SLOTS "
     << std::max<int64_t>(numSlots, 1) << "\n#define SDMA_OP_STRIDE "
     << kOpStride << "\n\n";

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
  os << "static "
     << (perEpoch.size() * 8 <= 16384 ? "__constant__" : "__device__")
     << " const unsigned long long sdma_per_epoch[] = {";
  for (auto [i, v] : llvm::enumerate(perEpoch))
    os << (i % 12 ? " " : "\n    ") << v << "ull,";
  os << "};\n";
  os << kKernelSource;
  return success();
}

LogicalResult sdma::translateToHIP(ModuleOp module, raw_ostream &os) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() != 1)
    return module.emitError("expected exactly one sdma.schedule, found ")
           << schedules.size();
  if (!schedules.front().getRanks())
    return schedules.front().emitOpError(
        "has no fixed rank count: run sdma-unroll before --sdma-to-hip");
  return HIPEmitter(schedules.front()).emit(os);
}

void sdma::registerToHIPTranslation() {
  TranslateFromMLIRRegistration registration(
      "sdma-to-hip", "write a flat sdma schedule as a load/store HIP kernel",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return translateToHIP(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<SdmaDialect, affine::AffineDialect, arith::ArithDialect,
                        index::IndexDialect, scf::SCFDialect>();
      });
}
