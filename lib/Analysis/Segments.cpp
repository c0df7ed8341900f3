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
// The MoE pair, E experts per rank, A the major alignment:
//   all_to_allv_2d (dispatch, send rank-major, recv expert-major):
//                   out[sum_{g<e} pad_A(sum_q send[p*E+g] of q)
//                       + sum_{q<r} send[p*E+e] of q, +n) of p
//                     = in[sum_{i<p*E+e} send[i] of r, +n) of r,
//                   n = send[p*E+e] of r = recv[e*R+r] of p;
//   all_to_allv_2d_offset (combine, from expert rank p to token rank r;
//                   send on p holds splits[e*R+r] then offsets at E*R+..):
//                   out[sum_{i<p*E+e} splits[(i%E)*R+r] of i/E, +n) of r
//                     = in[offsets[e*R+r] of p, +n) of p,
//                   n = splits[e*R+r] of p = recv[p*E+e] of r.
// Rows may reach the output through staging buffers (a hierarchical
// schedule stages them for the network): a copyv from a staging buffer
// reads the segment an earlier copyv left there, possibly moved by static
// copies, and must copy exactly its count; the output's segment then keeps
// the segment's origin in the input.
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
  for (const std::vector<Symbol> &group : offset.groups) {
    text += " + pad" + std::to_string(offset.align) + "(";
    for (auto [i, term] : llvm::enumerate(group))
      text += (i ? " + " : "") + describe(term);
    text += ")";
  }
  for (const Symbol &term : offset.terms)
    text += " + " + describe(term);
  return text;
}

SymbolicOffset SegmentTracker::tableOffset(CopyvOp op, unsigned side,
                                           const SymbolicMemory &memory) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  SymbolicOffset offset;
  if (!op.getPacked()[side]) {
    offset.constant =
        field(side ? CopyvOp::kTargetOffset : CopyvOp::kSourceOffset);
    return offset;
  }
  unsigned rank =
      side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
  unsigned table =
      bufferIndex(side ? op.getTargetPrefix() : op.getSourcePrefix());
  int64_t j = field(rank + 1);
  // A forwarded row holds what the count copies read, from their sources.
  std::vector<Symbol> forwarded;
  if (op.isForwarded(side))
    for (const CountEntry &e : forwarding.view(field(rank), table, j))
      forwarded.push_back(memory[e.rank][e.buffer][e.index]);
  const std::vector<Symbol> &row =
      op.isForwarded(side) ? forwarded : memory[field(rank)][table];
  switch (op.getTableForm(side)) {
  case CopyvOp::kPrefix:
    offset.terms.assign(row.begin(), row.begin() + j);
    break;
  case CopyvOp::kAt:
    offset.terms.push_back(row[j]);
    break;
  case CopyvOp::kExpertMajor: {
    int64_t group = j / ranks;
    for (int64_t g = 0; g < group; ++g)
      offset.groups.emplace_back(row.begin() + g * ranks,
                                 row.begin() + (g + 1) * ranks);
    offset.terms.assign(row.begin() + group * ranks, row.begin() + j);
    offset.align = schedule.getMajorAlignment();
    break;
  }
  }
  return offset;
}

