// RUN: sdma-opt %sdma_src/examples/tree_broadcast.mlir --sdma-unroll=ranks=6 -canonicalize | FileCheck %s
// RUN: sdma-opt %sdma_src/examples/tree_broadcast.mlir --sdma-unroll=ranks=2 | FileCheck %s --check-prefix=R2

// CHECK-LABEL: sdma.schedule @tree_broadcast ranks(%R = 6) buffers(%data : 1)
// CHECK-NEXT:    sdma.bcast %data[0, 1] on 0 -> %data[0, 1] on 1, %data[0, 1] on 2
// CHECK-NEXT:    sdma.signal 0 -> 1
// CHECK-NEXT:    sdma.signal 0 -> 2
// CHECK-NEXT:    sdma.wait 1 <- 0
// CHECK-NEXT:    sdma.bcast %data[0, 1] on 1 -> %data[0, 1] on 3, %data[0, 1] on 4
// CHECK-NEXT:    sdma.signal 1 -> 3
// CHECK-NEXT:    sdma.signal 1 -> 4
// CHECK-NEXT:    sdma.wait 2 <- 0
// CHECK-NEXT:    sdma.copy %data[0, 1] on 2 -> %data[0, 1] on 5
// CHECK-NEXT:    sdma.signal 2 -> 5
// CHECK-NEXT:    sdma.wait 3 <- 1
// CHECK-NEXT:    sdma.wait 4 <- 1
// CHECK-NEXT:    sdma.wait 5 <- 2
// CHECK-NEXT:  }

// R2-LABEL: sdma.schedule @tree_broadcast ranks(%R = 2)
// R2-NEXT:    sdma.copy %data[0, 1] on 0 -> %data[0, 1] on 1
// R2-NEXT:    sdma.signal 0 -> 1
// R2-NEXT:    sdma.wait 1 <- 0
// R2-NEXT:  }
