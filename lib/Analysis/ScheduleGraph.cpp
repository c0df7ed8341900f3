//===- ScheduleGraph.cpp - happens-before order of a flat schedule --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Analysis/ScheduleVerifier.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include <map>
#include <queue>
#include <tuple>

using namespace mlir;
using namespace sdma;

int64_t sdma::getIssuingRank(TransferOpInterface op) {
  return *getConstantIntValue(op.getIssuingRankField());
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
  /// The last op per engine (in-order queues): data ops, notifies, polls.
  DenseMap<int64_t, unsigned> lastOnEngine;
  /// happensBefore's shortcut: the rank's cover nodes (signals, fences)
  /// and ordering points so far, and its nodes since its last cover node.
  int covers = 0, orders = 0;
  SmallVector<unsigned> uncovered;
};
} // namespace

/// Appends `node` to the queue `engine` of `rs`: it follows the queue's
/// previous op.
static void appendToQueue(RankState &rs, int64_t engine, unsigned node,
                          std::vector<ScheduleGraph::Node> &nodes) {
  auto [it, inserted] = rs.lastOnEngine.try_emplace(engine, node);
  if (!inserted) {
    nodes[node].preds.push_back(it->second);
    it->second = node;
  }
}

namespace {
/// Notifies reaching one flag, in program order, with their queues.
struct FlagWriters {
  SmallVector<std::pair<unsigned, std::pair<int64_t, int64_t>>> notifies;
  /// The first notify from another queue than the first one's, once looked
  /// for (notifies.size(): none).
  std::optional<size_t> otherWriter;
};
} // namespace

/// Edges from notifies into the polls they release: a poll for value v of a
/// flag follows the v-th notify of that flag. A flag must have one writer
/// queue (what sdma-insert-sync creates, and what the runtime's executors
/// accept): with several, which notify releases a poll depends on timing,
/// and so can whether it is released at all.
static LogicalResult
matchPolls(ScheduleGraph &graph, std::vector<ScheduleGraph::Node> &nodes,
           std::map<std::pair<int64_t, int64_t>, FlagWriters> &writers,
           ArrayRef<std::pair<unsigned, PollOp>> polls) {
  for (auto [node, poll] : polls) {
    if (poll.getFlag() == 0)
      continue; // the launch flag, which the host raises to 1
    auto it = writers.find({poll.getRank(), poll.getFlag()});
    int64_t total = it == writers.end() ? 0 : it->second.notifies.size();
    if (poll.getValue() > total)
      return poll.emitOpError("can never complete: engine ")
             << poll.getEngine() << " of rank " << poll.getRank()
             << " waits for flag " << poll.getFlag() << " to reach "
             << poll.getValue() << " but only " << total
             << " notifies reach it";
    FlagWriters &flag = it->second;
    auto &notifies = flag.notifies;
    if (!flag.otherWriter)
      flag.otherWriter =
          llvm::find_if(notifies,
                        [&](const auto &n) {
                          return n.second != notifies.front().second;
                        }) -
          notifies.begin();
    if (*flag.otherWriter != notifies.size()) {
      auto queue = notifies[*flag.otherWriter].second;
      return poll.emitOpError("polls flag ")
             << poll.getFlag() << " of rank " << poll.getRank()
             << ", which engines " << notifies.front().second.second
             << " of rank " << notifies.front().second.first << " and "
             << queue.second << " of rank " << queue.first
             << " both notify: a polled flag needs one writer queue";
    }
    nodes[node].preds.push_back(notifies[poll.getValue() - 1].first);
  }
  return success();
}

std::string sdma::formatBytes(uint64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = bytes;
  unsigned unit = 0;
  while (value >= 1024 && unit < 4)
    value /= 1024, ++unit;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " bytes";
  else
    os << llvm::format("%.1f ", value) << units[unit];
  return text;
}

/// Who a wait or poll node waits for, for a deadlock report.
static std::string describeWaiter(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto wait = dyn_cast<WaitOp>(op)) {
    os << "rank " << *wait.getConstantField(0) << " waits for rank "
       << *wait.getConstantField(1);
    if (wait.getTag() != 0)
      os << " (tag " << wait.getTag() << ")";
  } else if (auto poll = dyn_cast<PollOp>(op)) {
    os << "engine " << poll.getEngine() << " of rank " << poll.getRank()
       << " waits for flag " << poll.getFlag() << " >= " << poll.getValue();
  }
  return text;
}

