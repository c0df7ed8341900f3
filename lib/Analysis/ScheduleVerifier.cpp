//===- ScheduleVerifier.cpp - races, deadlocks and postconditions ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// On a flat schedule:
//  1. deadlocks: waits no signal satisfies, polls no notify releases, cycles
//     of waits (ScheduleGraph);
//  2. races: two data ops that touch overlapping chunks of one buffer on one
//     rank, at least one writing, with neither ordered before the other;
//  3. the postcondition of the declared collective, by symbolic execution:
//     every chunk starts as the symbol (rank, buffer, chunk); the ops run in
//     a topological order (any order gives the same result once 2 holds) and
//     each output chunk must then hold the symbol the collective requires.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleVerifier.h"
#include "Segments.h"
#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/IR/IterationLoc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
using namespace sdma;
using sdma::detail::SegmentTracker;
using sdma::detail::Symbol;

namespace {

/// One access of a data op to a run of chunks. A packed segment of
/// sdma.copyv (its offset a prefix sum known only at run time) spans the
/// whole buffer here but is disjoint from the other segments of the same
/// count-table row: `table` >= 0 names that row and `segment` the entry.
struct Access {
  unsigned node;
  int64_t rank;
  unsigned buffer;
  int64_t begin, end;
  bool write;
  int64_t table = -1, tableRank = -1, segment = -1;

  bool disjointSegments(const Access &o) const {
    return table >= 0 && table == o.table && tableRank == o.tableRank &&
           segment != o.segment;
  }
};

class ScheduleVerifier {
public:
  ScheduleVerifier(ScheduleOp schedule, const VerifyOptions &options)
      : schedule(schedule),
        budget(options.memoryBudget ? options.memoryBudget
                                    : getDefaultMemoryBudget()) {}
  FailureOr<VerifyReport> run();

private:
  LogicalResult checkFlat();
  LogicalResult checkRaces(const ScheduleGraph &graph);
  LogicalResult checkPostcondition(const ScheduleGraph &graph);
  LogicalResult checkStaticKind(StringRef kind);
  void addCopyvAccesses(unsigned node, CopyvOp op,
                        std::vector<Access> &accesses);
  unsigned bufferIndex(Value buffer) {
    return cast<BlockArgument>(buffer).getArgNumber() - 1;
  }
  std::string describe(const Symbol &symbol);

  ScheduleOp schedule;
  uint64_t budget;
  int64_t ranks = 0;
};

} // namespace

LogicalResult ScheduleVerifier::checkFlat() {
  if (!schedule.getRanks())
    return schedule.emitOpError("has no fixed rank count: run sdma-unroll "
                                "before sdma-verify");
  ranks = *schedule.getRanks();
  for (Operation &op : schedule.getBody().getOps()) {
    if (isa<BarrierOp, NotifyOp, PollOp>(op))
      continue;
    auto fields = dyn_cast<FieldsOpInterface>(&op);
    if (!fields || !fields.hasStaticFields() || isa<RankAddOp>(op))
      return op.emitOpError("is not part of a flat schedule: run "
                            "sdma-unroll before sdma-verify");
  }
  return success();
}

static StringRef accessVerb(bool write) { return write ? "writes" : "reads"; }

void ScheduleVerifier::addCopyvAccesses(unsigned node, CopyvOp op,
                                        std::vector<Access> &accesses) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  // The count it reads, and the prefix of each packed side's table row.
  int64_t countIndex = field(CopyvOp::kCountIndex);
  accesses.push_back({node, field(CopyvOp::kCountRank),
                      bufferIndex(op.getCounts()), countIndex, countIndex + 1,
                      false});
  for (unsigned side = 0; side < 2; ++side) {
    Value buffer = side ? op.getTarget() : op.getSource();
    int64_t rank = field(side ? CopyvOp::kTargetRank : CopyvOp::kSourceRank);
    Access data{node, rank, bufferIndex(buffer), 0, 0, side == 1};
    if (op.getPacked()[side]) {
      unsigned prefixRank =
          side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
      Value table = side ? op.getTargetPrefix() : op.getSourcePrefix();
      int64_t index = field(prefixRank + 1);
      if (index > 0)
        accesses.push_back(
            {node, field(prefixRank), bufferIndex(table), 0, index, false});
      data.end = *schedule.getBufferChunks(buffer, ranks);
      data.table = bufferIndex(table);
      data.tableRank = field(prefixRank);
      data.segment = index;
    } else {
      data.begin =
          field(side ? CopyvOp::kTargetOffset : CopyvOp::kSourceOffset);
      data.end = data.begin + op.getMaxCount();
    }
    accesses.push_back(data);
  }
}

