//===- CountTables.cpp - sdma.copyv's count tables in the kernel ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "CountTables.h"

#include "llvm/ADT/STLExtras.h"
#include <tuple>

using namespace mlir;
using namespace sdma;
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

int64_t bufferOf(Value buffer) {
  return cast<BlockArgument>(buffer).getArgNumber() - 1;
}

template <typename T>
void emitValues(raw_ostream &os, StringRef type, StringRef name,
                ArrayRef<T> values) {
  os << "static "
     << (values.size() * 8 <= 16384 ? "__constant__" : "__device__")
     << " const " << type << " " << name << "[] = {";
  size_t i = 0;
  for (T v : values)
    os << (i++ % 12 ? " " : "\n    ") << v << ",";
  if (i == 0)
    os << "0";
  os << "};\n";
}
} // namespace

void sdma::hip::emitArray(raw_ostream &os, StringRef type, StringRef name,
                          ArrayRef<int64_t> values) {
  emitValues(os, type, name, values);
}
void sdma::hip::emitArray(raw_ostream &os, StringRef type, StringRef name,
                          ArrayRef<int> values) {
  emitValues(os, type, name, values);
}

FailureOr<CountTables> CountTables::build(ScheduleOp schedule) {
  FailureOr<CountForwarding> forwarding = CountForwarding::build(schedule);
  if (failed(forwarding))
    return failure();
  return CountTables(schedule, std::move(*forwarding));
}

CountTables::CountTables(ScheduleOp schedule, CountForwarding forwarding)
    : schedule(schedule), ranks(*schedule.getRanks()),
      forwarding(std::move(forwarding)) {
  for (CopyOp copy : schedule.getBody().getOps<CopyOp>())
    copiedTo.insert(copy.getTarget().getAsOpaquePointer());
}

std::vector<int64_t> CountTables::addCopyv(CopyvOp op) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  notePeerCounts(op);
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
    if (op.isForwarded(side)) {
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

/// Sets peerCounts and peerCountChecks for `op`. A count table some copy
/// writes is ordered by the schedule; one that none writes is the caller's,
/// copied in by its rank's launch before that rank arrives anywhere.
void CountTables::notePeerCounts(CopyvOp op) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  int64_t issuer = field(op.getIssuingRankField());
  auto copiedIn = [&](Value table) {
    return !copiedTo.contains(table.getAsOpaquePointer());
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

void CountTables::plan(const std::vector<std::vector<Step>> &steps,
                       const std::vector<int64_t> &ops) {
  planForwarding();
  if (!vops.empty())
    planScans(steps, ops);
  if (peerCountChecks)
    planChecks(ops);
}

/// sdma_fwd: each forwarded row's entries where the count copies read
/// them; every forwarded side's rank word set to its row's first.
void CountTables::planForwarding() {
  std::map<std::pair<int64_t, int64_t>, int64_t> place;
  const int64_t buffers = schedule.getBufferArgs().size();
  for (auto [key, end] : forwardedRows) {
    place[key] = fwd.size();
    for (const CountEntry &e : forwarding.view(key.first, key.second, end))
      fwd.push_back(((e.rank * buffers + e.buffer) << 32) | e.index);
  }
  for (size_t at = 0; at < vops.size(); at += kVopStride / 2)
    if (vops[at] >= 0 && vops[at + 3] >= 4)
      vops[at + 1] = place.at({vops[at + 1], vops[at]});
}

/// The count tables each phase's sdma.copyv ops take packed offsets from
/// (forms 0 and 1; form 2 reads one entry), scanned once per phase into
/// shared memory by every block (LdstCounts.hip's sdma_scan) instead of
/// summed per op: rows (kScanRow each) per global step in scanBegin, every
/// side's vops word 4 set to its table's place. A phase whose tables pass
/// kScanCacheWords keeps the per-op sums. scanWords: the most words a
/// phase takes.
void CountTables::planScans(const std::vector<std::vector<Step>> &steps,
                            const std::vector<int64_t> &ops) {
  scanBegin.assign(1, 0);
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
          llvm::append_range(scanRows,
                             std::initializer_list<int64_t>{
                                 std::get<0>(key), std::get<1>(key), entries,
                                 std::get<2>(key), place[key]});
        for (size_t at : sides)
          vops[at + 4] = place[{vops[at + 1], vops[at], vops[at + 3]}];
        scanWords = std::max(scanWords, words);
      }
      scanBegin.push_back(scanRows.size() / kScanRow);
    }
}

/// sdma_count_checks: the copyv rows whose count each rank holds (row word
/// 8), whoever issues them: what its block 0 checks (LdstCounts.hip).
void CountTables::planChecks(const std::vector<int64_t> &ops) {
  std::vector<std::vector<int>> held(ranks);
  for (size_t i = 0; i < ops.size(); i += kOpStride)
    if (ops[i] == 3)
      held[ops[i + 8]].push_back(static_cast<int>(i / kOpStride));
  checkBegin.assign(1, 0);
  for (const std::vector<int> &rows : held) {
    llvm::append_range(checks, rows);
    checkBegin.push_back(checks.size());
  }
}

// sdma.copyv resolves its counts and prefix sums with loads from other
// ranks: one thread per op, all ops at once (staged) beats every thread
// resolving every op in turn.
void CountTables::emitDefines(raw_ostream &os,
                              const std::vector<std::vector<Step>> &steps,
                              int64_t peerSlot) const {
  ScheduleOp schedule = this->schedule; // op handles are not const-correct
  os << "#define SDMA_COUNT_OPS 1\n#define SDMA_VOP_STRIDE " << kVopStride
     << "\n#ifndef SDMA_STAGED_OPS\n#define SDMA_STAGED_OPS 1\n#endif\n";
  // An expert-major offset pads each group of SDMA_RANKS counts.
  os << "#define SDMA_MAJOR_ALIGN " << schedule.getMajorAlignment() << "\n";
  if (forwarding.used())
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

void CountTables::emitTables(raw_ostream &os) const {
  ScheduleOp schedule = this->schedule;
  // The sides, and every buffer's size in its unit (the bound a run-time
  // offset is checked against).
  emitArray(os, "long long", "sdma_vops", vops);
  std::vector<int64_t> chunks;
  for (BlockArgument buffer : schedule.getBufferArgs())
    chunks.push_back(*schedule.getBufferChunks(buffer, ranks));
  emitArray(os, "long long", "sdma_buffer_units", chunks);
  if (!fwd.empty())
    emitArray(os, "long long", "sdma_fwd", fwd);
  if (scanWords) {
    emitArray(os, "long long", "sdma_vtabs", scanRows);
    emitArray(os, "int", "sdma_vtab_begin", scanBegin);
  }
  if (peerCountChecks) {
    emitArray(os, "int", "sdma_count_checks", checks);
    emitArray(os, "int", "sdma_count_check_begin", checkBegin);
  }
}
