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

    `root=k` binds the root of a rooted schedule (`implements ...
    root N`) before anything is evaluated: the flat schedule declares root
    k and every `sdma.root` evaluates to k. A root outside `[0, R)`, or a
    schedule that declares no root, is an error. Without it, `sdma.root` is
    the declared N. This is how one schedule text serves every root (the
    communicator compiles its rooted built-ins so), never by editing it.

    `local-ranks=G` binds the ranks per node (`sdma.local_ranks`) the same
    way: G must divide R; the flat schedule carries `local_ranks = G`. A
    schedule that fixes a different G is an error, and so is one that reads
    `sdma.local_ranks` with none bound.

    `experts=E` binds the local experts per rank of an MoE schedule
    (`sdma.experts`; `experts x ranks` sizes become `E x ranks`) and
    `major-align=A` the alignment of its expert-major segments (default 1);
    the flat schedule carries `experts = E` and `major_align = A`.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "0",
           "rank count for schedules that do not fix one">,
    Option<"root", "root", "int64_t", "-1",
           "root of a rooted schedule (-1: the one it declares)">,
    Option<"localRanks", "local-ranks", "int64_t", "0",
           "ranks per node of a hierarchical schedule (0: its own)">,
    Option<"experts", "experts", "int64_t", "0",
           "local experts per rank of an MoE schedule (0: its own)">,
    Option<"majorAlign", "major-align", "int64_t", "0",
           "rows an expert-major segment is aligned to (0: its own, or 1)">,
    Option<"maxOps", "max-ops", "int64_t", "1000000",
           "refuse to create more than this many ops per schedule">,
  ];
  let dependentDialects = ["::sdma::SdmaDialect"];
}

def SdmaVerify : Pass<"sdma-verify", "::mlir::ModuleOp"> {
  let summary = "prove a flat schedule free of races and deadlocks, and correct";
  let description = [{
    Runs on flat schedules (after `sdma-unroll`), at the schedule level or
    the engine level (after `sdma-insert-sync`), and proves them against
    sdma's ordering semantics — the contract every backend implements:

    | what orders two ops                   | ld/st kernel        | DMA (CE, SDMA)      |
    |---------------------------------------|---------------------|---------------------|
    | fence on the rank (or on every rank)  | sync of the rank's blocks | cross-queue flags (notify/poll) |
    | barrier (every rank)                  | flag barrier        | flags               |
    | signal a->b then the matching wait on b (ops of b after the wait) | system-scope flag | flags |
    | same `engine` on one rank, program order | new phase where the ops conflict | one in-order queue |
    | poll released by notifies (engine level) | —                | the queue's flag    |

    Nothing else orders two ops: not program order, not a wait for ops
    issued before it. A signal from a is raised once every op a issued
    before it completed. The k-th `wait b <- a` (tag t) matches the k-th
    `signal a -> b` (tag t). A copy of a slice onto itself only reads.

    Fails with a diagnostic at the offending op when:
    - two data ops may run at the same time and touch overlapping chunks of
      one buffer on one rank, at least one of them writing; both ops, their
      issuing ranks and (after `sdma-unroll`) their loop iterations are
      named;
    - a wait or poll is never released, or waits form a cycle (deadlock):
      the cycle's waits are named with their ranks and tags;
    - the schedule declares `implements KIND(...)` and, executed
      symbolically (every chunk starts as "chunk i of buffer b on rank r"),
      some output chunk does not end up holding what KIND requires: the first
      wrong chunk is named with what it holds and what it should hold;
    - the proof would need more memory than `memory-budget` (the graph
      takes ~128 bytes a node; the symbolic memory a chunk each): an error
      before allocating.
    On success it reports what it proved as a remark (`report`), and warns
    when the schedule declares no collective: its outputs are unchecked.

    ```
    remark: proved for 4 ranks: 16 data ops race-free, 0 waits always
    released (no deadlock), implements all_gather(input -> output)
    ```
    Every lowering pipeline runs this pass first, and the passes that
    rewrite schedules (`sdma-fuse-bcast`, `sdma-fuse-swap`, `sdma-batch`)
    re-prove their output, leaving a schedule unchanged where the rewrite
    would not verify.
  }];
  let options = [
    Option<"report", "report", "bool", "true",
           "print what was proved (a remark), and warn when outputs are "
           "unchecked">,
    Option<"memoryBudget", "memory-budget", "uint64_t", "0",
           "refuse schedules whose proof needs more bytes (0: half of the "
           "physical memory)">,
  ];
}

