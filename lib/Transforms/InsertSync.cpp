//===- InsertSync.cpp - lower ordering to per-engine notify/poll ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include <map>
#include <set>

namespace sdma {
#define GEN_PASS_DEF_SDMAINSERTSYNC
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {

/// Flags of every rank: 0 launch, 1 completions, 2 + q written by queue q.
constexpr int64_t kLaunchFlag = 0;
constexpr int64_t kDoneFlag = 1;
constexpr int64_t kFirstQueueFlag = 2;

struct DataOp {
  unsigned node; // in the ScheduleGraph
  TransferOpInterface op;
  int64_t rank, engine;
  unsigned queue; // index into `queues`
  int64_t pos;    // position in its queue
};

/// Per chunk of every (rank, buffer), the latest data op that wrote it and
/// the ops that read it since, in topological order: what an op touching
/// the chunk conflicts with. A later write needs only the latest writer
/// and the readers since (the writer waited for those before it, in a
/// race-free schedule — the verifier's precondition for this pass), so a
/// write clears the readers. Used only where every data op has static
/// slices and the chunks fit a budget; otherwise sdma-insert-sync orders
/// every op after all that happens before it.
class ChunkAccesses {
public:
  /// False (use happens-before alone) for dynamic slices or too many
  /// chunks.
  bool init(ScheduleOp schedule, ArrayRef<DataOp> ops) {
    int64_t ranks = *schedule.getRanks();
    uint64_t total = 0;
    for (BlockArgument buffer : schedule.getBufferArgs()) {
      std::optional<int64_t> chunks = schedule.getBufferChunks(buffer, ranks);
      if (!chunks)
        return false;
      base[buffer] = total;
      total += uint64_t(ranks) * uint64_t(*chunks);
      perRank[buffer] = *chunks;
    }
    if (total > kMaxChunks)
      return false;
    for (const DataOp &x : ops) {
      TransferOpInterface op = x.op;
      if (!cast<FieldsOpInterface>(op.getOperation()).hasStaticFields())
        return false;
      for (unsigned i = 0; i < op.getNumSlices(); ++i)
        if (!getStaticSlice(op, i) || !base.count(op.getSlice(i).buffer))
          return false;
    }
    writer.assign(total, -1);
    readers.assign(total, {});
    dataOps = ops;
    return true;
  }

  /// Calls `f` with every earlier data op that op `i` conflicts with (some
  /// more than once), then records op `i`'s accesses.
  void conflicts(unsigned i, llvm::function_ref<void(unsigned)> f) {
    TransferOpInterface op = dataOps[i].op;
    for (unsigned s = 0; s < op.getNumSlices(); ++s) {
      auto [first, end] = chunks(op, s);
      for (uint64_t c = first; c < end; ++c) {
        if (writer[c] >= 0)
          f(writer[c]);
        if (op.isSliceWritten(s))
          for (int r : readers[c])
            f(r);
      }
    }
    for (unsigned s = 0; s < op.getNumSlices(); ++s) {
      auto [first, end] = chunks(op, s);
      for (uint64_t c = first; c < end; ++c)
        if (op.isSliceWritten(s)) {
          writer[c] = static_cast<int>(i);
          std::vector<int>().swap(readers[c]);
        } else {
          readers[c].push_back(static_cast<int>(i));
        }
    }
  }

private:
  /// The chunk indices [first, end) slice `s` of `op` covers.
  std::pair<uint64_t, uint64_t> chunks(TransferOpInterface op, unsigned s) {
    StaticSlice slice = *getStaticSlice(op, s);
    uint64_t first = base[slice.buffer] +
                     uint64_t(slice.rank) * perRank[slice.buffer] +
                     uint64_t(slice.offset);
    return {first, first + uint64_t(slice.count)};
  }

  static constexpr uint64_t kMaxChunks = uint64_t(1) << 25;
  llvm::DenseMap<Value, uint64_t> base, perRank;
  std::vector<int> writer;
  std::vector<std::vector<int>> readers;
  ArrayRef<DataOp> dataOps;
};

class SyncInserter {
public:
  SyncInserter(ScheduleOp schedule, bool prelaunch, bool perOpCompletion)
      : schedule(schedule), prelaunch(prelaunch),
        perOpCompletion(perOpCompletion) {}
  LogicalResult run();

private:
  ScheduleOp schedule;
  bool prelaunch, perOpCompletion;
};

} // namespace

LogicalResult SyncInserter::run() {
  if (!schedule.getRanks())
    return schedule.emitOpError("has no fixed rank count: run sdma-unroll "
                                "before sdma-insert-sync");
  for (Operation &op : schedule.getBody().getOps()) {
    if (isa<NotifyOp, PollOp>(op))
      return op.emitOpError("is already engine-level: sdma-insert-sync runs "
                            "once");
    if (isa<TransferOpInterface>(op) && !op.getAttr("engine"))
      return op.emitOpError("has no engine: run sdma-assign-engines before "
                            "sdma-insert-sync");
  }
  FailureOr<ScheduleGraph> graph = ScheduleGraph::build(schedule);
  if (failed(graph))
    return failure();

  // Queues and data ops, in a topological order (each queue in program
  // order, which the engine edges make consistent with it).
  std::map<std::pair<int64_t, int64_t>, unsigned> queueIndex;
  for (Operation &op : schedule.getBody().getOps())
    if (auto transfer = dyn_cast<TransferOpInterface>(&op))
      queueIndex.try_emplace({getIssuingRank(transfer),
                              op.getAttrOfType<IntegerAttr>("engine").getInt()},
                             0);
  std::vector<std::pair<int64_t, int64_t>> queues;
  for (auto &[key, index] : queueIndex) {
    index = queues.size();
    queues.push_back(key);
  }
  size_t numQueues = queues.size();
  std::vector<DataOp> dataOps;
  std::vector<int> dataIndexOfNode(graph->getNodes().size(), -1);
  std::vector<int64_t> queueLength(numQueues, 0);
  for (unsigned v : graph->getTopologicalOrder()) {
    auto transfer = dyn_cast<TransferOpInterface>(graph->getNodes()[v].op);
    if (!transfer)
      continue;
    int64_t rank = getIssuingRank(transfer);
    int64_t engine = transfer->getAttrOfType<IntegerAttr>("engine").getInt();
    unsigned queue = queueIndex[{rank, engine}];
    dataIndexOfNode[v] = dataOps.size();
    dataOps.push_back({v, transfer, rank, engine, queue, queueLength[queue]++});
  }

  // knows[i][q]: the last position of queue q known complete when op i
  // starts (absent: none). Each op polls for the latest op per other queue
  // it must follow, unless what it already knows covers it. Sparse: an op
  // knows about the few queues it depends on, not all R x engines of them.
  using Knowledge = llvm::SmallDenseMap<unsigned, int64_t, 8>;
  auto known = [](const Knowledge &k, unsigned q) -> int64_t {
    auto it = k.find(q);
    return it == k.end() ? -1 : it->second;
  };
  auto learn = [](Knowledge &k, unsigned q, int64_t pos) {
    auto [it, inserted] = k.try_emplace(q, pos);
    if (!inserted)
      it->second = std::max(it->second, pos);
  };
  std::vector<Knowledge> knows(dataOps.size());
  ChunkAccesses accesses;
  bool byConflict = accesses.init(schedule, dataOps);
  std::vector<int> lastInQueue(numQueues, -1);
  std::vector<SmallVector<unsigned>> waitsFor(dataOps.size());
  // The polls of data op i, from `before`: per other queue, the latest data
  // op that happens before it (queue -> data-op index).
  using Latest = llvm::SmallDenseMap<unsigned, int, 4>;
  auto planPolls = [&](unsigned i, const Latest &hb) {
    const DataOp &x = dataOps[i];
    // Only the earlier ops that touch the same bytes (one of them writing)
    // must be waited for; ordering the schedule states beyond that (a
    // rank-wide fence, say) does not change what memory ends up holding.
    Latest conflicting;
    if (byConflict)
      accesses.conflicts(i, [&](unsigned d) {
        const DataOp &y = dataOps[d];
        auto it = hb.find(y.queue);
        // Happens before x: its queue's latest op before x is at or past it.
        if (y.queue != x.queue && it != hb.end() &&
            dataOps[it->second].pos >= y.pos) {
          auto [at, inserted] = conflicting.try_emplace(y.queue, d);
          if (!inserted && dataOps[d].pos > dataOps[at->second].pos)
            at->second = d;
        }
      });
    const Latest &before = byConflict ? conflicting : hb;
    Knowledge &k = knows[i];
    if (int prev = lastInQueue[x.queue]; prev >= 0) {
      k = knows[prev];
      learn(k, x.queue, dataOps[prev].pos);
    }
    lastInQueue[x.queue] = i;
    // Candidates not yet known, latest first so they cover the others.
    SmallVector<unsigned> candidates;
    for (auto [q, d] : before)
      if (q != x.queue && dataOps[d].pos > known(k, q))
        candidates.push_back(d);
    llvm::sort(candidates, [&](unsigned a, unsigned b) { return a > b; });
    for (unsigned p : candidates) {
      const DataOp &producer = dataOps[p];
      if (producer.pos <= known(k, producer.queue))
        continue; // covered by an earlier choice
      waitsFor[i].push_back(p);
      for (auto [q, pos] : knows[p])
        learn(k, q, pos);
      learn(k, producer.queue, producer.pos);
    }
  };
  // before[v] is propagated along the edges in topological order (data ops
  // come in the order of dataOps) and dropped once its last successor has
  // read it: sparse, linear in nodes for schedules without cross-queue order.
  ArrayRef<ScheduleGraph::Node> nodes = graph->getNodes();
  std::vector<Latest> before(nodes.size());
  std::vector<unsigned> readers(nodes.size(), 0);
  for (const ScheduleGraph::Node &node : nodes)
    for (unsigned p : node.preds)
      ++readers[p];
  auto merge = [&](Latest &l, unsigned queue, int d) {
    auto [it, inserted] = l.try_emplace(queue, d);
    if (!inserted && dataOps[d].pos > dataOps[it->second].pos)
      it->second = d;
  };
  for (unsigned v : graph->getTopologicalOrder()) {
    Latest &l = before[v];
    for (unsigned p : nodes[v].preds) {
      for (auto [q, d] : before[p])
        merge(l, q, d);
      if (int d = dataIndexOfNode[p]; d >= 0)
        merge(l, dataOps[d].queue, d);
      if (--readers[p] == 0)
        Latest().swap(before[p]);
    }
    if (int d = dataIndexOfNode[v]; d >= 0)
      planPolls(d, l);
    if (readers[v] == 0)
      Latest().swap(l);
  }

  // Which ranks each op notifies, and the flag value each notify reaches.
  std::vector<std::set<int64_t>> notifies(dataOps.size());
  for (auto [i, ws] : llvm::enumerate(waitsFor))
    for (unsigned p : ws)
      notifies[p].insert(dataOps[i].rank);
  std::map<std::pair<unsigned, int64_t>, int64_t> count;      // (queue, rank)
  std::map<std::pair<unsigned, int64_t>, int64_t> valueAfter; // (op, rank)
  for (auto [i, x] : llvm::enumerate(dataOps))
    for (int64_t rank : notifies[i])
      valueAfter[{static_cast<unsigned>(i), rank}] = ++count[{x.queue, rank}];

  // Emit the engine-level schedule after the original ops, then drop those.
  Block &body = schedule.getBody().front();
  SmallVector<Operation *> original =
      llvm::map_to_vector(body, [](Operation &op) { return &op; });
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  Location loc = schedule.getLoc();
  std::vector<bool> started(numQueues, false);
  for (auto [i, x] : llvm::enumerate(dataOps)) {
    if (prelaunch && !started[x.queue])
      PollOp::create(builder, loc, x.rank, x.engine, kLaunchFlag, 1);
    started[x.queue] = true;
    for (unsigned p : waitsFor[i])
      PollOp::create(builder, x.op->getLoc(), x.rank, x.engine,
                     kFirstQueueFlag + dataOps[p].queue,
                     valueAfter[{p, x.rank}]);
    builder.clone(*x.op.getOperation());
    for (int64_t rank : notifies[i])
      NotifyOp::create(builder, x.op->getLoc(), x.rank, x.engine, rank,
                       kFirstQueueFlag + x.queue);
    if (perOpCompletion)
      NotifyOp::create(builder, x.op->getLoc(), x.rank, x.engine, x.rank,
                       kDoneFlag);
  }
  if (!perOpCompletion)
    for (auto [rank, engine] : queues)
      NotifyOp::create(builder, loc, rank, engine, rank, kDoneFlag);
  for (Operation *op : llvm::reverse(original))
    op->erase();
  return success();
}

namespace {
struct SdmaInsertSyncPass
    : public sdma::impl::SdmaInsertSyncBase<SdmaInsertSyncPass> {
  using SdmaInsertSyncBase::SdmaInsertSyncBase;

  /// Why the options are invalid, or an empty string.
  std::string checkOptions() const {
    if (completion != "per-op" && completion != "per-queue")
      return "sdma-insert-sync: unknown completion '" + completion +
             "' (expected per-op or per-queue)";
    return "";
  }

  /// Rejects bad options when the pipeline is parsed, before any input.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    std::string error = checkOptions();
    return error.empty() ? success() : errorHandler(error);
  }

  void runOnOperation() override {
    if (std::string error = checkOptions(); !error.empty()) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(
              SyncInserter(schedule, prelaunch, completion == "per-op").run()))
        return signalPassFailure();
  }
};
} // namespace
