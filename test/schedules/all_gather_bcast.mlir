// RUN: sdma-opt %schedules/all_gather_bcast.mlir --sdma-unroll=ranks=8 --sdma-verify | FileCheck %s
// RUN: sdma-opt %schedules/all_gather_bcast.mlir --sdma-unroll=ranks=5 --sdma-verify | FileCheck %s --check-prefix=R5

// 8 ranks: per rank a local copy, 3 broadcasts (peers r+1..r+6) and a copy
// to r-1 (R - 1 = 7 is odd).
// CHECK-LABEL: sdma.schedule @all_gather_bcast ranks(%R = 8) buffers(%input : 1, %output : 8) implements all_gather(%input -> %output)
// CHECK-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// CHECK-NEXT:    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 1, %output[0, 1] on 2
// CHECK-NEXT:    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 3, %output[0, 1] on 4
// CHECK-NEXT:    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 5, %output[0, 1] on 6
// CHECK-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 7
// CHECK:         sdma.bcast %input[0, 1] on 7 -> %output[7, 1] on 4, %output[7, 1] on 5
// CHECK-NEXT:    sdma.copy %input[0, 1] on 7 -> %output[7, 1] on 6
// CHECK-NEXT:  }

// 5 ranks: two broadcasts cover the four peers.
// R5-LABEL: sdma.schedule @all_gather_bcast ranks(%R = 5)
// R5-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// R5-NEXT:    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 1, %output[0, 1] on 2
// R5-NEXT:    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 3, %output[0, 1] on 4
// R5-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1
