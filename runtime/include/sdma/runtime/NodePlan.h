//===- NodePlan.h - a schedule split across nodes ---------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the compiler's node split (sdma-translate --sdma-to-node-plan, or
// the compiler library with local_ranks) hands the runtime: the phases of
// a hierarchical schedule over N nodes of G ranks. A local phase holds, per
// node, a schedule of G ranks (its ranks renumbered from the node's first)
// that the node's communicator compiles and runs like any schedule; a
// network phase holds the copies between nodes, each a send and a receive
// of the job's transport. docs/plan-format.md has the JSON.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_NODEPLAN_H
#define SDMA_RUNTIME_NODEPLAN_H

#include "sdma/runtime/Plan.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdma::rt {

constexpr int kNodePlanVersion = 1;

/// A copy between nodes: slice `src` (its rank, a rank of the job) is sent
/// to slice `dst` on another node.
struct NodeTransfer {
  Slice src, dst;
};

struct NodePhase {
  bool network = false;
  /// Local: [node] the text of that node's schedule ("" where it has no op
  /// in the phase).
  std::vector<std::string> schedules;
  /// Network: in the order both sides of every pair issue them.
  std::vector<NodeTransfer> transfers;
};

struct NodePlan {
  std::string schedule;
  int ranks = 0, localRanks = 0, nodes = 0;
  std::vector<Buffer> buffers;
  std::optional<Collective> collective;
  std::vector<NodePhase> phases;

  /// Parses and checks a node plan: ranks = nodes x local ranks, every
  /// slice in its buffer, every transfer between two nodes, one schedule
  /// per node in every local phase. std::nullopt with the first problem.
  static std::optional<NodePlan> parse(std::string_view text,
                                       std::string &error);
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_NODEPLAN_H