def SdmaFuseBcast : Pass<"sdma-fuse-bcast", "::mlir::ModuleOp"> {
  let summary = "two copies of one source slice become one sdma.bcast";
  let description = [{
    On flat schedules: within one stretch of ops between ordering points
    (fence, signal, wait, barrier), two copies whose source slices are
    identical (same rank, buffer, offset and count) become one `sdma.bcast`
    to both destinations, placed where the first copy was. Legal because both
    copies had the same issuing rank and the same predecessors, and a bcast
    only reads the source once; pairs whose destinations overlap each other
    or the source are left alone. DMA-Latte's `bcst`: ceil((N-1)/2) commands
    instead of N-1 for an all-gather.

    Before / after:
    ```mlir
    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2
    // becomes
    sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[0, 1] on 2
    ```
  }];
}

def SdmaResolveCounts : Pass<"sdma-resolve-counts", "::mlir::ModuleOp"> {
  let summary = "sdma.copyv becomes the sdma.copy it is for counts the host knows";
  let description = [{
    On flat, proved schedules, with the count tables' contents at the start
    (`counts=FILE`: a JSON object `{"TABLE": [[rank 0's entries], ...]}`;
    a table not named starts at 0): runs the copies between count tables
    in a topological order of the schedule's ordering graph (the proof makes
    every order give the same values), replaces each `sdma.copyv` by the
    `sdma.copy` it is for those counts (nothing for a count of 0; a row is
    a chunk) and removes the count-table copies, whose results the host
    writes itself. What DMA plans need where the host knows the counts
    (torch's all_to_all_single with host split sizes, `sdma-run --counts`).
    A count that is negative or above its op's max, or a segment past its
    buffer, is an error naming the op and the ranks.

    ```
    before: sdma.copy %send[1, 1] on 0 -> %recv[0, 1] on 1;  sdma.barrier
            sdma.copyv %in[packed %send[1] on 0] on 0
                -> %out[packed %recv[0] on 1] on 1, count %send[1] on 0 max 1
    counts: {"send": [[1, 1], [0, 1]]}
    after:  sdma.barrier
            sdma.copy %in[1, 1] on 0 -> %out[0, 1] on 1
    ```
  }];
  let options = [
    Option<"counts", "counts", "std::string", "\"\"",
           "JSON file of the count tables' contents at the start">,
  ];
  let dependentDialects = ["::sdma::SdmaDialect"];
}

def SdmaMergeCopies : Pass<"sdma-merge-copies", "::mlir::ModuleOp"> {
  let summary = "abutting copies between the same buffers and ranks become one";
  let description = [{
    On flat schedules: within one stretch of ops between ordering points,
    copies between the same source and destination buffers and ranks whose
    source and destination slices both abut (in any order) become one copy,
    placed where the first of them was. Legal because the copies of a
    stretch run concurrently. Copies on an engine (ordered with its other
    ops), copies within one buffer on one rank (the merged copy could read
    what it writes) and copies with dynamic fields are left alone. Linear
    in the stretch: copies are grouped by (buffers, ranks, destination minus
    source offset) and each group sorted by offset.

    Before / after:
    ```mlir
    sdma.copy %in[1, 1] on 0 -> %out[5, 1] on 1
    sdma.copy %in[0, 1] on 0 -> %out[4, 1] on 1
    // becomes
    sdma.copy %in[0, 2] on 0 -> %out[4, 2] on 1
    ```
    ```
      in on 0:  [a][b]          out on 1: [ . . . . ][a][b]
      one copy of two chunks instead of two copies of one
    ```
  }];
}

