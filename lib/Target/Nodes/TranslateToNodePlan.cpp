//===- TranslateToNodePlan.cpp - flat schedule -> per-node phases ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// See NodePlan.h for what the split does and why it keeps the flat proof;
// docs/plan-format.md documents the JSON and runtime/lib/comm/NodePlan.cpp
// reads it.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/Manifest.h"
#include "sdma/Target/NodePlan.h"
#include "sdma/Target/Verified.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include <nlohmann/json.hpp>
#include <set>

using namespace mlir;
using namespace sdma;
using json = nlohmann::ordered_json;

namespace {

/// The fields of `op` that name ranks; failure for an op the split does
/// not know. A global fence (every rank) has none.
FailureOr<SmallVector<unsigned>> rankFields(Operation *op) {
  if (auto transfer = dyn_cast<TransferOpInterface>(op)) {
    SmallVector<unsigned> fields;
    for (unsigned i = 0; i < transfer.getNumSlices(); ++i)
      fields.push_back(3 * i);
    return fields;
  }
  if (auto copyv = dyn_cast<CopyvOp>(op)) {
    SmallVector<unsigned> fields = {CopyvOp::kSourceRank, CopyvOp::kTargetRank,
                                    CopyvOp::kCountRank};
    // A side that is not packed holds 0 in its prefix rank: not a rank.
    if (copyv.isSourcePacked())
      fields.push_back(CopyvOp::kSourcePrefixRank);
    if (copyv.isTargetPacked())
      fields.push_back(CopyvOp::kTargetPrefixRank);
    return fields;
  }
  if (auto fence = dyn_cast<FenceOp>(op))
    return fence.hasRank() ? SmallVector<unsigned>{0} : SmallVector<unsigned>{};
  if (isa<SignalOp, WaitOp>(op))
    return SmallVector<unsigned>{0, 1};
  return op->emitOpError("cannot be split across nodes (the node split "
                         "takes schedule-level ops before sdma-insert-sync)");
}

enum class PhaseKind { Empty, Local, Network };

struct Phase {
  PhaseKind kind = PhaseKind::Empty;
  Operation *first = nullptr;
  /// Local: the ops of each node. Network: the copies.
  std::vector<std::vector<Operation *>> perNode;
  std::vector<CopyOp> transfers;
};

class NodeSplitter {
public:
  NodeSplitter(ScheduleOp schedule, int64_t ranks, int64_t local)
      : schedule(schedule), ranks(ranks), local(local), nodes(ranks / local) {}

  LogicalResult split(std::vector<Phase> &phases);
  /// Node `node`'s ops of a local phase as a schedule of `local` ranks,
  /// printed; "" where the node has none.
  FailureOr<std::string> nodeSchedule(ArrayRef<Operation *> ops, int64_t node,
                                      size_t phase);

private:
  LogicalResult place(Operation *op, Phase &phase);

