// Issue 38's direction for the call protocol, proved before it is built:
// one job barrier per call (the entry one) and, instead of the exit
// barrier, a completion signal from each writer to the ranks it wrote
// into. A broadcast from rank 0, three calls on the same buffers with the
// caller's work around them as in call_protocol.mlir: a rank that nobody
// but the root writes into waits for the root alone at the end of a call,
// not for every rank. The next call's entry barrier is what makes reusing
// the buffers safe (a rank arrives only after it has read its output).
//
// RUN: for r in 2 3 4 5 6 7 8 9; do sdma-opt %s --sdma-unroll=ranks=$r --sdma-verify=report=0 > /dev/null || exit 1; done
// The mutant without the completion signal: a rank reads its output while
// the root may still be writing it.
// RUN: sed -e '/^    .. COMPLETION:/,/^    .. END COMPLETION/d' %s > %t.mlir
// RUN: not sdma-opt %t.mlir --sdma-unroll=ranks=4 --sdma-verify=report=0 2>&1 | FileCheck %s --check-prefix=NOSIGNAL
// NOSIGNAL: races with another op: it {{reads|writes}} output[0, 1) on rank {{[1-3]}}
sdma.schedule @one_barrier ranks(%R)
    buffers(%fresh : 3, %input : 1, %output : 1, %seen : 3) {
  affine.for %k = 0 to 3 {
    // The root's caller writes its input for call k.
    sdma.copy %fresh[%k, 1] on 0 -> %input[0, 1] on 0
    sdma.fence on 0
    // Entry barrier (the only one).
    affine.for %r = 0 to %R {
      affine.for %q = 0 to %R {
        sdma.signal %r -> %q tag 0
      }
    }
    affine.for %r = 0 to %R {
      affine.for %q = 0 to %R {
        sdma.wait %r <- %q tag 0
      }
    }
    // The schedule: the root pushes its input into every rank's output.
    affine.for %q = 0 to %R {
      sdma.copy %input[0, 1] on 0 -> %output[0, 1] on %q
    }
    // COMPLETION: the root tells each rank its output is written.
    affine.for %q = 0 to %R {
      sdma.signal 0 -> %q tag 1
    }
    affine.for %q = 0 to %R {
      sdma.wait %q <- 0 tag 1
    }
    // END COMPLETION
    // The caller reads its output.
    affine.for %r = 0 to %R {
      sdma.fence on %r
      sdma.copy %output[0, 1] on %r -> %seen[%k, 1] on %r
      sdma.fence on %r
    }
  }
}
