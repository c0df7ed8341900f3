//===- ScheduleGraph.h - happens-before order of a flat schedule -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The partial order the ordering model of the sdma dialect gives the ops of
// a flat (unrolled) schedule:
//   - a rank's data ops after a fence on that rank (or every rank), a
//     barrier, or a wait on that rank come after it;
//   - a fence or barrier comes after every op issued before it (per rank or
//     all ranks); a signal from rank a comes after every op a issued before;
//   - the k-th `wait b <- a` comes after the k-th `signal a -> b` (same tag);
//   - two ops of one rank on the same engine (the `engine` attribute of a
//     data op; notify and poll name theirs) run in program order: the
//     later starts once the earlier completed, as on a CUDA stream or an
//     SDMA queue;
//   - a poll for value k comes after the k-th notify of its flag; a polled
//     flag has one writer queue (else an error), and the launch flag 0 is
//     raised to 1 by the host.
// Nothing else is ordered, program order included.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_ANALYSIS_SCHEDULEGRAPH_H
#define SDMA_ANALYSIS_SCHEDULEGRAPH_H

#include "sdma/IR/SdmaOps.h"

namespace sdma {

class ScheduleGraph {
public:
  struct Node {
    mlir::Operation *op;
    /// The issuing rank; -1 for a barrier. A fence without a rank has one
    /// node per rank.
    int64_t rank;
    /// Direct predecessors (node indices).
    llvm::SmallVector<unsigned, 4> preds;
  };

  /// Builds the graph of a flat schedule. Reports (and fails on) waits that
  /// no signal satisfies, cycles of waits, and graphs whose nodes and edges
  /// would take more than `memoryBudget` bytes (0: the default budget,
  /// getDefaultMemoryBudget() in ScheduleVerifier.h). Memory is linear in
  /// nodes and edges: no happens-before sets are stored.
  static mlir::FailureOr<ScheduleGraph> build(ScheduleOp schedule,
                                              uint64_t memoryBudget = 0);

  llvm::ArrayRef<Node> getNodes() const { return nodes; }
  /// Node indices in an order that respects every edge.
  llvm::ArrayRef<unsigned> getTopologicalOrder() const { return topoOrder; }
  /// True when node `a` completes before node `b` starts: first
  /// seenThroughOneHop (constant time per question), then a search back
  /// from `b` over the nodes that come after `a` in each of three
  /// topological orders (none before it in any can lie on a path from `a`).
  /// The orders differ in which ready node comes first: the earliest in
  /// the schedule, the lowest rank, the highest rank; the rank-major ones
  /// keep the search out of other ranks' signal chains (fuse-swap's
  /// hand-offs: a linear search per query instead of a quadratic one).
  /// Not thread-safe.
  bool happensBefore(unsigned a, unsigned b) const;
  /// True when the two nodes are ordered one way or the other.
  bool ordered(unsigned a, unsigned b) const {
    return happensBefore(a, b) || happensBefore(b, a);
  }
  /// The (first) node of an op, or -1.
  int indexOf(mlir::Operation *op) const {
    auto it = index.find(op);
    return it == index.end() ? -1 : static_cast<int>(it->second);
  }

private:
  std::vector<Node> nodes;
  std::vector<unsigned> topoOrder;
  /// Each node's index in topoOrder, and in the lowest-rank-first and
  /// highest-rank-first topological orders.
  std::vector<unsigned> topoPos, rankUpPos, rankDownPos;
  /// happensBefore's shortcut, sound but not complete (a miss falls back to
  /// the search): `a` reaches `b` if a rank's ordering point that `b`
  /// follows has seen, through its own fences or one signal/wait hop, a
  /// node of a's rank's *cover chain* (its signals and fences, each of
  /// which follows everything the rank issued before it) at or after the
  /// first one after `a`.
  bool seenThroughOneHop(unsigned a, unsigned b) const;
  /// Per node: the first cover node of its rank at or after it (-1: none),
  /// its place on that chain (cover nodes), and the ordinal of the rank's
  /// ordering point (fence, wait, barrier) it follows (-1: none).
  std::vector<int> firstCover, coverOrdinal, orderOrdinal;
  /// (rank, peer) -> (ordering point ordinal, the furthest cover ordinal
  /// of the peer seen by then), ordinals ascending.
  llvm::DenseMap<std::pair<int64_t, int64_t>, std::vector<std::pair<int, int>>>
      seen;
  /// happensBefore's scratch: the query that last visited each node.
  mutable std::vector<unsigned> visited;
  mutable unsigned query = 0;
  mutable std::vector<unsigned> stack;
  llvm::DenseMap<mlir::Operation *, unsigned> index;
};

/// The stretches of a flat schedule: maximal runs of data-movement ops with
/// no ordering op (fence, signal, wait, barrier) between them. Ops of one
/// stretch issued by one rank have the same predecessors.
llvm::SmallVector<llvm::SmallVector<TransferOpInterface>>
getStretches(ScheduleOp schedule);

/// "512 bytes", "7.8 GiB".
std::string formatBytes(uint64_t bytes);

/// The issuing rank of a flat data-movement op.
int64_t getIssuingRank(TransferOpInterface op);

} // namespace sdma

#endif // SDMA_ANALYSIS_SCHEDULEGRAPH_H
