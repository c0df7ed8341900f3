//===- ResolveCounts.cpp - sdma.copyv with counts the host knows ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Where the host knows an all-to-allv's counts when it builds the plan
// (torch's all_to_all_single with host split sizes; sdma-run's --counts),
// the DMA path needs no run-time sizes: this pass runs the schedule's count
// tables concretely, in a topological order of its ordering graph (the
// schedule is proved race-free, so every such order gives the same
// values), and replaces each sdma.copyv by the sdma.copy it is for these
// counts (nothing where the count is 0). The copies between count tables
// go: the host has their results (what the receive tables hold at the
// end), which it writes itself. A row is a chunk here. A count out of
// range, or a segment past its buffer, is an error naming the op and the
// ranks, as the load/store kernel reports it at run time.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/CountForwarding.h"
#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace sdma {
#define GEN_PASS_DEF_SDMARESOLVECOUNTS
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {

class Resolver {
public:
  Resolver(ScheduleOp schedule) : schedule(schedule) {}

  LogicalResult run(const CountTables &initial, CountTables &final);

private:
  unsigned indexOf(Value buffer) {
    return cast<BlockArgument>(buffer).getArgNumber() - 1;
  }
  /// A copyv side's offset in rows (= chunks), from the tables now.
  int64_t offset(CopyvOp op, unsigned side);
  LogicalResult resolve(CopyvOp op, OpBuilder &builder);

  ScheduleOp schedule;
  int64_t ranks = 0;
  std::optional<CountForwarding> forwarding;
  /// tables[rank][buffer]: a count table's entries (empty: not a table).
  std::vector<std::vector<std::vector<int64_t>>> tables;
};

} // namespace

int64_t Resolver::offset(CopyvOp op, unsigned side) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  if (!op.getPacked()[side])
    return field(side ? CopyvOp::kTargetOffset : CopyvOp::kSourceOffset);
  unsigned rank =
      side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
  unsigned table = indexOf(side ? op.getTargetPrefix() : op.getSourcePrefix());
  int64_t j = field(rank + 1);
  // Forwarded: the entries the count copies read (tables nothing writes).
  std::vector<int64_t> forwarded;
  if (op.isForwarded(side))
    for (const CountEntry &e : forwarding->view(field(rank), table, j))
      forwarded.push_back(tables[e.rank][e.buffer][e.index]);
  const std::vector<int64_t> &row =
      op.isForwarded(side) ? forwarded : tables[field(rank)][table];
  if (op.getTableForm(side) == CopyvOp::kAt)
    return row[j] > (int64_t(1) << 35) ? -1 : row[j];
  int64_t align = schedule.getMajorAlignment(), sum = 0, group = 0;
  for (int64_t i = 0; i < j; ++i) {
    if (row[i] < 0 || row[i] > (int64_t(1) << 35)) // as the kernel: no sum
      return -1;                                   // can overflow
    group += row[i];
    if (op.getTableForm(side) == CopyvOp::kExpertMajor &&
        (i + 1) % ranks == 0) {
      sum += std::max(align, (group + align - 1) / align * align);
      group = 0;
    }
  }
  return sum + group;
}

LogicalResult Resolver::resolve(CopyvOp op, OpBuilder &builder) {
  auto field = [&](unsigned i) { return *op.getConstantField(i); };
  int64_t from = field(CopyvOp::kSourceRank), to = field(CopyvOp::kTargetRank);
  int64_t n = tables[field(CopyvOp::kCountRank)][indexOf(op.getCounts())]
                    [field(CopyvOp::kCountIndex)];
  if (n < 0 || n > op.getMaxCount())
    return op.emitOpError("rank ")
           << from << " was to send " << n << " rows to rank " << to << ", "
           << (n < 0 ? "a negative count"
                     : "more than its capacity of " +
                           std::to_string(op.getMaxCount()));
  if (n == 0) { // nothing moves; its offsets are not used
    op.erase();
    return success();
  }
  int64_t src = offset(op, 0), dst = offset(op, 1);
  int64_t srcEnd = *schedule.getBufferChunks(op.getSource(), ranks);
  int64_t dstEnd = *schedule.getBufferChunks(op.getTarget(), ranks);
  if (src < 0 || dst < 0 || src > srcEnd - n || dst > dstEnd - n)
    return op.emitOpError("rank ")
           << from << "'s " << n << " rows for rank " << to << " lie at " << src
           << " of '" << schedule.getBufferName(op.getSource()) << "' ("
           << srcEnd << " rows) and go to " << dst << " of '"
           << schedule.getBufferName(op.getTarget()) << "' (" << dstEnd
           << " rows): past the end";
  if (n > 0) {
    builder.setInsertionPoint(op);
    CopyOp::create(builder, op.getLoc(), op.getSource(), op.getTarget(),
                   ValueRange(), ArrayRef<int64_t>({from, src, n, to, dst, n}),
                   IntegerAttr(), op.getPull());
  }
  op.erase();
  return success();
}

