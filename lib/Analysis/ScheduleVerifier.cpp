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
//     sdma.reduce leaves contribution sets (Contributions.h): a reduction's
//     output chunk must combine each rank's input chunk exactly once.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleVerifier.h"
#include "Contributions.h"
#include "Segments.h"
#include "sdma/Analysis/CountForwarding.h"
#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/IR/IterationLoc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
using namespace sdma;
using sdma::detail::Contributions;
using sdma::detail::SegmentTracker;
using sdma::detail::Symbol;

namespace {

/// One access of a data op to a run of chunks. A packed segment of
/// sdma.copyv (its offset a prefix sum known only at run time) spans the
/// whole buffer here but is disjoint from the other segments of the same
/// count-table row laid out in the same form (packed or expert-major):
/// `table` >= 0 names that row, `segment` the entry and `form` the layout.
/// An offset read from one entry (`at`) may lie anywhere: no table.
struct Access {
  unsigned node;
  int64_t rank;
  unsigned buffer;
  int64_t begin, end;
  bool write;
  int64_t table = -1, tableRank = -1, segment = -1, form = -1;
  /// The destination of sdma.reduce: its operator's code, else -1.
  int accumulate = -1;

  bool disjointSegments(const Access &o) const {
    return table >= 0 && table == o.table && tableRank == o.tableRank &&
           form == o.form && segment != o.segment;
  }
  /// Two reduces into the same slice with the same operator accumulate:
  /// they commute, so they need no order.
  bool accumulatesWith(const Access &o) const {
    return accumulate >= 0 && accumulate == o.accumulate && begin == o.begin &&
           end == o.end;
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
  LogicalResult checkReduction(StringRef kind,
                               const sdma::detail::SymbolicMemory &memory);
  LogicalResult execute(const ScheduleGraph &graph,
                        sdma::detail::SymbolicMemory &memory,
                        SegmentTracker &segments);

  ScheduleOp schedule;
  std::optional<CountForwarding> forwarding;
  std::optional<Contributions> contributions;
  /// The operator every reduction output was combined with.
  std::optional<std::string> reduction;
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
      // A prefix (plain or expert-major) reads the entries before j; `at`
      // reads entry j; a forwarded prefix reads, instead, the entries the
      // count copies into them read (runs of them merged).
      bool at = op.getTableForm(side) == CopyvOp::kAt;
      bool forwarded = op.isForwarded(side);
      if (forwarded) {
        std::vector<CountEntry> from =
            forwarding->view(field(prefixRank), bufferIndex(table), index);
        llvm::sort(from);
        for (size_t i = 0; i < from.size();) {
          size_t j = i + 1;
          while (j < from.size() && from[j].rank == from[i].rank &&
                 from[j].buffer == from[i].buffer &&
                 from[j].index == from[j - 1].index + 1)
            ++j;
          accesses.push_back({node, from[i].rank, from[i].buffer, from[i].index,
                              from[j - 1].index + 1, false});
          i = j;
        }
      } else if (index > 0 || at) {
        accesses.push_back({node, field(prefixRank), bufferIndex(table),
                            at ? index : 0, index + (at ? 1 : 0), false});
      }
      data.end = *schedule.getBufferChunks(buffer, ranks);
      if (!at) {
        // Segments of one row are disjoint when read alike: a forwarded
        // row is another form (it holds the senders' entries while the
        // table itself may still be filling).
        data.table = bufferIndex(table);
        data.tableRank = field(prefixRank);
        data.segment = index;
        data.form = getTableCode(op, side);
      }
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
    bool selfCopy = isa<CopyOp>(node.op) && *getStaticSlice(transfer, 0) ==
                                                *getStaticSlice(transfer, 1);
    auto reduce = dyn_cast<ReduceOp>(node.op);
    int kind = reduce ? static_cast<int>(
                            llvm::find(ReduceOp::getKinds(), reduce.getKind()) -
                            ReduceOp::getKinds().begin())
                      : -1;
    for (unsigned s = 0, e = selfCopy ? 1 : transfer.getNumSlices(); s < e;
         ++s) {
      StaticSlice slice = *getStaticSlice(transfer, s);
      unsigned buffer = bufferIndex(slice.buffer);
      for (bool write : {false, true}) {
        if (write ? !transfer.isSliceWritten(s) : !transfer.isSliceRead(s))
          continue;
        Access access{
            static_cast<unsigned>(i),   slice.rank, buffer, slice.offset,
            slice.offset + slice.count, write};
        if (reduce && s == 0)
          access.accumulate = kind;
        accesses.push_back(access);
      }
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
          a.accumulatesWith(b) || graph.ordered(a.node, b.node))
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
  auto kindName = [&](int64_t code) {
    return ReduceOp::getKinds()[code].str();
  };
  if (symbol.rank == Contributions::kUndefined)
    return "a " + kindName(symbol.buffer) + " over a chunk never written";
  if (symbol.rank == Contributions::kMixed)
    return "a mix of different reductions (the last a " +
           kindName(symbol.buffer) + ")";
  if (symbol.rank < 0 && symbol.rank != Contributions::kReduced)
    return "nothing (never written)";
  auto bufferName = [&](int64_t buffer) {
    return schedule.getBufferName(schedule.getBufferArgs()[buffer]);
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  if (symbol.rank != Contributions::kReduced) {
    os << bufferName(symbol.buffer) << "[" << symbol.chunk << "] of rank "
       << symbol.rank;
    return text;
  }
  Symbol scratch;
  ArrayRef<Symbol> terms = contributions->terms(symbol, scratch);
  os << "the " << kindName(symbol.buffer) << " of ";
  // "in[3] of ranks 0, 1, 1, 2" when every term is one chunk of one buffer.
  bool oneChunk = llvm::all_of(terms, [&](const Symbol &t) {
    return t.buffer == terms[0].buffer && t.chunk == terms[0].chunk;
  });
  if (oneChunk) {
    os << bufferName(terms[0].buffer) << "[" << terms[0].chunk << "] of ranks ";
    llvm::interleaveComma(terms, os, [&](const Symbol &t) { os << t.rank; });
    return text;
  }
  llvm::interleave(
      terms, os,
      [&](const Symbol &t) {
        os << bufferName(t.buffer) << "[" << t.chunk << "] of rank " << t.rank;
      },
      ", ");
  return text;
}

/// all_reduce, reduce_scatter and reduce: every output chunk combines
/// input chunk j of every rank exactly once, with one operator throughout.
LogicalResult
ScheduleVerifier::checkReduction(StringRef kind,
                                 const sdma::detail::SymbolicMemory &memory) {
  unsigned in = *schedule.getCollectiveInput();
  unsigned out = *schedule.getCollectiveOutput();
  int64_t outChunks =
      *schedule.getBufferChunks(schedule.getBufferArgs()[out], ranks);
  int64_t root = schedule.getRoot().value_or(0);
  std::optional<int> kindSeen;
  for (int64_t r = 0; r < ranks; ++r) {
    if (kind == "reduce" && r != root)
      continue;
    for (int64_t i = 0; i < outChunks; ++i) {
      int64_t j = kind == "reduce_scatter" ? r * outChunks + i : i;
      const Symbol &actual = memory[r][out][i];
      Symbol scratch;
      ArrayRef<Symbol> terms = contributions->terms(actual, scratch);
      int actualKind = Contributions::kindOf(actual);
      bool exact = static_cast<int64_t>(terms.size()) == ranks;
      for (int64_t p = 0; exact && p < ranks; ++p)
        exact = terms[p] == Symbol{p, static_cast<int64_t>(in), j};
      if (exact && actualKind >= 0 && kindSeen && *kindSeen != actualKind)
        return schedule.emitOpError("does not implement ")
               << kind << ": chunk " << i << " of "
               << schedule.getBufferName(schedule.getBufferArgs()[out])
               << " on rank " << r << " holds " << describe(actual)
               << ", but other chunks hold a "
               << ReduceOp::getKinds()[*kindSeen]
               << " (one operator throughout)";
      if (exact) {
        if (actualKind >= 0)
          kindSeen = actualKind;
        continue;
      }
      // Name what is missing and what is counted twice.
      std::string missing, twice;
      llvm::raw_string_ostream m(missing), t(twice);
      for (int64_t p = 0; p < ranks; ++p) {
        Symbol want{p, static_cast<int64_t>(in), j};
        size_t n = llvm::count(terms, want);
        if (n == 0)
          m << (missing.empty() ? "" : ", ") << p;
        if (n > 1)
          t << (twice.empty() ? "" : ", ") << p << " (" << n << " times)";
      }
      InFlightDiagnostic diag =
          schedule.emitOpError("does not implement ")
          << kind << ": afterwards chunk " << i << " of "
          << schedule.getBufferName(schedule.getBufferArgs()[out])
          << " on rank " << r << " holds " << describe(actual)
          << ", but should combine "
          << schedule.getBufferName(schedule.getBufferArgs()[in]) << "[" << j
          << "] of every rank exactly once";
      if (!missing.empty())
        diag << "; missing rank " << missing;
      if (!twice.empty())
        diag << "; counted more than once: rank " << twice;
      return diag;
    }
  }
  if (kindSeen)
    reduction = ReduceOp::getKinds()[*kindSeen].str();
  return success();
}

/// The buffer sizes a fixed-size collective needs.
LogicalResult ScheduleVerifier::checkStaticKind(StringRef kind) {
  auto chunksOf = [&](unsigned buffer) {
    return *schedule.getBufferChunks(schedule.getBufferArgs()[buffer], ranks);
  };
  int64_t inChunks = chunksOf(*schedule.getCollectiveInput());
  int64_t outChunks = chunksOf(*schedule.getCollectiveOutput());
  bool perRankIn =
      kind == "all_to_all" || kind == "scatter" || kind == "reduce_scatter";
  int64_t c = kind == "all_to_all" ? outChunks / ranks
              : (kind == "scatter" || kind == "reduce_scatter") ? outChunks
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

/// Runs the data ops symbolically in a topological order of `graph`.
LogicalResult ScheduleVerifier::execute(const ScheduleGraph &graph,
                                        sdma::detail::SymbolicMemory &memory,
                                        SegmentTracker &segments) {
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
    StaticSlice s0 = *getStaticSlice(transfer, 0);
    StaticSlice s1 = *getStaticSlice(transfer, 1);
    std::vector<Symbol> d0 = read(s0);
    if (auto reduce = dyn_cast<ReduceOp>(transfer.getOperation())) {
      unsigned kind = llvm::find(ReduceOp::getKinds(), reduce.getKind()) -
                      ReduceOp::getKinds().begin();
      std::vector<Symbol> d1 = read(s1);
      for (size_t i = 0; i < d0.size(); ++i) {
        std::optional<Symbol> value =
            contributions->combine(kind, d0[i], d1[i]);
        if (!value)
          return schedule.emitOpError("is too large to verify: its "
                                      "reductions' contribution sets need "
                                      "more than the verifier's memory "
                                      "budget of ")
                 << formatBytes(budget);
        d0[i] = *value;
      }
      write(s0, d0);
      segments.place(s0, {});
      continue;
    }
    auto moved = segments.segmentsIn(s0);
    if (isa<SwapOp>(transfer.getOperation())) {
      std::vector<Symbol> d1 = read(s1);
      auto back = segments.segmentsIn(s1);
      write(s0, d1);
      write(s1, d0);
      segments.place(s0, back);
      segments.place(s1, moved);
      continue;
    }
    write(s1, d0);
    segments.place(s1, moved);
    if (isa<BcastOp>(transfer.getOperation())) {
      write(*getStaticSlice(transfer, 2), d0);
      segments.place(*getStaticSlice(transfer, 2), moved);
    }
  }
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
  SegmentTracker segments(schedule, ranks, *forwarding);
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
  contributions.emplace(budget - bytes);
  if (failed(execute(graph, memory, segments)))
    return failure();
  if (dynamic)
    return segments.checkAllToAllv(memory);
  if (ScheduleOp::isReduction(*kind))
    return checkReduction(*kind, memory);

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
  FailureOr<CountForwarding> forwarded = CountForwarding::build(schedule);
  if (failed(forwarded))
    return failure();
  forwarding = std::move(*forwarded);
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
  report.reduction = reduction;
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
  if (reduction)
    os << " with " << *reduction;
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
