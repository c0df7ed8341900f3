//===- ScheduleGraph.cpp - happens-before order of a flat schedule --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"

#include "llvm/ADT/SetVector.h"
#include <map>
#include <tuple>

using namespace mlir;
using namespace sdma;

int64_t sdma::getIssuingRank(TransferOpInterface op) {
  return *getConstantIntValue(op.getSlice(0).rank);
}

SmallVector<SmallVector<TransferOpInterface>>
sdma::getStretches(ScheduleOp schedule) {
  SmallVector<SmallVector<TransferOpInterface>> stretches(1);
  for (Operation &op : schedule.getBody().getOps()) {
    if (auto transfer = dyn_cast<TransferOpInterface>(&op))
      stretches.back().push_back(transfer);
    else if (!stretches.back().empty())
      stretches.emplace_back();
  }
  if (stretches.back().empty())
    stretches.pop_back();
  return stretches;
}

namespace {
/// Per-rank state while walking the schedule in program order.
struct RankState {
  /// The node every later op of the rank must follow (fence, wait, barrier).
  std::optional<unsigned> orderingPoint;
  /// Data ops and waits issued since the last fence or barrier.
  SmallVector<unsigned> pending;
  /// The last data op per engine (in-order queues).
  DenseMap<int64_t, unsigned> lastOnEngine;
};
} // namespace

FailureOr<ScheduleGraph> ScheduleGraph::build(ScheduleOp schedule) {
  ScheduleGraph graph;
  int64_t ranks = schedule.getRanks().value_or(0);
  std::vector<RankState> state(ranks);
  // (from, to, tag) -> signal nodes in program order / waits seen so far.
  std::map<std::tuple<int64_t, int64_t, int64_t>, SmallVector<unsigned>>
      signals, waits;

  auto addNode = [&](Operation *op, int64_t rank) {
    graph.index.try_emplace(op, graph.nodes.size());
    graph.nodes.push_back({op, rank, {}});
    return static_cast<unsigned>(graph.nodes.size() - 1);
  };
  auto addEdge = [&](unsigned from, unsigned to) {
    graph.nodes[to].preds.push_back(from);
  };
  /// Edges from everything `rank` issued (since its last fence) into `node`.
  auto joinRank = [&](RankState &rs, unsigned node) {
    if (rs.orderingPoint)
      addEdge(*rs.orderingPoint, node);
    for (unsigned p : rs.pending)
      addEdge(p, node);
  };

  for (Operation &op : schedule.getBody().getOps()) {
    if (auto transfer = dyn_cast<TransferOpInterface>(&op)) {
      int64_t rank = getIssuingRank(transfer);
      RankState &rs = state[rank];
      unsigned node = addNode(&op, rank);
      if (rs.orderingPoint)
        addEdge(*rs.orderingPoint, node);
      if (auto engine = op.getAttrOfType<IntegerAttr>("engine")) {
        auto [it, inserted] =
            rs.lastOnEngine.try_emplace(engine.getInt(), node);
        if (!inserted) {
          addEdge(it->second, node);
          it->second = node;
        }
      }
      rs.pending.push_back(node);
    } else if (auto fence = dyn_cast<FenceOp>(&op)) {
      // A fence without a rank is one fence per rank (ranks do not wait for
      // each other), so it gets one node per rank.
      int64_t rank = fence.hasRank() ? *fence.getConstantField(0) : -1;
      for (int64_t r = 0; r < ranks; ++r) {
        if (rank >= 0 && r != rank)
          continue;
        unsigned node = addNode(&op, r);
        joinRank(state[r], node);
        state[r].orderingPoint = node;
        state[r].pending.clear();
        state[r].lastOnEngine.clear();
      }
    } else if (isa<BarrierOp>(&op)) {
      unsigned node = addNode(&op, -1);
      for (RankState &rs : state) {
        joinRank(rs, node);
        rs.orderingPoint = node;
        rs.pending.clear();
        rs.lastOnEngine.clear();
      }
    } else if (auto signal = dyn_cast<SignalOp>(&op)) {
      int64_t from = *signal.getConstantField(0);
      int64_t to = *signal.getConstantField(1);
      unsigned node = addNode(&op, from);
      joinRank(state[from], node);
      signals[{from, to, signal.getTag()}].push_back(node);
    } else if (auto wait = dyn_cast<WaitOp>(&op)) {
      int64_t at = *wait.getConstantField(0);
      int64_t from = *wait.getConstantField(1);
      unsigned node = addNode(&op, at);
      RankState &rs = state[at];
      if (rs.orderingPoint)
        addEdge(*rs.orderingPoint, node);
      rs.orderingPoint = node;
      // A later fence must also wait for the wait itself.
      rs.pending.push_back(node);
      waits[{from, at, wait.getTag()}].push_back(node);
    } else {
      return op.emitOpError("is not part of a flat schedule: run sdma-unroll "
                            "first");
    }
  }

  // Match the k-th wait with the k-th signal of the same (from, to, tag).
  for (auto &[key, waitNodes] : waits) {
    auto it = signals.find(key);
    size_t numSignals = it == signals.end() ? 0 : it->second.size();
    if (waitNodes.size() > numSignals) {
      auto [from, to, tag] = key;
      InFlightDiagnostic diag =
          graph.nodes[waitNodes[numSignals]].op->emitOpError()
          << "can never complete: rank " << to << " waits " << waitNodes.size()
          << " times for rank " << from;
      if (tag != 0)
        diag << " with tag " << tag;
      diag << " but only " << numSignals << " signals are sent";
      return diag;
    }
    for (auto [k, w] : llvm::enumerate(waitNodes))
      addEdge(it->second[k], w);
  }

  // Kahn's algorithm; whatever is left lies on or behind a cycle of waits.
  size_t n = graph.nodes.size();
  std::vector<SmallVector<unsigned>> succs(n);
  std::vector<unsigned> indegree(n, 0);
  for (unsigned v = 0; v < n; ++v) {
    // Duplicate edges (a pending op and the fence both) are harmless.
    for (unsigned p : graph.nodes[v].preds) {
      succs[p].push_back(v);
      ++indegree[v];
    }
  }
  SmallVector<unsigned> ready;
  for (unsigned v = 0; v < n; ++v)
    if (indegree[v] == 0)
      ready.push_back(v);
  // Pop the lowest index first so the order stays close to program order.
  std::reverse(ready.begin(), ready.end());
  while (!ready.empty()) {
    unsigned v = ready.pop_back_val();
    graph.topoOrder.push_back(v);
    for (unsigned s : succs[v])
      if (--indegree[s] == 0)
        ready.push_back(s);
  }
  if (graph.topoOrder.size() != n) {
    for (unsigned v = 0; v < n; ++v) {
      if (indegree[v] == 0 || !isa<WaitOp>(graph.nodes[v].op))
        continue;
      InFlightDiagnostic diag =
          graph.nodes[v].op->emitOpError()
          << "can never complete: it is part of a cycle of waits (deadlock)";
      for (unsigned p : graph.nodes[v].preds)
        if (indegree[p] != 0 && isa<SignalOp>(graph.nodes[p].op))
          diag.attachNote(graph.nodes[p].op->getLoc())
              << "the signal it waits for, which itself waits on the cycle";
      return diag;
    }
    return schedule.emitOpError("has a cycle in its ordering (deadlock)");
  }

  graph.ancestors.assign(n, llvm::BitVector(n));
  for (unsigned v : graph.topoOrder)
    for (unsigned p : graph.nodes[v].preds) {
      graph.ancestors[v] |= graph.ancestors[p];
      graph.ancestors[v].set(p);
    }
  return graph;
}