LogicalResult ScheduleVerifier::checkRaces(const ScheduleGraph &graph) {
  std::vector<Access> accesses;
  for (auto [i, node] : llvm::enumerate(graph.getNodes())) {
    if (auto copyv = dyn_cast<CopyvOp>(node.op))
      addCopyvAccesses(i, copyv, accesses);
    auto transfer = dyn_cast<TransferOpInterface>(node.op);
    if (!transfer)
      continue;
    // A copy of a slice onto itself rewrites the same bytes: a reader
    // running at the same time sees the same values, so it only reads.
    bool selfCopy =
        isa<CopyOp>(node.op) && *getStaticSlice(transfer.getSlice(0)) ==
                                    *getStaticSlice(transfer.getSlice(1));
    for (unsigned s = 0, e = selfCopy ? 1 : transfer.getNumSlices(); s < e;
         ++s) {
      StaticSlice slice = *getStaticSlice(transfer.getSlice(s));
      unsigned buffer = bufferIndex(slice.buffer);
      if (transfer.isSliceRead(s))
        accesses.push_back({static_cast<unsigned>(i), slice.rank, buffer,
                            slice.offset, slice.offset + slice.count, false});
      if (transfer.isSliceWritten(s))
        accesses.push_back({static_cast<unsigned>(i), slice.rank, buffer,
                            slice.offset, slice.offset + slice.count, true});
    }
  }
  llvm::sort(accesses, [](const Access &a, const Access &b) {
    return std::tie(a.rank, a.buffer, a.begin, a.node) <
           std::tie(b.rank, b.buffer, b.begin, b.node);
  });
  for (size_t i = 0; i < accesses.size(); ++i) {
    const Access &a = accesses[i];
    for (size_t j = i + 1; j < accesses.size(); ++j) {
      const Access &b = accesses[j];
      if (b.rank != a.rank || b.buffer != a.buffer || b.begin >= a.end)
        break;
      if ((!a.write && !b.write) || a.node == b.node || a.disjointSegments(b) ||
          graph.ordered(a.node, b.node))
        continue;
      // Report at the later op in program order.
      const Access &first = a.node < b.node ? a : b;
      const Access &second = a.node < b.node ? b : a;
      int64_t lo = std::max(a.begin, b.begin), hi = std::min(a.end, b.end);
      Value buffer = schedule.getBufferArgs()[a.buffer];
      const ScheduleGraph::Node &op1 = graph.getNodes()[first.node];
      const ScheduleGraph::Node &op2 = graph.getNodes()[second.node];
      InFlightDiagnostic diag =
          op2.op->emitOpError()
          << "races with another op: it " << accessVerb(second.write) << " "
          << schedule.getBufferName(buffer) << "[" << lo << ", " << hi << ")"
          << (a.table >= 0 || b.table >= 0
                  ? " (where a packed segment of run-time offset may lie)"
                  : "")
          << " on rank " << a.rank << ", which the other op "
          << accessVerb(first.write)
          << ", and no fence, signal/wait or barrier orders the two (this "
             "op is issued by rank "
          << op2.rank << ", the other by rank " << op1.rank << ")";
      attachIterationNotes(*diag.getUnderlyingDiagnostic(), op2.op->getLoc(),
                           "this op");
      diag.attachNote(op1.op->getLoc())
          << "the other op, issued by rank " << op1.rank;
      attachIterationNotes(*diag.getUnderlyingDiagnostic(), op1.op->getLoc(),
                           "the other op");
      return diag;
    }
  }
  return success();
}

std::string ScheduleVerifier::describe(const Symbol &symbol) {
  if (symbol.rank < 0)
    return "nothing (never written)";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << schedule.getBufferName(schedule.getBufferArgs()[symbol.buffer]) << "["
     << symbol.chunk << "] of rank " << symbol.rank;
  return text;
}

/// The buffer sizes a fixed-size collective needs.
LogicalResult ScheduleVerifier::checkStaticKind(StringRef kind) {
  auto chunksOf = [&](unsigned buffer) {
    return *schedule.getBufferChunks(schedule.getBufferArgs()[buffer], ranks);
  };
  int64_t inChunks = chunksOf(*schedule.getCollectiveInput());
  int64_t outChunks = chunksOf(*schedule.getCollectiveOutput());
  bool perRankIn = kind == "all_to_all" || kind == "scatter";
  int64_t c = kind == "all_to_all" ? outChunks / ranks
              : kind == "scatter"  ? outChunks
                                   : inChunks;
  int64_t expectIn = perRankIn ? ranks * c : c;
  int64_t expectOut =
      (kind == "all_gather" || kind == "gather" || kind == "all_to_all")
          ? ranks * c
          : c;
  if (c < 1 || inChunks != expectIn || outChunks != expectOut)
    return schedule.emitOpError("implements ")
           << kind << " but its buffers have " << inChunks << " and "
           << outChunks << " chunks; with " << ranks
           << " ranks it needs an input of " << expectIn << " and an output of "
           << expectOut << " chunks";
  return success();
}

