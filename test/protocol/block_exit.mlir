// The load/store kernel's call exit with the blocks of a rank as actors
// (LdstPhases.hip's sdma_call_exit): each block counts itself out of the
// run, and the rank's last block alone arrives at the exit barrier, waits
// for every rank, and ends the call; the other blocks end at once. With
// two blocks per rank, actor 2r is rank r's closing block (the last to
// count: which block that is is symmetric, so one is fixed) and actor 2r+1
// its other block. Rank r's memory (its output, what the caller reads) is
// on actor 2r; each block pushes its own input chunk (written by the
// caller before the call, on that block's actor) into every rank's output.
// Three consecutive all-gathers on the same buffers, as in
// call_protocol.mlir:
//
//   block b of rank r, call k:
//     caller writes input chunk b           (stream order)
//     entry barrier: block 0 arrives at every rank's blocks; every block
//                    waits for every rank
//     input chunk b -> output[2r+b] on every rank q (actor 2q)
//     block 1: counts itself (signals the closer); the closer waits for
//     the count, arrives at every closer, waits for every closer
//     the kernel ends: the stream's next work starts after every block
//     (the closer's end signals block 1: the kernel boundary's join)
//     caller reads the output (on actor 2r)
//
// Proved race- and deadlock-free at 2-4 ranks (4-8 actors); the mutant
// whose closer does not wait for its other block's count is refused with
// the race it opens (a peer reads its output while that block may still
// be writing it).
//
// RUN: for a in 4 6 8; do sdma-opt %s --sdma-unroll=ranks=$a --sdma-verify=report=0 > /dev/null || exit 1; done
// RUN: sed -e '/^ *.. COUNT:/,/^ *.. END COUNT/d' %s > %t.mlir
// RUN: not sdma-opt %t.mlir --sdma-unroll=ranks=4 --sdma-verify=report=0 2>&1 | FileCheck %s --check-prefix=NOCOUNT
// NOCOUNT: races with another op: it {{reads|writes}} output[{{[0-9]+}}, {{[0-9]+}}) on rank {{[0-9]}}
sdma.schedule @block_exit ranks(%R)
    buffers(%fresh : 3, %input : 1, %output : ranks, %seen : 3) {
  affine.for %k = 0 to 3 {
    // The caller writes each block's input chunk for call k (after the
    // previous call's kernel has ended on this rank: the join below).
    affine.for %a = 0 to %R {
      sdma.copy %fresh[%k, 1] on %a -> %input[0, 1] on %a
      sdma.fence on %a
    }
    // Entry barrier: each rank's block 0 tells every rank's blocks; every
    // block waits for every rank.
    affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
      %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
      affine.for %a = 0 to %R {
        sdma.signal %c -> %a tag 0
      }
    }
    affine.for %a = 0 to %R {
      affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
        %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
        sdma.wait %a <- %c tag 0
      }
    }
    // The schedule: every block pushes its chunk into every rank's output.
    affine.for %a = 0 to %R {
      affine.for %q = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
        %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%q)
        sdma.copy %input[0, 1] on %a -> %output[%a, 1] on %c
      }
    }
    affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
      %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
      %o = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%r)
      // COUNT: the other block counts itself; the closer sees the count.
      sdma.signal %o -> %c tag 1
      sdma.wait %c <- %o tag 1
      // END COUNT
    }
    // Exit barrier among the closers.
    affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
      %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
      affine.for %q = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
        %d = affine.apply affine_map<(d0) -> (d0 * 2)>(%q)
        sdma.signal %c -> %d tag 2
      }
    }
    affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
      %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
      affine.for %q = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
        %d = affine.apply affine_map<(d0) -> (d0 * 2)>(%q)
        sdma.wait %c <- %d tag 2
      }
    }
    // The kernel ends when every block has: the rank's next work on the
    // stream (the caller's next input write, on block 1's actor) follows.
    affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
      %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
      %o = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%r)
      sdma.signal %c -> %o tag 3
      sdma.wait %o <- %c tag 3
    }
    // The caller reads the whole output (every block's chunk of every
    // rank) on its rank's memory.
    affine.for %r = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%R] {
      %c = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
      sdma.fence on %c
      affine.for %a = 0 to %R {
        sdma.copy %output[%a, 1] on %c -> %seen[%k, 1] on %c
        sdma.fence on %c
      }
    }
  }
}
