// RUN: sdma-opt %s -split-input-file --sdma-lower-dma=variant=pcpy | FileCheck %s --check-prefixes=COPIES,PCPY
// RUN: sdma-opt %s -split-input-file --sdma-lower-dma=variant=bcst | FileCheck %s --check-prefix=BCST
// RUN: sdma-opt %s -split-input-file --sdma-lower-dma=variant=swap | FileCheck %s --check-prefixes=COPIES,SWAP
// RUN: sdma-opt %s -split-input-file --sdma-lower-dma=variant=b2b | FileCheck %s --check-prefix=B2B
// RUN: sdma-opt %s -split-input-file --sdma-lower-dma="variant=b2b prelaunch=1" | FileCheck %s --check-prefix=PRE

// The whole lowering, from a schedule with loops to per-engine queues:
// unroll, fusion per variant, engine assignment, synchronisation, batching.
//
// Two ranks gather one chunk each, then after a barrier each rank mirrors
// its output locally. In the queues, each op is followed by its completion
// notify (flag 1 of its rank) and, where a later op of another queue
// depends on it, by a notify of a flag that queue polls. The barrier
// becomes polls, but only for what the second step reads: a rank's mirror
// copy polls the queues that wrote its output chunks, not every first-step
// queue (a queue runs in order: its own needs no poll).
//
// pcpy: one copy per command, on the engine the affinity policy picks per
// destination. swap: an all-gather has no opposite pairs worth swapping, so
// the result is pcpy's.
// COPIES-LABEL: sdma.schedule @two_steps ranks(%R = 2)
// COPIES-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0 {engine = 1 : i64}
// COPIES-NEXT:    sdma.notify 0 : 1 -> 0[1]
// COPIES-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1 {engine = 0 : i64}
// COPIES-NEXT:    sdma.notify 0 : 0 -> 1[2]
// COPIES-NEXT:    sdma.notify 0 : 0 -> 0[1]
// COPIES-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0 {engine = 0 : i64}
// COPIES-NEXT:    sdma.notify 1 : 0 -> 0[4]
// COPIES-NEXT:    sdma.notify 1 : 0 -> 1[1]
// COPIES-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1 {engine = 1 : i64}
// COPIES-NEXT:    sdma.notify 1 : 1 -> 1[1]
// COPIES-NEXT:    sdma.poll 1 : 1 until[2] at_least 1
// COPIES-NEXT:    sdma.copy %output[0, 2] on 1 -> %mirror[0, 2] on 1 {engine = 1 : i64}
// COPIES-NEXT:    sdma.notify 1 : 1 -> 1[1]
// COPIES-NEXT:    sdma.poll 0 : 1 until[4] at_least 1
// COPIES-NEXT:    sdma.copy %output[0, 2] on 0 -> %mirror[0, 2] on 0 {engine = 1 : i64}
// COPIES-NEXT:    sdma.notify 0 : 1 -> 0[1]
// COPIES-NEXT:  }
//
// bcst: each rank's two copies of its input chunk become one broadcast,
// so the barrier has one queue per rank to wait for.
// BCST-LABEL: sdma.schedule @two_steps ranks(%R = 2)
// BCST-NEXT:    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 0, %output[0, 1] on 1 {engine = 1 : i64}
// BCST-NEXT:    sdma.notify 0 : 1 -> 1[2]
// BCST-NEXT:    sdma.notify 0 : 1 -> 0[1]
// BCST-NEXT:    sdma.bcast %input[0, 1] on 1 -> %output[1, 1] on 0, %output[1, 1] on 1 {engine = 0 : i64}
// BCST-NEXT:    sdma.notify 1 : 0 -> 0[3]
// BCST-NEXT:    sdma.notify 1 : 0 -> 1[3]
// BCST-NEXT:    sdma.notify 1 : 0 -> 1[1]
// BCST-NEXT:    sdma.poll 1 : 1 until[3] at_least 1
// BCST-NEXT:    sdma.poll 1 : 1 until[2] at_least 1
// BCST-NEXT:    sdma.copy %output[0, 2] on 1 -> %mirror[0, 2] on 1 {engine = 1 : i64}
// BCST-NEXT:    sdma.notify 1 : 1 -> 1[1]
// BCST-NEXT:    sdma.poll 0 : 1 until[3] at_least 1
// BCST-NEXT:    sdma.copy %output[0, 2] on 0 -> %mirror[0, 2] on 0 {engine = 1 : i64}
// BCST-NEXT:    sdma.notify 0 : 1 -> 0[1]
// BCST-NEXT:  }
//
// b2b: one engine per rank, a rank's consecutive ops back to back; the
// notify a peer polls follows the copy it needs (the one writing the
// peer's output), inside the batch.
// B2B-LABEL: sdma.schedule @two_steps ranks(%R = 2)
// B2B-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0 {engine = 0 : i64}
// B2B-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1 {engine = 0 : i64}
// B2B-NEXT:    sdma.notify 0 : 0 -> 1[2]
// B2B-NEXT:    sdma.notify 0 : 0 -> 0[1]
// B2B-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0 {engine = 0 : i64}
// B2B-NEXT:    sdma.notify 1 : 0 -> 0[3]
// B2B-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1 {engine = 0 : i64}
// B2B-NEXT:    sdma.notify 1 : 0 -> 1[1]
// B2B-NEXT:    sdma.poll 1 : 0 until[2] at_least 1
// B2B-NEXT:    sdma.copy %output[0, 2] on 1 -> %mirror[0, 2] on 1 {engine = 0 : i64}
// B2B-NEXT:    sdma.notify 1 : 0 -> 1[1]
// B2B-NEXT:    sdma.poll 0 : 0 until[3] at_least 1
// B2B-NEXT:    sdma.copy %output[0, 2] on 0 -> %mirror[0, 2] on 0 {engine = 0 : i64}
// B2B-NEXT:    sdma.notify 0 : 0 -> 0[1]
// B2B-NEXT:  }
//
// prelaunch: the same queues, each first polling the launch flag 0 that
// the host raises.
// PRE-LABEL: sdma.schedule @two_steps ranks(%R = 2)
// PRE-NEXT:    sdma.poll 0 : 0 until[0] at_least 1
// PRE-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0 {engine = 0 : i64}
// PRE-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 0 : 0 -> 1[2]
// PRE-NEXT:    sdma.notify 0 : 0 -> 0[1]
// PRE-NEXT:    sdma.poll 1 : 0 until[0] at_least 1
// PRE-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 1 : 0 -> 0[3]
// PRE-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 1 : 0 -> 1[1]
// PRE-NEXT:    sdma.poll 1 : 0 until[2] at_least 1
// PRE-NEXT:    sdma.copy %output[0, 2] on 1 -> %mirror[0, 2] on 1 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 1 : 0 -> 1[1]
// PRE-NEXT:    sdma.poll 0 : 0 until[3] at_least 1
// PRE-NEXT:    sdma.copy %output[0, 2] on 0 -> %mirror[0, 2] on 0 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 0 : 0 -> 0[1]
// PRE-NEXT:  }
sdma.schedule @two_steps ranks(%R = 2)
    buffers(%input : 1, %output : ranks, %mirror : ranks) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %p
    }
  }
  sdma.barrier
  affine.for %r = 0 to %R {
    sdma.copy %output[0, %R] on %r -> %mirror[0, %R] on %r
  }
}

