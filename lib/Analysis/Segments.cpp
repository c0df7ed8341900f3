//===- Segments.cpp - symbolic contents of run-time-sized copies ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// all_to_allv's postcondition, for every count value up to the capacity:
// on receiver p, the segment of sender r holds the rows r sent to p.
//   capacity slots: out[r*C, +n) of p = in[p*C, +n) of r, n = send[p] of r,
//                   and each copyv's max is C;
//   packed (all_to_allv_packed):
//                   out[sum_{q<r} send[p] of q, +n) of p
//                     = in[sum_{q<p} send[q] of r, +n) of r,
// Where a receive-count table is named (required when packed), recv[r] of
// p must hold send[p] of r at the end.
// A copyv's offsets are read as expressions over the count-table symbols
// its reads see, so a packed layout is proved when the exchange phase put
// the right counts where the data phase reads them, in the right order.
//
//===----------------------------------------------------------------------===//

#include "Segments.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sdma;
using namespace sdma::detail;

int64_t SegmentTracker::chunksOf(unsigned buffer) {
  return *schedule.getBufferChunks(schedule.getBufferArgs()[buffer], ranks);
}

std::string SegmentTracker::describe(const Symbol &symbol) {
  if (symbol.rank < 0)
    return "nothing (never written)";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << schedule.getBufferName(schedule.getBufferArgs()[symbol.buffer]) << "["
     << symbol.chunk << "] of rank " << symbol.rank;
  return text;
}

std::string SegmentTracker::describe(const SymbolicOffset &offset) {
  std::string text = std::to_string(offset.constant);
  for (const Symbol &term : offset.terms)
    text += " + " + describe(term);
  return text;
}

LogicalResult SegmentTracker::checkLayout() {
  unsigned in = *schedule.getCollectiveInput();
  unsigned out = *schedule.getCollectiveOutput();
  unsigned send = *schedule.getCollectiveSendCounts();
  std::optional<unsigned> recv = schedule.getCollectiveRecvCounts();
  for (std::optional<unsigned> table : {std::optional<unsigned>(send), recv})
    if (table && chunksOf(*table) < ranks)
      return schedule.emitOpError("implements all_to_allv but count table '")
             << schedule.getBufferName(schedule.getBufferArgs()[*table])
             << "' has " << chunksOf(*table) << " entries, fewer than the "
             << ranks << " ranks";
  bool packed = schedule.getCollective() == "all_to_allv_packed";
  if (!packed && (chunksOf(out) % ranks || chunksOf(in) != chunksOf(out)))
    return schedule.emitOpError("implements all_to_allv with capacity slots "
                                "but its buffers have ")
           << chunksOf(in) << " and " << chunksOf(out) << " chunks; with "
           << ranks << " ranks both need R x C chunks for one capacity C";
  for (Operation &op : schedule.getBody().getOps()) {
    auto transfer = dyn_cast<TransferOpInterface>(&op);
    if (!transfer)
      continue;
    for (unsigned i = 0, e = transfer.getNumSlices(); i < e; ++i) {
      unsigned buffer = bufferIndex(transfer.getSlice(i).buffer);
      if (transfer.isSliceWritten(i) && (buffer == in || buffer == out))
        return op.emitOpError("writes '")
               << schedule.getBufferName(transfer.getSlice(i).buffer)
               << "', which this all_to_allv fills with sdma.copyv: the "
                  "verifier follows run-time-sized rows only where "
                  "sdma.copyv alone writes";
    }
  }
  return success();
}