LogicalResult ScheduleVerifier::checkPostcondition(const ScheduleGraph &graph) {
  std::optional<StringRef> kind = schedule.getCollective();
  if (!kind)
    return success();
  unsigned in = *schedule.getCollectiveInput();
  auto chunksOf = [&](unsigned buffer) {
    return *schedule.getBufferChunks(schedule.getBufferArgs()[buffer], ranks);
  };
  bool dynamic = kind->starts_with("all_to_allv");
  SegmentTracker segments(schedule, ranks);
  if (dynamic ? failed(segments.checkLayout()) : failed(checkStaticKind(*kind)))
    return failure();

  // Symbolic memory: contents[rank][buffer][chunk]; refuse before
  // allocating more than the budget.
  unsigned numBuffers = schedule.getBufferArgs().size();
  uint64_t symbols = 0;
  for (unsigned b = 0; b < numBuffers; ++b)
    symbols += static_cast<uint64_t>(chunksOf(b));
  uint64_t bytes = symbols * ranks * sizeof(Symbol);
  if (symbols > budget / sizeof(Symbol) / ranks)
    return schedule.emitOpError("is too large to verify: executing it "
                                "symbolically needs ")
           << formatBytes(bytes) << " (" << symbols << " chunks x " << ranks
           << " ranks), over the verifier's memory budget of "
           << formatBytes(budget);
  std::optional<unsigned> sendCounts = schedule.getCollectiveSendCounts();
  sdma::detail::SymbolicMemory memory(
      ranks, std::vector<std::vector<Symbol>>(numBuffers));
  for (int64_t r = 0; r < ranks; ++r)
    for (unsigned b = 0; b < numBuffers; ++b) {
      int64_t n = chunksOf(b);
      memory[r][b].resize(n);
      // Only the input (and all_to_allv's send counts) starts with known
      // contents; everything else (the output of an out-of-place
      // collective included) starts undefined.
      if (b == in || b == sendCounts)
        for (int64_t i = 0; i < n; ++i)
          memory[r][b][i] = Symbol{r, static_cast<int64_t>(b), i};
    }
  auto read = [&](const StaticSlice &s) {
    auto &buf = memory[s.rank][bufferIndex(s.buffer)];
    return std::vector<Symbol>(buf.begin() + s.offset,
                               buf.begin() + s.offset + s.count);
  };
  auto write = [&](const StaticSlice &s, const std::vector<Symbol> &data) {
    llvm::copy(data, memory[s.rank][bufferIndex(s.buffer)].begin() + s.offset);
  };
  for (unsigned v : graph.getTopologicalOrder()) {
    Operation *op = graph.getNodes()[v].op;
    if (auto copyv = dyn_cast<CopyvOp>(op)) {
      if (failed(segments.record(copyv, memory)))
        return failure();
      continue;
    }
    auto transfer = dyn_cast<TransferOpInterface>(op);
    if (!transfer)
      continue;
    StaticSlice s0 = *getStaticSlice(transfer.getSlice(0));
    StaticSlice s1 = *getStaticSlice(transfer.getSlice(1));
    std::vector<Symbol> d0 = read(s0);
    if (isa<SwapOp>(transfer.getOperation())) {
      std::vector<Symbol> d1 = read(s1);
      write(s0, d1);
      write(s1, d0);
      continue;
    }
    write(s1, d0);
    if (isa<BcastOp>(transfer.getOperation()))
      write(*getStaticSlice(transfer.getSlice(2)), d0);
  }
  if (dynamic)
    return segments.checkAllToAllv(memory);

  unsigned out = *schedule.getCollectiveOutput();
  int64_t inChunks = chunksOf(in), outChunks = chunksOf(out);
  int64_t c = *kind == "all_to_all" ? outChunks / ranks
              : *kind == "scatter"  ? outChunks
                                    : inChunks;
  int64_t root = schedule.getRoot().value_or(0);
  for (int64_t r = 0; r < ranks; ++r) {
    if (*kind == "gather" && r != root)
      continue;
    for (int64_t i = 0; i < outChunks; ++i) {
      Symbol expected{-1, static_cast<int64_t>(in), -1};
      if (*kind == "all_gather" || *kind == "gather")
        expected.rank = i / c, expected.chunk = i % c;
      else if (*kind == "all_to_all")
        expected.rank = i / c, expected.chunk = r * c + i % c;
      else if (*kind == "broadcast")
        expected.rank = root, expected.chunk = i;
      else // scatter
        expected.rank = root, expected.chunk = r * c + i;
      const Symbol &actual = memory[r][out][i];
      if (actual == expected)
        continue;
      return schedule.emitOpError("does not implement ")
             << *kind << ": afterwards chunk " << i << " of "
             << schedule.getBufferName(schedule.getBufferArgs()[out])
             << " on rank " << r << " holds " << describe(actual)
             << ", but should hold " << describe(expected);
    }
  }
  return success();
}

