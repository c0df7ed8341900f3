// Mutant of call_protocol.mlir: no exit barrier. A rank reads its output
// while peers may still be writing it.
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