def SdmaFuseSwap : Pass<"sdma-fuse-swap", "::mlir::ModuleOp"> {
  let summary = "opposite copies between two ranks become a local copy each and one sdma.swap";
  let description = [{
    A swap exchanges two slices *in place*, so it can never replace two
    copies directly: copies `A: X -> Y` and `B: Y -> X` that run concurrently
    race (B reads what A writes), and ordered they do not exchange anything.
    What a swap can do is the exchange of an out-of-place pair. On flat
    schedules, within one stretch between ordering points, copies
    `A: Sp (rank p) -> Dq (rank q)` and `B: Sq (rank q) -> Dp (rank p)` with
    p != q, equal counts and no overlap among Sp, Dp, Sq, Dq become:
    ```
    copy Sp -> Dp on p;  copy Sq -> Dq on q;   (local staging)
    signal o -> i;  fence on i;  wait i <- o   (i issues the swap, o is the
                                                other rank; a fresh tag)
    swap Dp <-> Dq                             (Dp gets Sq, Dq gets Sp)
    ```
    The swap touches memory on both ranks but is issued by one, so the other
    rank's staging copy must be ordered before it by a signal/wait, and the
    issuer's own by a fence (a wait does not order the ops issued before
    it). The rewrite preserves meaning when the input is race-free (verify
    it first): every chunk A and B read is still read, every chunk they
    wrote is still written, with the same final contents; the swap also
    reads Dp and Dq, which no other op of the stretch may touch because A
    and B write them; the signals use a tag no other signal uses, so they
    cannot be matched with the schedule's own waits; and the new ordering
    cannot form a cycle (the signals depend only on ops before them). The
    staging copies of one rank are contiguous in an all-to-all, so
    `-canonicalize` merges them into one copy per rank: 1 local copy +
    (R-1)/2 swaps per rank instead of R-1 copies (DMA-Latte's `swap`),
    issuers alternating by rank distance to balance the load. Unpaired ops
    of the stretch stay before the new ordering ops. The pass rewrites a
    stretch only when that pays: when its staging copies merge (with each
    other or the stretch's own local copies) into fewer copies than there
    are pairs. An all-gather's staging copies share one source and never
    merge, so it is left alone, as DMA-Latte applies swap to all-to-all
    only. `always=1` rewrites every pair regardless.
  }];
  let options = [
    Option<"always", "always", "bool", "false",
           "rewrite every pair, even where it does not pay">,
  ];
}

def SdmaAssignEngines : Pass<"sdma-assign-engines", "::mlir::ModuleOp"> {
  let summary = "give every data op a DMA queue of its issuing rank";
  let description = [{
    Sets `engine` on every copy, bcast and swap. Policies:
    - `affinity` (default): one engine per peer, as DMA-Latte and the MI300X
      xGMI engines do: engine `(peer - rank - 1) mod R mod engines`, where the
      peer is the (first) destination rank; local copies use the last one;
    - `round-robin`: the ops of a rank cycle through the engines;
    - `single`: everything on engine 0 (back-to-back batching).
    `engines=0` means one per rank (R). Ops on one engine run in program
    order, which sdma-verify takes into account. An op that already has an
    `engine` keeps it: the schedule's author relied on that order (an op
    the pass assigns to the same engine only gains order, which cannot
    create a race or a deadlock: engine order follows program order).
  }];
  let options = [
    Option<"engines", "engines", "int64_t", "0",
           "engines per rank (0: one per rank)">,
    Option<"policy", "policy", "std::string", "\"affinity\"",
           "affinity | round-robin | single">,
  ];
}

def SdmaInsertSync : Pass<"sdma-insert-sync", "::mlir::ModuleOp"> {
  let summary = "lower ordering to per-engine completion flags (notify/poll)";
  let description = [{
    On a flat, verified schedule whose data ops all have engines: replaces
    fences, signals, waits and barriers by `sdma.notify` (an engine adds 1 to
    a flag once its earlier ops completed) and `sdma.poll` (an engine waits
    for a flag value), so each (rank, engine) queue becomes a self-contained
    command stream: exactly what the DMA targets run.

    For every data op X it finds, per other queue, the last op X must follow
    (from the happens-before order), drops those already implied by another
    (vector clocks), and makes that op's queue notify a flag on X's rank that
    X's queue polls. Flag 0 of each rank is the launch flag (`prelaunch`
    puts a poll on it at the head of every queue, so the host triggers
    everything with one write); flag 1 counts completions the host waits for
    (`completion=per-op`: one per data op, DMA-Latte's pcpy signalling;
    `per-queue`: one at the end of each queue); flag 2 + q is written by
    queue q only.
  }];
  let options = [
    Option<"prelaunch", "prelaunch", "bool", "false",
           "start every queue with a poll on the launch flag">,
    Option<"completion", "completion", "std::string", "\"per-op\"",
           "per-op | per-queue">,
  ];
}

def SdmaBatch : Pass<"sdma-batch", "::mlir::ModuleOp"> {
  let summary = "back-to-back ops on one engine share one completion signal";
  let description = [{
    After `sdma-insert-sync`: on each queue, a notify followed, with only
    data ops of that queue in between, by another notify of the same flag is
    dropped; polls that waited for it wait for the later one (values are
    renumbered). DMA-Latte's b2b: N-1 copies queued on one engine with a
    single completion signal. `max-batch` bounds the ops per batch (0: no
    bound). Delaying a notify past later ops of the same queue cannot
    deadlock: those ops wait for nothing the first one did not.
  }];
  let options = [
    Option<"maxBatch", "max-batch", "int64_t", "0",
           "most data ops sharing one signal (0: unbounded)">,
  ];
}

#endif // SDMA_TRANSFORMS_PASSES_TD
