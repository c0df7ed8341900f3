//===- NodePlan.cpp - read a node plan ------------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/NodePlan.h"
#include "format/JsonFields.h"
#include "sdma/runtime/Limits.h"

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

namespace {

Slice parseSlice(const NodePlan &plan, const BufferIndex &buffers,
                 const json &object, const std::string &path) {
  Slice slice;
  slice.rank = integerField(object, path, "rank", 0, plan.ranks - 1);
  slice.buffer = findBuffer(buffers, stringField(object, path, "buffer"),
                            path + ".buffer");
  int64_t chunks = plan.buffers[slice.buffer].chunks;
  slice.offset = integerField(object, path, "offset", 0, chunks - 1);
  slice.count = integerField(object, path, "count", 1, chunks - slice.offset);
  return slice;
}

NodePhase parsePhase(const NodePlan &plan, const BufferIndex &buffers,
                     const json &object, const std::string &path) {
  NodePhase phase;
  std::string kind = stringField(object, path, "kind");
  if (kind == "local") {
    const json &parts = arrayField(object, path, "schedules");
    if (parts.size() != static_cast<size_t>(plan.nodes))
      fail(path + ".schedules", "expected one schedule per node (" +
                                    std::to_string(plan.nodes) + ")");
    for (size_t n = 0; n < parts.size(); ++n) {
      if (!parts[n].is_string())
        fail(path + ".schedules[" + std::to_string(n) + "]",
             "expected a string");
      phase.schedules.push_back(parts[n].get<std::string>());
    }
    return phase;
  }
  if (kind != "network")
    fail(path + ".kind",
         "expected \"local\" or \"network\", not " + quote(kind));
  phase.network = true;
  const json &transfers = arrayField(object, path, "transfers");
  for (size_t i = 0; i < transfers.size(); ++i) {
    std::string where = path + ".transfers[" + std::to_string(i) + "]";
    NodeTransfer transfer{
        parseSlice(plan, buffers, field(transfers[i], where, "src"),
                   where + ".src"),
        parseSlice(plan, buffers, field(transfers[i], where, "dst"),
                   where + ".dst")};
    if (transfer.src.count != transfer.dst.count)
      fail(where, "the two sides differ in size");
    if (transfer.src.rank / plan.localRanks ==
        transfer.dst.rank / plan.localRanks)
      fail(where, "ranks " + std::to_string(transfer.src.rank) + " and " +
                      std::to_string(transfer.dst.rank) +
                      " are on one node: not a network transfer");
    phase.transfers.push_back(transfer);
  }
  return phase;
}

NodePlan parseNodePlan(const json &root) {
  NodePlan plan;
  checkFormat(root, "sdma.node-plan", "node plan", kNodePlanVersion);
  plan.schedule = stringField(root, "$", "schedule");
  plan.ranks = integerField(root, "$", "ranks", 1, sdma::kMaxRanks);
  plan.localRanks = integerField(root, "$", "local_ranks", 1, plan.ranks);
  plan.nodes = integerField(root, "$", "nodes", 1, plan.ranks);
  if (static_cast<int64_t>(plan.nodes) * plan.localRanks != plan.ranks)
    fail("$.nodes", "nodes x local_ranks is not ranks");
  BufferIndex buffers;
  plan.buffers = parseBuffers(root, sdma::kMaxBufferChunks, buffers);
  plan.collective = parseCollective(root, plan.buffers, buffers, plan.ranks);
  const json &phases = arrayField(root, "$", "phases");
  for (size_t k = 0; k < phases.size(); ++k)
    plan.phases.push_back(parsePhase(plan, buffers, phases[k],
                                     "$.phases[" + std::to_string(k) + "]"));
  return plan;
}

} // namespace

std::optional<NodePlan> NodePlan::parse(std::string_view text,
                                        std::string &error) {
  return parseJson<NodePlan>(text, "node plan", parseNodePlan, error);
}