LogicalResult SegmentTracker::checkLayout() {
  unsigned in = *schedule.getCollectiveInput();
  unsigned out = *schedule.getCollectiveOutput();
  unsigned send = *schedule.getCollectiveSendCounts();
  std::optional<unsigned> recv = schedule.getCollectiveRecvCounts();
  StringRef kind = *schedule.getCollective();
  bool moe = kind.starts_with("all_to_allv_2d");
  if (moe && !schedule.getExpertCount())
    return schedule.emitOpError("implements ")
           << kind << " but binds no expert count: pass sdma-unroll experts=E";
  int64_t experts = moe ? schedule.getExpertCount().value_or(1) : 1;
  // The combine's send table holds the splits, then their offsets.
  int64_t sendEntries = (kind == "all_to_allv_2d_offset" ? 2 : 1) * experts;
  for (auto [table, perRank] :
       {std::pair(std::optional<unsigned>(send), sendEntries),
        std::pair(recv, experts)})
    if (table && chunksOf(*table) < ranks * perRank)
      return schedule.emitOpError("implements ")
             << kind << " but count table '"
             << schedule.getBufferName(schedule.getBufferArgs()[*table])
             << "' has " << chunksOf(*table) << " entries, fewer than the "
             << ranks * perRank << " it needs ("
             << (perRank == 1 ? "" : std::to_string(perRank) + " x ") << ranks
             << " ranks)";
  bool packed = kind != "all_to_allv";
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
  auto offsetOf = [&](unsigned side) { return tableOffset(op, side, memory); };
  std::optional<StringRef> kind = schedule.getCollective();
  unsigned source = bufferIndex(op.getSource());
  unsigned target = bufferIndex(op.getTarget());
  bool allToAllv = kind && kind->starts_with("all_to_allv");
  if (allToAllv && target == *schedule.getCollectiveInput())
    return op.emitOpError("writes '") << schedule.getBufferName(op.getTarget())
                                      << "', the input of this all_to_allv";
  const Symbol &count =
      memory[field(CopyvOp::kCountRank)][bufferIndex(op.getCounts())]
            [field(CopyvOp::kCountIndex)];
  if (allToAllv && count.rank < 0)
    return op.emitOpError("reads its count from ")
           << schedule.getBufferName(op.getCounts()) << "["
           << field(CopyvOp::kCountIndex) << "] of rank "
           << field(CopyvOp::kCountRank) << ", which nothing wrote";
  // Staging buffers hold segments in fixed slots only: a packed layout's
  // offsets would have to be tied to the counts of the segments in it,
  // which only the output's postcondition does.
  unsigned in = allToAllv ? *schedule.getCollectiveInput() : 0;
  unsigned out = allToAllv ? *schedule.getCollectiveOutput() : 0;
  for (auto [side, buffer, value] : {std::tuple(0u, source, op.getSource()),
                                     std::tuple(1u, target, op.getTarget())})
    if (allToAllv && buffer != in && buffer != out && op.getPacked()[side])
      return op.emitOpError("stages rows in '")
             << schedule.getBufferName(value)
             << "' at offsets read from a table: the verifier follows "
                "staged segments in fixed slots only";
  // Where the rows come from: the input, or a segment an earlier copyv
  // (or a static copy of one) left in a staging buffer.
  Segment origin{field(CopyvOp::kSourceRank),
                 source,
                 offsetOf(0),
                 count,
                 op.getMaxCount(),
                 op};
  if (allToAllv && source != *schedule.getCollectiveInput()) {
    const Segment *staged = nullptr;
    auto w = written.find({origin.sourceRank, source});
    if (w != written.end()) {
      auto found = w->second.segments.find(origin.sourceOffset);
      if (found != w->second.segments.end())
        staged = &found->second;
    }
    if (!staged)
      return op.emitOpError("reads rows from '")
             << schedule.getBufferName(op.getSource()) << "["
             << describe(origin.sourceOffset) << "]' of rank "
             << origin.sourceRank
             << ", where no sdma.copyv (or a copy of one) left a segment";
    if (!(staged->count == count))
      return op.emitOpError("reads its count from ")
             << schedule.getBufferName(op.getCounts()) << "["
             << field(CopyvOp::kCountIndex) << "] of rank "
             << field(CopyvOp::kCountRank) << ", which holds "
             << describe(count) << ", but '"
             << schedule.getBufferName(op.getSource()) << "["
             << describe(origin.sourceOffset) << "]' of rank "
             << origin.sourceRank << " holds a segment of "
             << describe(staged->count) << " rows";
    origin = Segment{staged->sourceRank,
                     staged->sourceBuffer,
                     staged->sourceOffset,
                     count,
                     std::min(staged->max, op.getMaxCount()),
                     op};
  }

  int64_t targetRank = field(CopyvOp::kTargetRank);
  Written &w = written[{targetRank, target}];
  int64_t table = -1, tableRank = -1, form = -1;
  if (op.isTargetPacked()) {
    table = bufferIndex(op.getTargetPrefix());
    tableRank = field(CopyvOp::kTargetPrefixRank);
    form = getTableCode(op, 1);
  }
  if (!w.segments.empty() &&
      (w.table != table || w.tableRank != tableRank || w.form != form))
    return op.emitOpError("lays out '")
           << schedule.getBufferName(op.getTarget()) << "' on rank "
           << targetRank
           << " differently from an earlier sdma.copyv (fixed slots and "
              "packed segments, segments of different count tables, or "
              "of different forms): the verifier cannot tell that they do "
              "not overlap";
  if (form == CopyvOp::kAt)
    return op.emitOpError("writes '")
           << schedule.getBufferName(op.getTarget())
           << "' at offsets read from a table ('at'): the verifier cannot "
              "tell that such segments do not overlap; 'at' is for sources";
  w.table = table, w.tableRank = tableRank, w.form = form;
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
  w.segments[at] = origin;

  // The chunks it may write hold nothing a fixed-size proof can use.
  std::vector<Symbol> &chunks = memory[targetRank][target];
  int64_t begin = table < 0 ? at.constant : 0;
  int64_t end = table < 0 ? at.constant + op.getMaxCount() : chunks.size();
  std::fill(chunks.begin() + begin, chunks.begin() + end, Symbol{});
  return success();
}

