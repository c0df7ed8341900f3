// RUN: sdma-opt %s --sdma-unroll=ranks=2 -split-input-file | FileCheck %s --check-prefix=R2
// RUN: sdma-opt %s --sdma-unroll=ranks=3 -split-input-file | FileCheck %s --check-prefix=R3
// RUN: sdma-opt %s --sdma-unroll=ranks=8 -split-input-file | FileCheck %s --check-prefix=R8

// Nested affine loops, rank_add with constant and negative deltas.
// R2-LABEL: sdma.schedule @pairs ranks(%R = 2) buffers(%in : 2, %out : 4)
// R2-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
// R2-NEXT:    sdma.signal 0 -> 1
// R2-NEXT:    sdma.wait 0 <- 1
// R2-NEXT:    sdma.copy %in[1, 1] on 1 -> %out[2, 1] on 0
// R2-NEXT:    sdma.signal 1 -> 0
// R2-NEXT:    sdma.wait 1 <- 0
// R2-NEXT:  }
// R3-LABEL: sdma.schedule @pairs ranks(%R = 3) buffers(%in : 3, %out : 6)
// R3-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
// R3-NEXT:    sdma.signal 0 -> 1
// R3-NEXT:    sdma.wait 0 <- 2
// R3-NEXT:    sdma.copy %in[1, 1] on 1 -> %out[2, 1] on 2
// R3-NEXT:    sdma.signal 1 -> 2
// R3-NEXT:    sdma.wait 1 <- 0
// R3-NEXT:    sdma.copy %in[2, 1] on 2 -> %out[4, 1] on 0
// R3-NEXT:    sdma.signal 2 -> 0
// R3-NEXT:    sdma.wait 2 <- 1
// R3-NEXT:  }
// R8-LABEL: sdma.schedule @pairs ranks(%R = 8) buffers(%in : 8, %out : 16)
// R8-COUNT-7: sdma.copy
// R8:         sdma.copy %in[7, 1] on 7 -> %out[14, 1] on 0
// R8-NEXT:    sdma.signal 7 -> 0
// R8-NEXT:    sdma.wait 7 <- 6
// R8-NEXT:  }
sdma.schedule @pairs ranks(%R) buffers(%in : ranks, %out : 2 x ranks) {
  affine.for %r = 0 to %R {
    %next = sdma.rank_add %r, 1
    %prev = sdma.rank_add %r, -1
    %slot = affine.apply affine_map<(d0) -> (d0 * 2)>(%r)
    sdma.copy %in[%r, 1] on %r -> %out[%slot, 1] on %next
    sdma.signal %r -> %next
    sdma.wait %r <- %prev
  }
}

// -----

// scf.for, scf.if and arith evaluate like affine loops.
// R2-LABEL: sdma.schedule @scf_and_arith
// R2-NEXT:    sdma.copy %b[1, 1] on 1 -> %b[1, 1] on 0
// R2-NEXT:    sdma.fence on 1
// R2-NEXT:  }
// R3-LABEL: sdma.schedule @scf_and_arith
// R3-NEXT:    sdma.copy %b[1, 1] on 1 -> %b[1, 1] on 0
// R3-NEXT:    sdma.fence on 1
// R3-NEXT:    sdma.copy %b[2, 1] on 2 -> %b[2, 1] on 0
// R3-NEXT:    sdma.fence on 2
// R3-NEXT:  }
// R8-LABEL: sdma.schedule @scf_and_arith
// R8-COUNT-7: sdma.fence on
// R8-NOT:     sdma
// R8:         }
sdma.schedule @scf_and_arith ranks(%R) buffers(%b : ranks) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %r = %c0 to %R step %c1 {
    %nonzero = arith.cmpi ne, %r, %c0 : index
    scf.if %nonzero {
      sdma.copy %b[%r, 1] on %r -> %b[%r, 1] on %c0
      sdma.fence on %r
    } else {
    }
  }
}

// -----

// Loop bounds and steps computed from the rank count; barrier and fence
// without a rank pass through.
// R2-LABEL: sdma.schedule @strided
// R2-NEXT:    sdma.barrier
// R2-NEXT:    sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
// R2-NEXT:    sdma.fence
// R2-NEXT:  }
// R8-LABEL: sdma.schedule @strided
// R8-NEXT:    sdma.barrier
// R8-NEXT:    sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
// R8-NEXT:    sdma.fence
// R8-NEXT:    sdma.copy %b[2, 1] on 2 -> %b[2, 1] on 3
// R8-NEXT:    sdma.fence
// R8-NEXT:    sdma.copy %b[4, 1] on 4 -> %b[4, 1] on 5
// R8-NEXT:    sdma.fence
// R8-NEXT:    sdma.copy %b[6, 1] on 6 -> %b[6, 1] on 7
// R8-NEXT:    sdma.fence
// R8-NEXT:  }
sdma.schedule @strided ranks(%R) buffers(%b : ranks) {
  sdma.barrier
  affine.for %r = 0 to affine_map<()[s0] -> (s0 - 1)>()[%R] step 2 {
    %p = sdma.rank_add %r, 1
    sdma.copy %b[%r, 1] on %r -> %b[%r, 1] on %p
    sdma.fence
  }
}

// -----

// A schedule with its own rank count keeps it when the option agrees... and
// a schedule that fixes its count needs no option (tested in
// sdma-unroll-fixed.mlir).
// R2-LABEL: sdma.schedule @no_loops ranks(%R = 2)
// R2-NEXT:    sdma.swap %b[0, 1] on 0 <-> %b[1, 1] on 1
// R8-LABEL: sdma.schedule @no_loops ranks(%R = 8)
// R8-NEXT:    sdma.swap %b[0, 1] on 0 <-> %b[1, 1] on 1
sdma.schedule @no_loops ranks(%R) buffers(%b : ranks) {
  sdma.swap %b[0, 1] on 0 <-> %b[1, 1] on 1
}
