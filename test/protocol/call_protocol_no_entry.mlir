// Mutant of call_protocol.mlir: no entry barrier. A fast rank's call k+1
// writes a peer's output while that peer still reads it from call k.
sdma.schedule @call_protocol ranks(%R)
    buffers(%fresh : 3, %input : 1, %output : ranks, %seen : 3) {
  affine.for %k = 0 to 3 {
    // The caller writes its input for call k.
    affine.for %r = 0 to %R {
      sdma.copy %fresh[%k, 1] on %r -> %input[0, 1] on %r
      sdma.fence on %r
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
