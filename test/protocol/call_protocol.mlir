// The communicator's call protocol (runtime/lib/comm/Launcher.h,
// LdstKernel.hip's job barriers, DmaProgram.h) as a schedule that
// sdma-verify proves: three consecutive all-gather calls on the same
// buffers, each bracketed by the two job barriers, with what the caller
// does around them -- before a call it writes its input, after it reads
// the whole output -- as ops of the caller's rank ordered by its stream
// (fences on that rank). Every signal/wait pair of a barrier is one rank
// raising its arrival word for another once its earlier work is complete
// (the kernel's system-scope fence and atomic add), so the model's
// signals are the protocol's. A DMA path's own flags are reset between
// calls; its polls are the plan's, proved with the plan itself.
//
// Proved race- and deadlock-free at 2-9 ranks (RUN lines below); each
// mutant (call_protocol_no_entry.mlir, _no_exit.mlir) is refused with the
// race it opens.
//
//   rank r, call k:  input <- fresh[k]            (the caller, stream order)
//                    entry barrier                (phase 0)
//                    input -> output[r] on every q (the schedule)
//                    exit barrier                 (phase 1)
//                    output -> seen[k]            (the caller reads)
//
// RUN: for r in 2 3 4 5 6 7 8 9; do sdma-opt %s --sdma-unroll=ranks=$r --sdma-verify=report=0 > /dev/null || exit 1; done
// RUN: not sdma-opt %S/call_protocol_no_entry.mlir --sdma-unroll=ranks=3 --sdma-verify=report=0 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: races with another op: it writes output[{{[0-9]+}}, {{[0-9]+}}) on rank {{[0-9]}}, which the other op reads
// RUN: not sdma-opt %S/call_protocol_no_exit.mlir --sdma-unroll=ranks=3 --sdma-verify=report=0 2>&1 | FileCheck %s --check-prefix=NOEXIT
// NOEXIT: races with another op: it {{reads|writes}} output[{{[0-9]+}}, {{[0-9]+}}) on rank {{[0-9]}}
sdma.schedule @call_protocol ranks(%R)
    buffers(%fresh : 3, %input : 1, %output : ranks, %seen : 3) {
  affine.for %k = 0 to 3 {
    // The caller writes its input for call k.
    affine.for %r = 0 to %R {
      sdma.copy %fresh[%k, 1] on %r -> %input[0, 1] on %r
      sdma.fence on %r
    }
    // Entry barrier: every rank tells every rank it reached the call.
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
    // The schedule: rank r pushes its input into every rank's output.
    affine.for %r = 0 to %R {
      affine.for %q = 0 to %R {
        sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %q
      }
    }
    // Exit barrier: every rank's writes are done everywhere.
    affine.for %r = 0 to %R {
      affine.for %q = 0 to %R {
        sdma.signal %r -> %q tag 1
      }
    }
    affine.for %r = 0 to %R {
      affine.for %q = 0 to %R {
        sdma.wait %r <- %q tag 1
      }
    }
    // The caller reads the whole output.
    affine.for %r = 0 to %R {
      sdma.fence on %r
      affine.for %q = 0 to %R {
        sdma.copy %output[%q, 1] on %r -> %seen[%k, 1] on %r
        sdma.fence on %r
      }
    }
  }
}
