//===- NodePlan.h - a flat schedule split across nodes ----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A hierarchical schedule runs on N nodes of G ranks (sdma.local_ranks):
// rank r is local rank r mod G of node r / G. The node split cuts the flat,
// proved schedule at its sdma.barrier ops into phases. A phase is either
//
//   - local: ops whose ranks all lie on one node; per node, they become a
//     schedule of G ranks (ranks renumbered r - n * G, the same buffers),
//     which the node's kernels (load/store or DMA) run; or
//   - network: sdma.copy ops whose two sides are on different nodes; each
//     becomes a send on the source rank and a receive on the destination,
//     posted together in one group of the job's transport (MPI, NCCL).
//
// Running the phases in order, each rank entering phase k + 1 once its part
// of phase k has completed (a node's kernel ends with its job barrier, a
// transport group when its sends and receives have), keeps the flat
// schedule's barrier semantics, so the flat proof covers the split program.
// What the split cannot run is an error naming the op: any other op that
// crosses nodes, a signal or wait across nodes, or a phase that mixes
// network ops with ops within a node (a barrier must separate them).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_NODEPLAN_H
#define SDMA_TARGET_NODEPLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace sdma {

constexpr int kNodePlanVersion = 1;

/// Writes the node plan (JSON, docs/multi-node.md) of the one flat
/// schedule in `module`, which carries `local_ranks` (sdma-unroll
/// local-ranks=G).
mlir::LogicalResult translateToNodePlan(mlir::ModuleOp module,
                                        llvm::raw_ostream &os);

void registerToNodePlanTranslation();

} // namespace sdma

#endif // SDMA_TARGET_NODEPLAN_H