// -----

// An all-to-all on four ranks: the smallest where swapping pays.
//
// swap: the six opposite pairs become six swaps, after staging copies that
// merge into one local copy per rank (input -> output, all four chunks).
// A swap waits only for the staging copies that write the two chunks it
// exchanges, though fuse-swap's rank-wide hand-offs order it after more:
// rank 0's swap with rank 3 polls the flag rank 3's staging copy notifies
// (11) and the one its own, on another engine, notifies (4); not rank 1's
// (6), which it cannot race with.
// SWAP-LABEL: sdma.schedule @exchange ranks(%R = 4)
// SWAP-NEXT:    sdma.copy %input[0, 4] on 0 -> %output[0, 4] on 0 {engine = 3 : i64}
// SWAP:         sdma.copy %input[0, 4] on 1 -> %output[0, 4] on 1 {engine = 3 : i64}
// SWAP:         sdma.copy %input[0, 4] on 2 -> %output[0, 4] on 2 {engine = 3 : i64}
// SWAP:         sdma.swap %output[2, 1] on 1 <-> %output[1, 1] on 2 {engine = 0 : i64}
// SWAP:         sdma.copy %input[0, 4] on 3 -> %output[0, 4] on 3 {engine = 3 : i64}
// SWAP:         sdma.poll 0 : 2 until[11] at_least 1
// SWAP-NEXT:    sdma.poll 0 : 2 until[4] at_least 1
// SWAP-NEXT:    sdma.swap %output[3, 1] on 0 <-> %output[0, 1] on 3 {engine = 2 : i64}
// SWAP:         sdma.swap %output[1, 1] on 0 <-> %output[0, 1] on 1 {engine = 0 : i64}
// SWAP:         sdma.swap %output[3, 1] on 2 <-> %output[2, 1] on 3 {engine = 0 : i64}
// SWAP:         sdma.swap %output[0, 1] on 2 <-> %output[2, 1] on 0 {engine = 1 : i64}
// SWAP:         sdma.swap %output[1, 1] on 3 <-> %output[3, 1] on 1 {engine = 1 : i64}
// SWAP-NOT:     sdma.copy
// SWAP-NOT:     sdma.swap
//
// The other variants keep the sixteen copies: pcpy spreads each rank's
// four over its four engines; bcst finds no source copied twice; b2b runs
// them back to back on one engine per rank, one notify per batch.
// PCPY-LABEL: sdma.schedule @exchange ranks(%R = 4)
// PCPY:          sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0 {engine = 3 : i64}
// PCPY:          sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1 {engine = 0 : i64}
// PCPY:          sdma.copy %input[2, 1] on 0 -> %output[0, 1] on 2 {engine = 1 : i64}
// PCPY:          sdma.copy %input[3, 1] on 0 -> %output[0, 1] on 3 {engine = 2 : i64}
// PCPY-COUNT-12: sdma.copy %input[{{[0-3]}}, 1] on {{[1-3]}} -> %output[{{[1-3]}}, 1] on {{[0-3]}} {engine = {{[0-3]}} : i64}
// PCPY-NOT:      sdma.swap
// PCPY-NOT:      sdma.copy
// BCST-LABEL: sdma.schedule @exchange ranks(%R = 4)
// BCST-NOT:     sdma.bcast
// BCST-COUNT-16: sdma.copy %input[{{[0-3]}}, 1] on {{[0-3]}} -> %output[{{[0-3]}}, 1] on {{[0-3]}} {engine = {{[0-3]}} : i64}
// BCST-NOT:     sdma.bcast
// B2B-LABEL: sdma.schedule @exchange ranks(%R = 4)
// B2B-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0 {engine = 0 : i64}
// B2B-NEXT:    sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1 {engine = 0 : i64}
// B2B-NEXT:    sdma.copy %input[2, 1] on 0 -> %output[0, 1] on 2 {engine = 0 : i64}
// B2B-NEXT:    sdma.copy %input[3, 1] on 0 -> %output[0, 1] on 3 {engine = 0 : i64}
// B2B-NEXT:    sdma.notify 0 : 0 -> 0[1]
// B2B-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0 {engine = 0 : i64}
sdma.schedule @exchange ranks(%R = 4)
    buffers(%input : ranks, %output : ranks)
    implements all_to_all(%input -> %output) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %input[%p, 1] on %r -> %output[%r, 1] on %p
    }
  }
}
