//===- Passes.td - sdma transformation passes --------------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TRANSFORMS_PASSES_TD
#define SDMA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SdmaUnroll : Pass<"sdma-unroll", "::mlir::ModuleOp"> {
  let summary = "expand loops and rank arithmetic into a flat schedule";
  let description = [{
    For a concrete rank count (the schedule's own, or the `ranks` option),
    evaluates every `affine.for`, `scf.for`, `scf.if`, `arith`/`affine.apply`
    computation and `sdma.rank_add`, and replaces each schedule body with the
    flat list of data-movement and ordering ops it denotes, every field a
    constant. Buffer types become plain chunk counts.

    Before (`--sdma-unroll=ranks=2`):
    ```mlir
    sdma.schedule @ag ranks(%R) buffers(%in : 1, %out : ranks) {
      affine.for %r = 0 to %R {
        affine.for %p = 0 to %R {
          sdma.copy %in[0, 1] on %r -> %out[%r, 1] on %p
        }
      }
    }
    ```
    After:
    ```mlir
    sdma.schedule @ag ranks(%R = 2) buffers(%in : 1, %out : 2) {
      sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
      sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
      sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
      sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1
    }
    ```
    A rank count in the schedule wins; a different `ranks` option is an
    error. Each error raised while evaluating names the loop iteration.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "0",
           "rank count for schedules that do not fix one">,
    Option<"maxOps", "max-ops", "int64_t", "1000000",
           "refuse to create more than this many ops per schedule">,
  ];
  let dependentDialects = ["::sdma::SdmaDialect"];
}

def SdmaVerify : Pass<"sdma-verify", "::mlir::ModuleOp"> {
  let summary = "prove a flat schedule free of races and deadlocks, and correct";
  let description = [{
    Runs on flat schedules (after `sdma-unroll`) and fails with a diagnostic
    at the offending op when:
    - two data ops may run at the same time (nothing orders them: no fence,
      signal/wait, barrier or shared engine queue) and touch overlapping
      chunks of one buffer on one rank, at least one of them writing; both
      ops are named;
    - a wait is never satisfied (more waits than matching signals) or waits
      form a cycle (deadlock);
    - the schedule declares `implements KIND(...)` and, executed
      symbolically (every chunk starts as "chunk i of buffer b on rank r"),
      some output chunk does not end up holding what KIND requires: the first
      wrong chunk is named with what it holds and what it should hold.
    Every lowering pipeline runs this pass first.
  }];
}

#endif // SDMA_TRANSFORMS_PASSES_TD