  ScheduleOp schedule;
  int64_t ranks, local, nodes;
};

LogicalResult NodeSplitter::split(std::vector<Phase> &phases) {
  phases.emplace_back();
  for (Operation &op : schedule.getBody().getOps()) {
    if (isa<BarrierOp>(op)) {
      if (phases.back().kind != PhaseKind::Empty)
        phases.emplace_back();
      continue;
    }
    if (failed(place(&op, phases.back())))
      return failure();
  }
  if (phases.back().kind == PhaseKind::Empty)
    phases.pop_back();
  return success();
}

LogicalResult NodeSplitter::place(Operation *op, Phase &phase) {
  FailureOr<SmallVector<unsigned>> fields = rankFields(op);
  if (failed(fields))
    return failure();
  auto fieldsOp = cast<FieldsOpInterface>(op);
  std::set<int64_t> onNodes;
  for (unsigned field : *fields) {
    std::optional<int64_t> rank = fieldsOp.getConstantField(field);
    if (!rank)
      return op->emitOpError("is not flat: run sdma-unroll before the split");
    onNodes.insert(*rank / local);
  }
  bool network = onNodes.size() > 1;
  if (network && !isa<CopyOp>(op)) {
    InFlightDiagnostic diag =
        op->emitOpError("spans nodes ")
        << *onNodes.begin() << " and " << *onNodes.rbegin()
        << " (ranks per node: " << local << "): only sdma.copy crosses "
        << "nodes, as a send and a receive of the transport";
    if (isa<SignalOp, WaitOp>(op))
      diag << "; order the phases with sdma.barrier instead";
    return diag;
  }
  PhaseKind kind = network ? PhaseKind::Network : PhaseKind::Local;
  if (onNodes.empty() && phase.kind == PhaseKind::Network)
    return op->emitOpError("on every rank in a phase of network copies: "
                           "they run as one group, unordered; separate "
                           "phases with sdma.barrier");
  if (phase.kind != PhaseKind::Empty && phase.kind != kind) {
    InFlightDiagnostic diag =
        op->emitOpError()
        << (network ? "crosses nodes but shares a phase with ops within a node"
                    : "stays within a node but shares a phase with ops that "
                      "cross nodes")
        << ": separate them with sdma.barrier (the transport's sends and "
        << "receives run as one group between the node's kernels)";
    diag.attachNote(phase.first->getLoc()) << "the phase's first op";
    return diag;
  }
  if (phase.kind == PhaseKind::Empty) {
    phase.kind = kind;
    phase.first = op;
    phase.perNode.assign(network ? 0 : nodes, {});
  }
  if (network) {
    phase.transfers.push_back(cast<CopyOp>(op));
    return success();
  }
  if (onNodes.empty()) { // a fence on every rank: every node's
    for (std::vector<Operation *> &ops : phase.perNode)
      ops.push_back(op);
    return success();
  }
  phase.perNode[*onNodes.begin()].push_back(op);
  return success();
}

FailureOr<std::string> NodeSplitter::nodeSchedule(ArrayRef<Operation *> ops,
                                                  int64_t node, size_t phase) {
  // Nothing to do (a fence on every rank alone orders nothing here): no
  // kernel for this node in this phase.
  if (llvm::all_of(ops, [](Operation *op) { return isa<FenceOp>(op); }))
    return std::string();
  MLIRContext *context = schedule.getContext();
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(schedule.getLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto part = cast<ScheduleOp>(builder.clone(*schedule.getOperation()));
  part.getBody().front().clear();
  part.setSymName(
      (schedule.getSymName() + "_node" + Twine(node) + "_phase" + Twine(phase))
          .str());
  part.setNumRanks(local);
  part.removeCollectiveAttr();
  part.removeCollectiveBuffersAttr();
  part.removeRootAttr();
  part.removeLocalRanksAttr();
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(schedule.getBody().front().getArguments(),
                                   part.getBody().front().getArguments()))
    mapping.map(from, to);
  builder.setInsertionPointToEnd(&part.getBody().front());
  int64_t base = node * local;
  for (Operation *op : ops) {
    auto copy = cast<FieldsOpInterface>(builder.clone(*op, mapping));
    SmallVector<int64_t> statics(copy.getStaticFields());
    SmallVector<unsigned> fields = *rankFields(op); // placed: known
    for (unsigned field : fields)
      statics[field] -= base;
    copy.setStaticFields(statics);
  }
  if (failed(mlir::verify(*module)))
    return schedule.emitOpError("node ")
           << node << "'s part of phase " << phase << " does not verify";
  std::string text;
  llvm::raw_string_ostream os(text);
  part.print(os);
  os << "\n";
  return text;
}

} // namespace

LogicalResult sdma::translateToNodePlan(ModuleOp module, raw_ostream &os) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() != 1)
    return module.emitError("expected exactly one sdma.schedule, found ")
           << schedules.size();
  ScheduleOp schedule = schedules.front();
  if (!schedule.getRanks() || !schedule.getLocalRanks())
    return schedule.emitOpError("has no fixed rank count and ranks per node: "
                                "unroll it with sdma-unroll=\"ranks=R "
                                "local-ranks=G\" first");
  int64_t ranks = *schedule.getRanks(), local = *schedule.getLocalRanks();
  NodeSplitter splitter(schedule, ranks, local);
  std::vector<Phase> phases;
  if (failed(splitter.split(phases)))
    return failure();

  json out = json::array();
  for (auto [index, phase] : llvm::enumerate(phases)) {
    if (phase.kind == PhaseKind::Network) {
      json transfers = json::array();
      for (CopyOp copy : phase.transfers) {
        auto transfer = cast<TransferOpInterface>(copy.getOperation());
        transfers.push_back(
            {{"src", sliceToJSON(schedule, *getStaticSlice(transfer, 0))},
             {"dst", sliceToJSON(schedule, *getStaticSlice(transfer, 1))}});
      }
      out.push_back({{"kind", "network"}, {"transfers", std::move(transfers)}});
      continue;
    }
    json parts = json::array();
    for (auto [node, ops] : llvm::enumerate(phase.perNode)) {
      FailureOr<std::string> text =
          splitter.nodeSchedule(ops, static_cast<int64_t>(node), index);
      if (failed(text))
        return failure();
      parts.push_back(std::move(*text));
    }
    out.push_back({{"kind", "local"}, {"schedules", std::move(parts)}});
  }
  json collective = collectiveToJSON(schedule);
  // A reduction's operator: its first sdma.reduce's (one per schedule).
  auto reduces = schedule.getBody().getOps<sdma::ReduceOp>();
  if (!reduces.empty() && collective.is_object())
    collective["op"] = (*reduces.begin()).getKind().str();
  json plan{{"format", "sdma.node-plan"},
            {"version", kNodePlanVersion},
            {"schedule", schedule.getSymName().str()},
            {"ranks", ranks},
            {"local_ranks", local},
            {"nodes", ranks / local},
            {"collective", std::move(collective)},
            {"buffers", buffersToJSON(schedule)},
            {"phases", std::move(out)}};
  os << plan.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  return success();
}

void sdma::registerToNodePlanTranslation() {
  TranslateFromMLIRRegistration registration(
      "sdma-to-node-plan",
      "split a flat hierarchical schedule into per-node phases and "
      "transport transfers",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        if (failed(verifyBeforeTranslation(module)))
          return failure();
        return translateToNodePlan(module, os);
      },
      registerAllDialects);
}
