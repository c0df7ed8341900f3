// RUN: sdma-opt %schedules/all_gather_ring.mlir --sdma-unroll=ranks=8 --sdma-verify > /dev/null
// RUN: sdma-opt %schedules/all_gather_ring.mlir --sdma-unroll=ranks=8 | FileCheck %s
// RUN: sdma-opt %schedules/all_gather_ring.mlir --sdma-unroll=ranks=2 | FileCheck %s --check-prefix=R2

// Step 0: 8 local copies, then a fence.
// CHECK-LABEL: sdma.schedule @all_gather_ring ranks(%R = 8) buffers(%input : 1, %output : 8)
// CHECK-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// CHECK-COUNT-6: sdma.copy %input[0, 1] on
// CHECK-NEXT:    sdma.copy %input[0, 1] on 7 -> %output[7, 1] on 7
// CHECK-NEXT:    sdma.fence
// Step 1: each rank forwards its own chunk to the next.
// CHECK-NEXT:    sdma.copy %output[0, 1] on 0 -> %output[0, 1] on 1
// CHECK-NEXT:    sdma.signal 0 -> 1
// CHECK:         sdma.copy %output[7, 1] on 7 -> %output[7, 1] on 0
// CHECK-NEXT:    sdma.signal 7 -> 0
// CHECK-NEXT:    sdma.wait 0 <- 7
// CHECK-COUNT-7: sdma.wait
// Step 2: what arrived in step 1 moves on (rank 0 got chunk 7).
// CHECK-NEXT:    sdma.copy %output[7, 1] on 0 -> %output[7, 1] on 1
// Last step (7): rank 0 forwards chunk 2 and the ring is complete.
// CHECK:         sdma.copy %output[2, 1] on 0 -> %output[2, 1] on 1
// CHECK:         sdma.copy %output[1, 1] on 7 -> %output[1, 1] on 0
// CHECK-NEXT:    sdma.signal 7 -> 0
// CHECK-COUNT-8: sdma.wait
// CHECK-NEXT:  }

// R2-LABEL: sdma.schedule @all_gather_ring ranks(%R = 2)
// R2-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// R2-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1
// R2-NEXT:    sdma.fence
// R2-NEXT:    sdma.copy %output[0, 1] on 0 -> %output[0, 1] on 1
// R2-NEXT:    sdma.signal 0 -> 1
// R2-NEXT:    sdma.copy %output[1, 1] on 1 -> %output[1, 1] on 0
// R2-NEXT:    sdma.signal 1 -> 0
// R2-NEXT:    sdma.wait 0 <- 1
// R2-NEXT:    sdma.wait 1 <- 0
// R2-NEXT:  }