/// Reports a cycle among the nodes Kahn's algorithm could not order: follows
/// unordered predecessors from a wait until a node repeats, then names the
/// waits on the cycle, rank by rank.
static LogicalResult reportCycle(const ScheduleGraph &graph,
                                 ArrayRef<unsigned> indegree) {
  ArrayRef<ScheduleGraph::Node> nodes = graph.getNodes();
  unsigned start = 0;
  while (start < nodes.size() &&
         (indegree[start] == 0 || !isa<WaitOp, PollOp>(nodes[start].op)))
    ++start;
  if (start == nodes.size())
    start = llvm::find_if(indegree, [](unsigned d) { return d != 0; }) -
            indegree.begin();
  // Every unordered node has an unordered predecessor: walk back.
  std::vector<int> seenAt(nodes.size(), -1);
  SmallVector<unsigned> path;
  unsigned v = start;
  while (seenAt[v] < 0) {
    seenAt[v] = path.size();
    path.push_back(v);
    for (unsigned p : nodes[v].preds)
      if (indegree[p] != 0) {
        v = p;
        break;
      }
  }
  // path[seenAt[v]..] is the cycle, walked against its edges.
  SmallVector<unsigned> cycle(path.begin() + seenAt[v], path.end());
  std::reverse(cycle.begin(), cycle.end());
  SmallVector<unsigned> waiters;
  for (unsigned c : cycle)
    if (isa<WaitOp, PollOp>(nodes[c].op))
      waiters.push_back(c);
  if (waiters.empty())
    return nodes[start].op->emitOpError("has a cycle in its ordering "
                                        "(deadlock)");
  // Start at the wait that comes first in the schedule.
  std::rotate(waiters.begin(), llvm::min_element(waiters), waiters.end());
  std::string chain;
  for (auto [i, w] : llvm::enumerate(waiters))
    chain += (i ? "; " : "") + describeWaiter(nodes[w].op);
  InFlightDiagnostic diag =
      nodes[waiters.front()].op->emitOpError()
      << "can never complete: it is part of a cycle of waits (deadlock): "
      << chain
      << "; each is released only by a signal sent after the one before it "
         "(the first after the last) returns";
  for (unsigned w : llvm::drop_begin(waiters))
    diag.attachNote(nodes[w].op->getLoc()) << "a wait on the cycle";
  for (unsigned c : cycle)
    if (isa<SignalOp, NotifyOp>(nodes[c].op))
      diag.attachNote(nodes[c].op->getLoc())
          << "a signal on the cycle, which is only sent after a wait on it";
  return diag;
}

/// Refuses, before anything is allocated, a graph whose nodes (with their
/// edges, order and search bookkeeping) would take more than the budget.
static LogicalResult checkBudget(ScheduleOp schedule, int64_t ranks,
                                 uint64_t memoryBudget) {
  uint64_t n = 0;
  for (Operation &op : schedule.getBody().getOps()) {
    auto fence = dyn_cast<FenceOp>(&op);
    n += fence && !fence.hasRank() ? static_cast<uint64_t>(ranks) : 1;
  }
  // A node, its edges, Kahn's and the search's bookkeeping (~128 B).
  uint64_t bytes = n * 128;
  if (!memoryBudget)
    memoryBudget = getDefaultMemoryBudget();
  if (n <= (uint64_t(1) << 32) && bytes <= memoryBudget)
    return success();
  return schedule.emitOpError("is too large to verify: its ")
         << n << " ordering nodes need " << formatBytes(bytes)
         << " for its graph, over the verifier's "
            "memory budget of "
         << formatBytes(memoryBudget)
         << " (raise it: SDMA_MEMORY_BUDGET or sdma-verify's memory-budget; "
            "or verify fewer ranks)";
}

/// Each node's position in a topological order that takes, of the nodes
/// ready, the one of the lowest rank (`up`) or the highest (a barrier
/// first), then the earliest in the schedule. `indegree` is used as given.
static std::vector<unsigned>
rankMajorOrder(ArrayRef<ScheduleGraph::Node> nodes,
               ArrayRef<SmallVector<unsigned>> succs,
               std::vector<unsigned> indegree, bool up) {
  using Key = std::pair<int64_t, unsigned>; // (rank key, node)
  auto key = [&](unsigned v) {
    int64_t rank = nodes[v].rank;
    return Key{rank < 0 ? INT64_MIN : (up ? rank : -rank), v};
  };
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  for (unsigned v = 0; v < nodes.size(); ++v)
    if (indegree[v] == 0)
      ready.push(key(v));
  std::vector<unsigned> pos(nodes.size());
  unsigned next = 0;
  while (!ready.empty()) {
    unsigned v = ready.top().second;
    ready.pop();
    pos[v] = next++;
    for (unsigned s : succs[v])
      if (--indegree[s] == 0)
        ready.push(key(s));
  }
  return pos;
}

