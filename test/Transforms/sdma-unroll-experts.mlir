// RUN: sdma-opt %s --sdma-unroll="ranks=3 experts=2 major-align=8" -split-input-file | FileCheck %s
// RUN: not sdma-opt %s --sdma-unroll="ranks=3 experts=2000" -split-input-file 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not sdma-opt %s --sdma-unroll="ranks=3" -split-input-file 2>&1 | FileCheck %s --check-prefix=UNBOUND
// RUN: not sdma-opt %s --sdma-unroll="ranks=3 experts=3" -split-input-file 2>&1 | FileCheck %s --check-prefix=FIXED

// sdma.experts is the bound E; `K x experts x ranks` becomes K * E * R
// chunks; the flat schedule carries experts and major_align.
// CHECK-LABEL: sdma.schedule @bind ranks(%R = 3) buffers(%t : counts[6], %u : counts[13], %d : 3)
// CHECK-SAME:    attributes {experts = 2 : i64, major_align = 8 : i64}
// CHECK-NEXT:    sdma.copy %t[2, 1] on 0 -> %u[2, 1] on 1
// CHECK-NEXT:    sdma.copy %t[5, 1] on 0 -> %u[12, 1] on 1
sdma.schedule @bind ranks(%R) buffers(%t : counts[experts x ranks], %u : counts[2 x experts x ranks + 1], %d : ranks) {
  %E = sdma.experts
  %last = arith.muli %E, %R : index
  %end = arith.muli %last, %E : index
  sdma.copy %t[%E, 1] on 0 -> %u[%E, 1] on 1
  sdma.copy %t[5, 1] on 0 -> %u[%end, 1] on 1
}

// -----

// UNBOUND: error: 'sdma.schedule' op sizes buffer 't' in experts, but none is bound: pass sdma-unroll experts=E
// RANGE: error: 'sdma.schedule' op experts=2000 is out of range [1, 1024] (sdma-unroll's experts option)
// FIXED: error: 'sdma.schedule' op fixes experts 2 but sdma-unroll was given experts=3
sdma.schedule @fixed ranks(%R) buffers(%t : counts[experts x ranks]) attributes {experts = 2} {
}

// -----

// UNBOUND: error: 'sdma.experts' op reads the experts per rank, but none is bound: pass sdma-unroll experts=E
sdma.schedule @unbound ranks(%R) buffers(%d : ranks) {
  %E = sdma.experts
  sdma.copy %d[%E, 1] on 0 -> %d[0, 1] on 1
}
