// RUN: sdma-opt %s -canonicalize -split-input-file | FileCheck %s
// (Merging abutting copies is sdma-merge-copies: test/Transforms/sdma-merge-copies.mlir.)

// A copy of a slice onto itself is dropped; other copies stay.
// CHECK-LABEL: sdma.schedule @self_copy
// CHECK-NEXT:    sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
// CHECK-NEXT:  }
sdma.schedule @self_copy ranks(%R = 2) buffers(%b : 2) {
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 0
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
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
