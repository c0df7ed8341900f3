// RUN: sdma-opt %s --sdma-merge-copies -split-input-file | FileCheck %s
// RUN: sdma-opt %s -canonicalize -split-input-file | FileCheck %s --check-prefix=CANON

// Contiguous copies between the same buffers and ranks merge, in either
// order, across other transfers, into one copy.
// CHECK-LABEL: sdma.schedule @merge
// CHECK-NEXT:    sdma.copy %in[0, 4] on 0 -> %out[4, 4] on 1
// CHECK-NEXT:    sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 2
// CHECK-NEXT:  }
sdma.schedule @merge ranks(%R = 4) buffers(%in : 4, %out : 2 x ranks) {
  sdma.copy %in[1, 1] on 0 -> %out[5, 1] on 1
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 2
  sdma.copy %in[0, 1] on 0 -> %out[4, 1] on 1
  sdma.copy %in[2, 2] on 0 -> %out[6, 2] on 1
}

// -----

// Copies on either side of an ordering op never merge: the fence orders them.
// CHECK-LABEL: sdma.schedule @no_merge_across_fence
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
// CHECK-NEXT:    sdma.fence
// CHECK-NEXT:    sdma.copy %in[1, 1] on 0 -> %out[1, 1] on 1
sdma.schedule @no_merge_across_fence ranks(%R = 2) buffers(%in : 2, %out : 2) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.fence
  sdma.copy %in[1, 1] on 0 -> %out[1, 1] on 1
}

// -----

// Not contiguous on both sides, different ranks, or within one buffer on one
// rank: no merge.
// CHECK-LABEL: sdma.schedule @no_merge
// CHECK-COUNT-6: sdma.copy
sdma.schedule @no_merge ranks(%R = 4) buffers(%in : 4, %out : 8, %b : 8) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %in[1, 1] on 0 -> %out[2, 1] on 1
  sdma.copy %in[2, 1] on 1 -> %out[3, 1] on 1
  sdma.copy %in[3, 1] on 0 -> %out[3, 1] on 2
  sdma.copy %b[0, 1] on 0 -> %b[4, 1] on 0
  sdma.copy %b[1, 1] on 0 -> %b[5, 1] on 0
}

// -----

// A run of three in shuffled order among other transfers, and a second run
// with the same buffers but a different offset difference: each merges on
// its own, into the first of its copies.
// CHECK-LABEL: sdma.schedule @runs
// CHECK-NEXT:    sdma.copy %in[0, 3] on 0 -> %out[0, 3] on 1
// CHECK-NEXT:    sdma.copy %in[0, 1] on 2 -> %out[0, 1] on 3
// CHECK-NEXT:    sdma.copy %in[4, 2] on 0 -> %out[5, 2] on 1
// CHECK-NEXT:  }
sdma.schedule @runs ranks(%R = 4) buffers(%in : 8, %out : 8) {
  sdma.copy %in[2, 1] on 0 -> %out[2, 1] on 1
  sdma.copy %in[0, 1] on 2 -> %out[0, 1] on 3
  sdma.copy %in[4, 1] on 0 -> %out[5, 1] on 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %in[5, 1] on 0 -> %out[6, 1] on 1
  sdma.copy %in[1, 1] on 0 -> %out[1, 1] on 1
}

// -----

// Copies on an engine are ordered with the engine's other ops, copies with
// dynamic fields are not known to abut, and the canonicalizer does not
// merge at all: left alone.
// CHECK-LABEL: sdma.schedule @left_alone
// CHECK-COUNT-4: sdma.copy
// CANON-LABEL: sdma.schedule @left_alone
// CANON-COUNT-4: sdma.copy
sdma.schedule @left_alone ranks(%R = 2) buffers(%in : 4, %out : 4) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.copy %in[1, 1] on 0 -> %out[1, 1] on 1 {engine = 0 : i64}
  affine.for %i = 0 to 2 {
    sdma.copy %in[%i, 1] on 1 -> %out[%i, 1] on 0
    sdma.copy %in[2, 1] on 1 -> %out[2, 1] on 0
  }
}