std::vector<std::pair<int64_t, Segment>>
SegmentTracker::segmentsIn(const StaticSlice &slice) const {
  std::vector<std::pair<int64_t, Segment>> inside;
  auto w = written.find({slice.rank, bufferIndex(slice.buffer)});
  if (w == written.end() || w->second.table >= 0)
    return inside; // packed segments sit at run-time offsets
  for (const auto &[offset, segment] : w->second.segments)
    if (offset.constant >= slice.offset &&
        offset.constant + segment.max <= slice.offset + slice.count)
      inside.emplace_back(offset.constant - slice.offset, segment);
  return inside;
}

void SegmentTracker::place(
    const StaticSlice &slice,
    const std::vector<std::pair<int64_t, Segment>> &moved) {
  auto it = written.find({slice.rank, bufferIndex(slice.buffer)});
  if (it == written.end() && moved.empty())
    return;
  Written &w = it != written.end()
                   ? it->second
                   : written[{slice.rank, bufferIndex(slice.buffer)}];
  if (w.table >= 0) {
    // A fixed-size write into a packed layout may hit any segment.
    w.segments.clear();
    w.table = w.tableRank = w.form = -1;
  }
  for (auto e = w.segments.begin(); e != w.segments.end();)
    if (e->first.constant < slice.offset + slice.count &&
        slice.offset < e->first.constant + e->second.max)
      e = w.segments.erase(e);
    else
      ++e;
  for (const auto &[offset, segment] : moved) {
    SymbolicOffset at;
    at.constant = slice.offset + offset;
    w.segments[at] = segment;
  }
}

std::vector<SegmentTracker::Expected>
SegmentTracker::expectedAt(int64_t p, int64_t capacity) {
  int64_t send = *schedule.getCollectiveSendCounts();
  StringRef kind = *schedule.getCollective();
  int64_t E = schedule.getExpertCount().value_or(1);
  std::vector<Expected> expected;
  if (kind == "all_to_allv_2d") {
    for (int64_t e = 0; e < E; ++e)
      for (int64_t r = 0; r < ranks; ++r) {
        Expected x{r, e, Symbol{r, send, p * E + e}, e * ranks + r, {}, {}};
        for (int64_t g = 0; g < e; ++g) {
          x.at.groups.emplace_back();
          for (int64_t q = 0; q < ranks; ++q)
            x.at.groups.back().push_back(Symbol{q, send, p * E + g});
        }
        x.at.align = schedule.getMajorAlignment();
        for (int64_t q = 0; q < r; ++q)
          x.at.terms.push_back(Symbol{q, send, p * E + e});
        for (int64_t i = 0; i < p * E + e; ++i)
          x.from.terms.push_back(Symbol{r, send, i});
        expected.push_back(std::move(x));
      }
    return expected;
  }
  if (kind == "all_to_allv_2d_offset") {
    // p is the token rank here; its senders are the expert ranks q.
    for (int64_t q = 0; q < ranks; ++q)
      for (int64_t e = 0; e < E; ++e) {
        Expected x{q, e, Symbol{q, send, e * ranks + p}, q * E + e, {}, {}};
        for (int64_t i = 0; i < q * E + e; ++i)
          x.at.terms.push_back(Symbol{i / E, send, (i % E) * ranks + p});
        x.from.terms.push_back(Symbol{q, send, E * ranks + e * ranks + p});
        expected.push_back(std::move(x));
      }
    return expected;
  }
  bool packed = kind == "all_to_allv_packed";
  for (int64_t r = 0; r < ranks; ++r) {
    Expected x{r, -1, Symbol{r, send, p}, r, {}, {}};
    if (packed) {
      for (int64_t q = 0; q < r; ++q)
        x.at.terms.push_back(Symbol{q, send, p});
      for (int64_t q = 0; q < p; ++q)
        x.from.terms.push_back(Symbol{r, send, q});
    } else {
      x.at.constant = r * capacity;
      x.from.constant = p * capacity;
    }
    expected.push_back(std::move(x));
  }
  return expected;
}