FailureOr<ScheduleGraph> ScheduleGraph::build(ScheduleOp schedule,
                                              uint64_t memoryBudget) {
  ScheduleGraph graph;
  int64_t ranks = schedule.getRanks().value_or(0);
  if (failed(checkBudget(schedule, ranks, memoryBudget)))
    return failure();
  std::vector<RankState> state(ranks);
  // (from, to, tag) -> signal nodes in program order / waits seen so far.
  std::map<std::tuple<int64_t, int64_t, int64_t>, SmallVector<unsigned>>
      signals, waits;
  // (rank, flag) -> its notifies; the polls, matched once all are known.
  std::map<std::pair<int64_t, int64_t>, FlagWriters> flagWriters;
  SmallVector<std::pair<unsigned, PollOp>> polls;

  // (rank, peer, ordering point ordinal, cover ordinal of the peer).
  std::vector<std::array<int64_t, 4>> facts;
  auto addNode = [&](Operation *op, int64_t rank) {
    graph.index.try_emplace(op, graph.nodes.size());
    graph.nodes.push_back({op, rank, {}});
    unsigned node = static_cast<unsigned>(graph.nodes.size() - 1);
    graph.firstCover.push_back(-1);
    graph.coverOrdinal.push_back(-1);
    graph.orderOrdinal.push_back(rank >= 0 ? state[rank].orders - 1 : -1);
    if (rank >= 0)
      state[rank].uncovered.push_back(node);
    return node;
  };
  /// `node` (a signal or fence of `rank`) follows everything the rank
  /// issued before it: it covers them.
  auto cover = [&](unsigned node, int64_t rank) {
    RankState &rs = state[rank];
    for (unsigned v : rs.uncovered)
      graph.firstCover[v] = static_cast<int>(node);
    rs.uncovered.clear();
    graph.coverOrdinal[node] = rs.covers++;
  };
  /// `node` becomes an ordering point of `rank`: later ops follow it.
  auto order = [&](unsigned node, int64_t rank) {
    graph.orderOrdinal[node] = state[rank].orders++;
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

  /// A data op, notify or poll of `rank`: after the rank's last ordering
  /// point and, on an engine, after the engine's previous op.
  auto addIssued = [&](Operation *op, int64_t rank,
                       std::optional<int64_t> engine) {
    RankState &rs = state[rank];
    unsigned node = addNode(op, rank);
    if (rs.orderingPoint)
      addEdge(*rs.orderingPoint, node);
    if (engine)
      appendToQueue(rs, *engine, node, graph.nodes);
    rs.pending.push_back(node);
    return node;
  };

  for (Operation &op : schedule.getBody().getOps()) {
    if (auto transfer = dyn_cast<TransferOpInterface>(&op)) {
      std::optional<int64_t> engine;
      if (auto attr = op.getAttrOfType<IntegerAttr>("engine"))
        engine = attr.getInt();
      addIssued(&op, getIssuingRank(transfer), engine);
    } else if (auto copyv = dyn_cast<CopyvOp>(&op)) {
      std::optional<int64_t> engine;
      if (auto attr = op.getAttrOfType<IntegerAttr>("engine"))
        engine = attr.getInt();
      addIssued(&op, *copyv.getConstantField(copyv.getIssuingRankField()),
                engine);
    } else if (auto notify = dyn_cast<NotifyOp>(&op)) {
      unsigned node = addIssued(&op, notify.getRank(), notify.getEngine());
      flagWriters[{notify.getTarget(), notify.getFlag()}].notifies.push_back(
          {node, {notify.getRank(), notify.getEngine()}});
    } else if (auto poll = dyn_cast<PollOp>(&op)) {
      polls.push_back({addIssued(&op, poll.getRank(), poll.getEngine()), poll});
    } else if (auto fence = dyn_cast<FenceOp>(&op)) {
      // A fence without a rank is one fence per rank (ranks do not wait for
      // each other), so it gets one node per rank.
      int64_t rank = fence.hasRank() ? *fence.getConstantField(0) : -1;
      for (int64_t r = 0; r < ranks; ++r) {
        if (rank >= 0 && r != rank)
          continue;
        unsigned node = addNode(&op, r);
        joinRank(state[r], node);
        cover(node, r);
        order(node, r);
        facts.push_back(
            {r, r, graph.orderOrdinal[node], graph.coverOrdinal[node]});
        state[r].orderingPoint = node;
        state[r].pending.clear();
        state[r].lastOnEngine.clear();
      }
    } else if (isa<BarrierOp>(&op)) {
      unsigned node = addNode(&op, -1);
      for (RankState &rs : state) {
        ++rs.orders;
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
      cover(node, from);
      // The signal now stands for everything before it: a later signal or
      // fence joins it instead of every op again (linear edges).
      state[from].pending.assign(1, node);
      signals[{from, to, signal.getTag()}].push_back(node);
    } else if (auto wait = dyn_cast<WaitOp>(&op)) {
      int64_t at = *wait.getConstantField(0);
      int64_t from = *wait.getConstantField(1);
      unsigned node = addNode(&op, at);
      RankState &rs = state[at];
      if (rs.orderingPoint)
        addEdge(*rs.orderingPoint, node);
      order(node, at);
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
    for (auto [k, w] : llvm::enumerate(waitNodes)) {
      unsigned signal = it->second[k];
      addEdge(signal, w);
      facts.push_back({graph.nodes[w].rank, graph.nodes[signal].rank,
                       graph.orderOrdinal[w], graph.coverOrdinal[signal]});
    }
  }
  // Per (rank, peer): the furthest peer cover ordinal seen by each
  // ordering point ordinal (a running maximum).
  llvm::sort(facts);
  for (const auto &f : facts) {
    auto &list = graph.seen[{f[0], f[1]}];
    int furthest = std::max<int>(list.empty() ? -1 : list.back().second,
                                 static_cast<int>(f[3]));
    if (!list.empty() && list.back().first == f[2])
      list.back().second = furthest;
    else
      list.push_back({static_cast<int>(f[2]), furthest});
  }
  facts.clear();
  facts.shrink_to_fit();
  if (failed(matchPolls(graph, graph.nodes, flagWriters, polls)))
    return failure();

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
  if (graph.topoOrder.size() != n)
    return reportCycle(graph, indegree);

  graph.topoPos.resize(n);
  for (auto [i, v] : llvm::enumerate(graph.topoOrder))
    graph.topoPos[v] = i;
  // Two more orders for happensBefore's pruning: ready nodes taken by rank
  // (a barrier, rank -1, first), ascending and then descending.
  indegree.assign(n, 0);
  for (unsigned v = 0; v < n; ++v)
    indegree[v] = graph.nodes[v].preds.size();
  for (bool up : {true, false})
    (up ? graph.rankUpPos : graph.rankDownPos) =
        rankMajorOrder(graph.nodes, succs, indegree, up);
  graph.visited.assign(n, 0);
  return graph;
}

bool ScheduleGraph::seenThroughOneHop(unsigned a, unsigned b) const {
  int c = firstCover[a], ordinal = orderOrdinal[b];
  int64_t rank = nodes[b].rank;
  if (c < 0 || ordinal < 0 || rank < 0)
    return false;
  auto it = seen.find({rank, nodes[c].rank});
  if (it == seen.end())
    return false;
  // The last entry at or before b's ordering point.
  auto after = llvm::upper_bound(
      it->second, ordinal,
      [](int value, const std::pair<int, int> &e) { return value < e.first; });
  return after != it->second.begin() &&
         std::prev(after)->second >= coverOrdinal[c];
}

bool ScheduleGraph::happensBefore(unsigned a, unsigned b) const {
  if (a == b || topoPos[a] >= topoPos[b] || rankUpPos[a] >= rankUpPos[b] ||
      rankDownPos[a] >= rankDownPos[b])
    return false;
  if (seenThroughOneHop(a, b))
    return true;
  if (++query == 0) { // the stamps wrapped: start afresh
    std::fill(visited.begin(), visited.end(), 0);
    query = 1;
  }
  const unsigned floor = topoPos[a], upFloor = rankUpPos[a],
                 downFloor = rankDownPos[a];
  stack.assign(1, b);
  visited[b] = query;
  while (!stack.empty()) {
    unsigned v = stack.back();
    stack.pop_back();
    for (unsigned p : nodes[v].preds) {
      if (p == a)
        return true;
      // A node before `a` in any topological order is not reachable from
      // `a`, so no path from `a` runs through it.
      if (visited[p] == query || topoPos[p] < floor || rankUpPos[p] < upFloor ||
          rankDownPos[p] < downFloor)
        continue;
      visited[p] = query;
      stack.push_back(p);
    }
  }
  return false;
}
