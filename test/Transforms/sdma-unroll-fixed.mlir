// RUN: sdma-opt %s --sdma-unroll | FileCheck %s
// RUN: sdma-opt %s --sdma-unroll=ranks=2 | FileCheck %s
// RUN: not sdma-opt %s --sdma-unroll=ranks=5 2>&1 | FileCheck %s --check-prefix=MISMATCH

// A schedule that fixes its rank count needs no option; a matching option
// is accepted, a different one is an error.
// CHECK-LABEL: sdma.schedule @fixed ranks(%R = 2) buffers(%b : 4)
// CHECK-NEXT:    sdma.copy %b[0, 2] on 0 -> %b[2, 2] on 1
// CHECK-NEXT:    sdma.copy %b[0, 2] on 1 -> %b[2, 2] on 0
// MISMATCH: error: 'sdma.schedule' op fixes 2 ranks but sdma-unroll was given ranks=5
sdma.schedule @fixed ranks(%R = 2) buffers(%b : 2 x ranks) {
  affine.for %r = 0 to %R {
    %p = sdma.rank_add %r, 1
    sdma.copy %b[0, %R] on %r -> %b[%R, %R] on %p
  }
}

