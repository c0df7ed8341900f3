// RUN: sdma-opt %s --sdma-unroll="ranks=6 local-ranks=3" | FileCheck %s
// RUN: not sdma-opt %s --sdma-unroll="ranks=6 local-ranks=4" 2>&1 | FileCheck %s --check-prefix=SIX-FOUR
// RUN: not sdma-opt %s --sdma-unroll="ranks=6 local-ranks=0" 2>&1 | FileCheck %s --check-prefix=UNBOUND

// sdma.local_ranks evaluates to the bound G; the flat schedule carries it.
// Rank 0 of each node sends to rank 0 of the next node.
// CHECK-LABEL: sdma.schedule @ring_of_nodes ranks(%R = 6)
// CHECK-SAME:  attributes {local_ranks = 3 : i64}
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 3
// CHECK-NEXT:    sdma.copy %in[0, 1] on 3 -> %out[0, 1] on 0
// CHECK-NEXT:  }
sdma.schedule @ring_of_nodes ranks(%R) buffers(%in : 1, %out : 1) {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  %c1 = arith.constant 1 : index
  affine.for %n = 0 to %N {
    %r = arith.muli %n, %G : index
    %m = arith.addi %n, %c1 : index
    %next = arith.remui %m, %N : index
    %p = arith.muli %next, %G : index
    sdma.copy %in[0, 1] on %r -> %out[0, 1] on %p
  }
}
// SIX-FOUR: error: 'sdma.schedule' op cannot have 4 ranks per node: 6 ranks are not a whole number of such nodes (sdma-unroll's local-ranks option)
// UNBOUND: error: 'sdma.local_ranks' op reads the ranks per node, but none is bound: pass sdma-unroll local-ranks=G
