//===- TestScheduleGraph.cpp - print the happens-before graph -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// -test-sdma-schedule-graph builds the ScheduleGraph of every flat schedule
// and prints, to stdout:
//   schedule @name: N nodes
//   node I: OP rank R[, engine E]; preds: P...; after: A...
//       (one line per node, in program order; preds are the direct edges,
//       `after` every node that happens before, `-` when none)
//   order: I...                   the topological order
//   conflict I J: I before J | J before I | race
//       (for every two data ops, on nodes I < J, where one writes chunks
//       the other reads or writes)
// A schedule the graph refuses (a wait no signal satisfies, a cycle of
// waits, over the memory budget) gets the graph's error instead; an error
// also where happensBefore (a pruned search) disagrees with a plain search
// over all predecessors.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sdma;

namespace {

struct TestScheduleGraphPass
    : public PassWrapper<TestScheduleGraphPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestScheduleGraphPass)

  TestScheduleGraphPass() = default;
  TestScheduleGraphPass(const TestScheduleGraphPass &pass)
      : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-sdma-schedule-graph"; }
  StringRef getDescription() const final {
    return "Test only: print the happens-before graph of flat schedules";
  }

  Option<uint64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("ScheduleGraph::build's budget in bytes (0: default)"),
      llvm::cl::init(0)};

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(print(schedule, llvm::outs())))
        signalPassFailure();
  }

  LogicalResult print(ScheduleOp schedule, raw_ostream &os);
};

} // namespace

/// `0, 3, 4`, or `-` for none.
static void printList(raw_ostream &os, ArrayRef<unsigned> list) {
  if (list.empty())
    os << "-";
  llvm::interleaveComma(list, os);
}

/// True when one of the two data ops writes chunks the other reads or
/// writes.
static bool conflict(TransferOpInterface a, TransferOpInterface b) {
  for (unsigned i = 0, e = a.getNumSlices(); i < e; ++i)
    for (unsigned j = 0, f = b.getNumSlices(); j < f; ++j) {
      if (!a.isSliceWritten(i) && !b.isSliceWritten(j))
        continue;
      std::optional<StaticSlice> sa = getStaticSlice(a, i);
      std::optional<StaticSlice> sb = getStaticSlice(b, j);
      if (sa && sb && sa->overlaps(*sb))
        return true;
    }
  return false;
}

LogicalResult TestScheduleGraphPass::print(ScheduleOp schedule,
                                           raw_ostream &os) {
  // ScheduleGraph::build expects a flat schedule (as sdma-verify checks).
  if (!schedule.getRanks())
    return schedule.emitOpError(
        "has no fixed rank count: run sdma-unroll first");
  for (Operation &op : schedule.getBody().getOps()) {
    if (isa<BarrierOp, NotifyOp, PollOp>(op))
      continue;
    auto fields = dyn_cast<FieldsOpInterface>(&op);
    if (!fields || !fields.hasStaticFields() || isa<RankAddOp>(op))
      return op.emitOpError(
          "is not part of a flat schedule: run sdma-unroll first");
  }
  FailureOr<ScheduleGraph> graph = ScheduleGraph::build(schedule, memoryBudget);
  if (failed(graph))
    return failure();

  ArrayRef<ScheduleGraph::Node> nodes = graph->getNodes();
  os << "schedule @" << schedule.getSymName() << ": " << nodes.size()
     << " nodes\n";
  for (auto [i, node] : llvm::enumerate(nodes)) {
    os << "node " << i << ": " << node.op->getName() << " ";
    if (node.rank < 0)
      os << "all ranks";
    else
      os << "rank " << node.rank;
    if (auto engine = node.op->getAttrOfType<IntegerAttr>("engine"))
      os << ", engine " << engine.getInt();
    else if (auto notify = dyn_cast<NotifyOp>(node.op))
      os << ", engine " << notify.getEngine();
    else if (auto poll = dyn_cast<PollOp>(node.op))
      os << ", engine " << poll.getEngine();
    // Duplicate edges (an op both pending and joined) are one dependence.
    SmallVector<unsigned> preds(node.preds.begin(), node.preds.end());
    llvm::sort(preds);
    preds.erase(llvm::unique(preds), preds.end());
    os << "; preds: ";
    printList(os, preds);
    SmallVector<unsigned> after;
    for (unsigned j = 0, e = nodes.size(); j < e; ++j)
      if (graph->happensBefore(j, i))
        after.push_back(j);
    os << "; after: ";
    printList(os, after);
    os << "\n";
  }

  // happensBefore prunes its search by three topological orders: it must
  // agree with a plain search back over every predecessor.
  for (unsigned b = 0, e = nodes.size(); b < e; ++b) {
    std::vector<bool> reached(e, false);
    SmallVector<unsigned> stack(1, b);
    while (!stack.empty())
      for (unsigned p : nodes[stack.pop_back_val()].preds)
        if (!reached[p]) {
          reached[p] = true;
          stack.push_back(p);
        }
    for (unsigned a = 0; a < e; ++a)
      if (a != b && reached[a] != graph->happensBefore(a, b))
        return nodes[b].op->emitOpError("test: happensBefore(")
               << a << ", " << b << ") is " << !reached[a]
               << " but a plain search says " << reached[a];
  }

  os << "order:";
  for (unsigned v : graph->getTopologicalOrder())
    os << " " << v;
  os << "\n";

  for (unsigned i = 0, e = nodes.size(); i < e; ++i) {
    auto a = dyn_cast<TransferOpInterface>(nodes[i].op);
    if (!a)
      continue;
    for (unsigned j = i + 1; j < e; ++j) {
      auto b = dyn_cast<TransferOpInterface>(nodes[j].op);
      if (!b || !conflict(a, b))
        continue;
      os << "conflict " << i << " " << j << ": ";
      if (graph->happensBefore(i, j))
        os << i << " before " << j;
      else if (graph->happensBefore(j, i))
        os << j << " before " << i;
      else
        os << "race";
      os << "\n";
    }
  }
  return success();
}

namespace sdma::test {
void registerTestScheduleGraphPass() {
  PassRegistration<TestScheduleGraphPass>();
}
} // namespace sdma::test