FailureOr<VerifyReport> ScheduleVerifier::run() {
  if (failed(checkFlat()))
    return failure();
  FailureOr<ScheduleGraph> graph = ScheduleGraph::build(schedule, budget);
  if (failed(graph) || failed(checkRaces(*graph)) ||
      failed(checkPostcondition(*graph)))
    return failure();
  VerifyReport report;
  report.ranks = ranks;
  for (const ScheduleGraph::Node &node : graph->getNodes()) {
    report.dataOps += isa<TransferOpInterface, CopyvOp>(node.op);
    report.waits += isa<WaitOp>(node.op);
    report.polls += isa<PollOp>(node.op);
  }
  if (std::optional<StringRef> kind = schedule.getCollective())
    report.collective = kind->str();
  return report;
}

std::string VerifyReport::summary(ScheduleOp schedule) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "proved for " << ranks << " ranks: " << dataOps
     << " data ops race-free, " << waits << " waits";
  if (polls)
    os << " and " << polls << " polls";
  os << " always released (no deadlock), ";
  if (!collective) {
    os << "outputs unchecked (no `implements`)";
    return text;
  }
  auto name = [&](std::optional<unsigned> buffer) {
    return schedule.getBufferName(schedule.getBufferArgs()[*buffer]);
  };
  os << "implements " << *collective << "("
     << name(schedule.getCollectiveInput()) << " -> "
     << name(schedule.getCollectiveOutput()) << ")";
  if (schedule.getCollectiveSendCounts()) {
    os << " counts(" << name(schedule.getCollectiveSendCounts());
    if (schedule.getCollectiveRecvCounts())
      os << " -> " << name(schedule.getCollectiveRecvCounts());
    os << ") for every count";
  }
  if (schedule.getRoot())
    os << " root " << *schedule.getRoot();
  return text;
}

FailureOr<VerifyReport> sdma::verifySchedule(ScheduleOp schedule,
                                             const VerifyOptions &options) {
  return ScheduleVerifier(schedule, options).run();
}

bool sdma::scheduleVerifies(ScheduleOp schedule, std::string *reason,
                            const VerifyOptions &options) {
  std::string first;
  ScopedDiagnosticHandler quiet(schedule.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && first.empty())
      first = diag.str();
    return success();
  });
  bool ok = succeeded(verifySchedule(schedule, options));
  if (reason)
    *reason = first;
  return ok;
}

/// SDMA_MEMORY_BUDGET, read as the runtime reads it (MemoryBudget::
/// parseBytes): digits, then nothing or B, or K, M, G, T with an optional B
/// or iB (any case; powers of 1024). std::nullopt when unset or malformed
/// (the tools that take the variable refuse a malformed one).
static std::optional<uint64_t> budgetFromEnvironment() {
  const char *text = std::getenv("SDMA_MEMORY_BUDGET");
  if (!text)
    return std::nullopt;
  StringRef value(text);
  uint64_t number = 0;
  if (value.consumeInteger(10, number) || number == 0)
    return std::nullopt;
  unsigned shift = StringSwitch<unsigned>(value.upper())
                       .Cases({"", "B"}, 0)
                       .Cases({"K", "KB", "KIB"}, 10)
                       .Cases({"M", "MB", "MIB"}, 20)
                       .Cases({"G", "GB", "GIB"}, 30)
                       .Cases({"T", "TB", "TIB"}, 40)
                       .Default(64);
  if (shift == 64 || (shift && number > (~uint64_t(0) >> shift)))
    return std::nullopt;
  return number << shift;
}

uint64_t sdma::getDefaultMemoryBudget() {
  if (std::optional<uint64_t> budget = budgetFromEnvironment())
    return *budget;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0)
    return uint64_t(4) << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) / 2;
}
