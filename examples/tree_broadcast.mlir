// Broadcast from rank 0 down a binary tree, with DMA broadcast copies.
//
// Ranks form a heap: rank r's children are 2r + 1 and 2r + 2. A rank waits
// for its parent's signal, then sends the chunk to both children with one
// sdma.bcast (or one sdma.copy when it has a single child) and signals them.
// Depth ceil(log2(R + 1)) - 1 steps instead of R - 1 for a chain.
//
//   R = 6              0
//                    /   \
//                   1     2
//                  / \   /
//                 3   4 5
//
//   before  data: rank 0 [x]   ranks 1..5 [ ]
//   after   data: every rank [x]
//
// Try it:
//   sdma-opt examples/tree_broadcast.mlir --sdma-unroll=ranks=6 -canonicalize
sdma.schedule @tree_broadcast ranks(%R) buffers(%data : 1)
    implements broadcast(%data -> %data) root 0 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  affine.for %r = 0 to %R {
    // Every rank but the root first waits for its parent.
    %rm1 = arith.subi %r, %c1 : index
    %parent = arith.divui %rm1, %c2 : index
    %hasParent = arith.cmpi uge, %r, %c1 : index
    scf.if %hasParent {
      sdma.wait %r <- %parent
    }
    %twice = arith.muli %r, %c2 : index
    %left = arith.addi %twice, %c1 : index
    %right = arith.addi %twice, %c2 : index
    %hasLeft = arith.cmpi ult, %left, %R : index
    %hasRight = arith.cmpi ult, %right, %R : index
    scf.if %hasRight {
      sdma.bcast %data[0, 1] on %r -> %data[0, 1] on %left, %data[0, 1] on %right
      sdma.signal %r -> %left
      sdma.signal %r -> %right
    } else {
      scf.if %hasLeft {
        sdma.copy %data[0, 1] on %r -> %data[0, 1] on %left
        sdma.signal %r -> %left
      }
    }
  }
}