LogicalResult SegmentTracker::record(CopyvOp op, SymbolicMemory &memory) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  auto offsetOf = [&](unsigned side) {
    SymbolicOffset offset;
    if (!op.getPacked()[side]) {
      offset.constant =
          field(side ? CopyvOp::kTargetOffset : CopyvOp::kSourceOffset);
      return offset;
    }
    unsigned rank =
        side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
    const std::vector<Symbol> &row =
        memory[field(rank)]
              [bufferIndex(side ? op.getTargetPrefix() : op.getSourcePrefix())];
    offset.terms.assign(row.begin(), row.begin() + field(rank + 1));
    return offset;
  };
  std::optional<StringRef> kind = schedule.getCollective();
  unsigned source = bufferIndex(op.getSource());
  unsigned target = bufferIndex(op.getTarget());
  if (kind && kind->starts_with("all_to_allv") &&
      (source != *schedule.getCollectiveInput() ||
       target != *schedule.getCollectiveOutput()))
    return op.emitOpError("moves rows from '")
           << schedule.getBufferName(op.getSource()) << "' to '"
           << schedule.getBufferName(op.getTarget())
           << "': the verifier proves all_to_allv when sdma.copyv moves "
              "rows from its input straight to its output";

  int64_t targetRank = field(CopyvOp::kTargetRank);
  Written &w = written[{targetRank, target}];
  int64_t table = -1, tableRank = -1;
  if (op.isTargetPacked()) {
    table = bufferIndex(op.getTargetPrefix());
    tableRank = field(CopyvOp::kTargetPrefixRank);
  }
  if (!w.segments.empty() && (w.table != table || w.tableRank != tableRank))
    return op.emitOpError("lays out '")
           << schedule.getBufferName(op.getTarget()) << "' on rank "
           << targetRank
           << " differently from an earlier sdma.copyv (fixed slots and "
              "packed segments, or segments of different count tables): "
              "the verifier cannot tell that they do not overlap";
  w.table = table, w.tableRank = tableRank;
  SymbolicOffset at = offsetOf(1);
  if (table < 0)
    for (auto &[offset, segment] : w.segments)
      if (offset.constant != at.constant &&
          offset.constant < at.constant + op.getMaxCount() &&
          at.constant < offset.constant + segment.max)
        return op.emitOpError("writes a slot of '")
               << schedule.getBufferName(op.getTarget()) << "' on rank "
               << targetRank << " that overlaps the slot at " << offset.constant
               << " another sdma.copyv writes";
  const Symbol &count =
      memory[field(CopyvOp::kCountRank)][bufferIndex(op.getCounts())]
            [field(CopyvOp::kCountIndex)];
  w.segments[at] = Segment{field(CopyvOp::kSourceRank),
                           source,
                           offsetOf(0),
                           count,
                           op.getMaxCount(),
                           op};

  // The chunks it may write hold nothing a fixed-size proof can use.
  std::vector<Symbol> &chunks = memory[targetRank][target];
  int64_t begin = table < 0 ? at.constant : 0;
  int64_t end = table < 0 ? at.constant + op.getMaxCount() : chunks.size();
  std::fill(chunks.begin() + begin, chunks.begin() + end, Symbol{});
  return success();
}

LogicalResult SegmentTracker::checkAllToAllv(const SymbolicMemory &memory) {
  unsigned in = *schedule.getCollectiveInput();
  unsigned out = *schedule.getCollectiveOutput();
  int64_t send = *schedule.getCollectiveSendCounts();
  std::optional<unsigned> recv = schedule.getCollectiveRecvCounts();
  bool packed = schedule.getCollective() == "all_to_allv_packed";
  int64_t capacity = chunksOf(out) / ranks;
  StringRef outName = schedule.getBufferName(schedule.getBufferArgs()[out]);
  auto fail = [&](int64_t r, int64_t p) {
    InFlightDiagnostic diag =
        schedule.emitOpError("does not implement all_to_allv: the rows rank ");
    diag << r << " sends to rank " << p << " ";
    return diag;
  };
  for (int64_t p = 0; p < ranks; ++p) {
    auto it = written.find({p, out});
    std::vector<SymbolicOffset> expected;
    for (int64_t r = 0; r < ranks; ++r) {
      Symbol count{r, send, p};
      SymbolicOffset at, from;
      if (recv && !(memory[p][*recv][r] == count))
        return fail(r, p) << "are counted in "
                          << schedule.getBufferName(
                                 schedule.getBufferArgs()[*recv])
                          << "[" << r << "] of rank " << p << ", which holds "
                          << describe(memory[p][*recv][r])
                          << " at the end, not " << describe(count);
      if (packed) {
        for (int64_t q = 0; q < r; ++q)
          at.terms.push_back(Symbol{q, send, p});
        for (int64_t q = 0; q < p; ++q)
          from.terms.push_back(Symbol{r, send, q});
      } else {
        at.constant = r * capacity;
        from.constant = p * capacity;
      }
      const Segment *segment = nullptr;
      if (it != written.end()) {
        auto found = it->second.segments.find(at);
        if (found != it->second.segments.end())
          segment = &found->second;
      }
      if (!segment)
        return fail(r, p) << "are never written to " << outName << "["
                          << describe(at) << "] on rank " << p;
      std::string reason;
      llvm::raw_string_ostream os(reason);
      if (segment->sourceRank != r || segment->sourceBuffer != in ||
          !(segment->sourceOffset == from))
        os << "should come from "
           << schedule.getBufferName(schedule.getBufferArgs()[in]) << "["
           << describe(from) << "] of rank " << r << ", but "
           << schedule.getBufferName(
                  schedule.getBufferArgs()[segment->sourceBuffer])
           << "[" << describe(segment->sourceOffset) << "] of rank "
           << segment->sourceRank << " is copied there";
      else if (!(segment->count == count))
        os << "number " << describe(count) << ", but "
           << describe(segment->count) << " are copied";
      else if (!packed && segment->max != capacity)
        os << "may number up to the capacity " << capacity
           << ", but the sdma.copyv that moves them has max " << segment->max;
      if (!reason.empty()) {
        InFlightDiagnostic diag = fail(r, p) << reason;
        diag.attachNote(segment->op->getLoc()) << "the sdma.copyv";
        return diag;
      }
      expected.push_back(at);
    }
    if (it == written.end())
      continue;
    for (auto &[offset, segment] : it->second.segments)
      if (!llvm::is_contained(expected, offset))
        return segment.op->emitOpError("writes ")
               << outName << "[" << describe(offset) << "] on rank " << p
               << ", which is no sender's segment of all_to_allv";
  }
  return success();
}
