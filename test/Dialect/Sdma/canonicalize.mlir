// RUN: sdma-opt %s -canonicalize -split-input-file | FileCheck %s

// A copy of a slice onto itself is dropped; other copies stay.
// CHECK-LABEL: sdma.schedule @self_copy
// CHECK-NEXT:    sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
// CHECK-NEXT:  }
sdma.schedule @self_copy ranks(%R = 2) buffers(%b : 2) {
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 0
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
}

// -----

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

// Constant field operands become static fields; rank_add folds once the rank
// count is fixed.
// CHECK-LABEL: sdma.schedule @fold_fields
// CHECK-NEXT:    sdma.copy %b[1, 1] on 3 -> %b[1, 1] on 0
// CHECK-NEXT:    sdma.signal 3 -> 0
// CHECK-NEXT:  }
sdma.schedule @fold_fields ranks(%R = 4) buffers(%b : ranks) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = sdma.rank_add %c3, %c1
  sdma.copy %b[%c1, 1] on %c3 -> %b[%c1, 1] on %n
  sdma.signal %c3 -> %n
}

// -----

// rank_add by a multiple of the rank count is the rank itself, even when the
// rank is unknown; with an open rank count nothing else folds.
// CHECK-LABEL: sdma.schedule @rank_add_identity
// CHECK:         affine.for %[[R:.*]] = 0 to 4 {
// CHECK-NEXT:      sdma.fence on %[[R]]
sdma.schedule @rank_add_identity ranks(%R = 4) buffers(%b : ranks) {
  affine.for %r = 0 to 4 {
    %same = sdma.rank_add %r, 8
    sdma.fence on %same
  }
}

// -----

// CHECK-LABEL: sdma.schedule @open_count
// CHECK:         sdma.rank_add 3, 1
sdma.schedule @open_count ranks(%R) buffers(%b : ranks) {
  %n = sdma.rank_add 3, 1
  sdma.fence on %n
}