LogicalResult SegmentTracker::checkAllToAllv(const SymbolicMemory &memory) {
  unsigned in = *schedule.getCollectiveInput();
  unsigned out = *schedule.getCollectiveOutput();
  std::optional<unsigned> recv = schedule.getCollectiveRecvCounts();
  StringRef kind = *schedule.getCollective();
  bool slots = kind == "all_to_allv";
  int64_t capacity = chunksOf(out) / ranks;
  StringRef outName = schedule.getBufferName(schedule.getBufferArgs()[out]);
  auto name = [&](unsigned buffer) {
    return schedule.getBufferName(schedule.getBufferArgs()[buffer]);
  };
  for (int64_t p = 0; p < ranks; ++p) {
    auto it = written.find({p, out});
    std::vector<SymbolicOffset> seen;
    for (const Expected &x : expectedAt(p, capacity)) {
      auto fail = [&]() {
        InFlightDiagnostic diag = schedule.emitOpError("does not implement ")
                                  << kind << ": the rows rank " << x.sender
                                  << " sends to rank " << p << " ";
        if (x.expert >= 0)
          diag << "(expert " << x.expert << ") ";
        return diag;
      };
      if (recv && !(memory[p][*recv][x.recvIndex] == x.count))
        return fail() << "are counted in " << name(*recv) << "[" << x.recvIndex
                      << "] of rank " << p << ", which holds "
                      << describe(memory[p][*recv][x.recvIndex])
                      << " at the end, not " << describe(x.count);
      const Segment *segment = nullptr;
      if (it != written.end()) {
        auto found = it->second.segments.find(x.at);
        if (found != it->second.segments.end())
          segment = &found->second;
      }
      if (!segment)
        return fail() << "are never written to " << outName << "["
                      << describe(x.at) << "] on rank " << p;
      std::string reason;
      llvm::raw_string_ostream os(reason);
      if (segment->sourceRank != x.sender || segment->sourceBuffer != in ||
          !(segment->sourceOffset == x.from))
        os << "should come from " << name(in) << "[" << describe(x.from)
           << "] of rank " << x.sender << ", but "
           << name(segment->sourceBuffer) << "["
           << describe(segment->sourceOffset) << "] of rank "
           << segment->sourceRank << " is copied there";
      else if (!(segment->count == x.count))
        os << "number " << describe(x.count) << ", but "
           << describe(segment->count) << " are copied";
      else if (slots && segment->max != capacity)
        os << "may number up to the capacity " << capacity
           << ", but the sdma.copyv that moves them has max " << segment->max;
      if (!reason.empty()) {
        InFlightDiagnostic diag = fail() << reason;
        diag.attachNote(segment->op->getLoc()) << "the sdma.copyv";
        return diag;
      }
      seen.push_back(x.at);
    }
    if (it == written.end())
      continue;
    for (auto &[offset, segment] : it->second.segments)
      if (!llvm::is_contained(seen, offset))
        return segment.op->emitOpError("writes ")
               << outName << "[" << describe(offset) << "] on rank " << p
               << ", which is no sender's segment of " << kind;
  }
  return success();
}