LogicalResult Resolver::run(const CountTables &initial, CountTables &final) {
  if (!schedule.getRanks())
    return schedule.emitOpError("has no fixed rank count: run sdma-unroll "
                                "before sdma-resolve-counts");
  ranks = *schedule.getRanks();
  auto buffers = schedule.getBufferArgs();
  tables.assign(ranks, std::vector<std::vector<int64_t>>(buffers.size()));
  for (auto [b, buffer] : llvm::enumerate(buffers)) {
    if (!schedule.isCountBuffer(buffer))
      continue;
    int64_t entries = *schedule.getBufferChunks(buffer, ranks);
    auto given = initial.find(schedule.getBufferName(buffer).str());
    for (int64_t r = 0; r < ranks; ++r) {
      std::vector<int64_t> &t = tables[r][b];
      t.assign(entries, 0);
      if (given == initial.end())
        continue;
      if (given->second.size() != size_t(ranks) ||
          given->second[r].size() != size_t(entries))
        return schedule.emitOpError("count table '")
               << schedule.getBufferName(buffer) << "' has " << entries
               << " entries on each of " << ranks
               << " ranks, but the counts given do not have that shape";
      t = given->second[r];
    }
  }
  FailureOr<CountForwarding> forwarded = CountForwarding::build(schedule);
  if (failed(forwarded))
    return failure();
  forwarding = std::move(*forwarded);
  FailureOr<ScheduleGraph> graph = ScheduleGraph::build(schedule);
  if (failed(graph))
    return failure();
  // Collect first: resolving erases ops the graph points at.
  std::vector<Operation *> order;
  for (unsigned v : graph->getTopologicalOrder())
    order.push_back(graph->getNodes()[v].op);
  OpBuilder builder(schedule.getContext());
  std::vector<Operation *> exchange;
  for (Operation *op : order) {
    if (auto copyv = dyn_cast<CopyvOp>(op)) {
      if (failed(resolve(copyv, builder)))
        return failure();
      continue;
    }
    auto copy = dyn_cast<CopyOp>(op);
    if (!copy || !schedule.isCountBuffer(copy.getSource()))
      continue;
    // A copy between count tables (the verifier allows no other kind).
    StaticSlice s = *getStaticSlice(cast<TransferOpInterface>(op), 0);
    StaticSlice d = *getStaticSlice(cast<TransferOpInterface>(op), 1);
    const std::vector<int64_t> &from = tables[s.rank][indexOf(s.buffer)];
    std::vector<int64_t> &to = tables[d.rank][indexOf(d.buffer)];
    std::copy(from.begin() + s.offset, from.begin() + s.offset + s.count,
              to.begin() + d.offset);
    exchange.push_back(op);
  }
  for (Operation *op : exchange)
    op->erase();
  for (auto [b, buffer] : llvm::enumerate(buffers))
    if (schedule.isCountBuffer(buffer)) {
      std::vector<std::vector<int64_t>> &out =
          final[schedule.getBufferName(buffer).str()];
      out.clear();
      for (int64_t r = 0; r < ranks; ++r)
        out.push_back(tables[r][b]);
    }
  return success();
}

LogicalResult sdma::resolveCounts(ScheduleOp schedule,
                                  const CountTables &initial,
                                  CountTables &final) {
  return Resolver(schedule).run(initial, final);
}

namespace {
struct SdmaResolveCountsPass
    : public sdma::impl::SdmaResolveCountsBase<SdmaResolveCountsPass> {
  using SdmaResolveCountsBase::SdmaResolveCountsBase;

  void runOnOperation() override {
    // {"TABLE": [[rank 0's entries], [rank 1's], ...], ...}
    CountTables initial;
    if (!counts.empty()) {
      auto file = llvm::MemoryBuffer::getFile(counts);
      llvm::Expected<llvm::json::Value> json =
          file ? llvm::json::parse((*file)->getBuffer())
               : llvm::Expected<llvm::json::Value>(
                     llvm::createStringError("cannot open"));
      llvm::json::Path::Root root;
      if (!json || !llvm::json::fromJSON(*json, initial, root)) {
        if (!json)
          llvm::consumeError(json.takeError());
        getOperation().emitError("sdma-resolve-counts: '")
            << counts
            << "' is not a JSON object of count tables ({\"name\": [[rank "
               "0's entries], ...]})";
        return signalPassFailure();
      }
    }
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>()) {
      CountTables final;
      if (failed(resolveCounts(schedule, initial, final)))
        return signalPassFailure();
    }
  }
};
} // namespace
