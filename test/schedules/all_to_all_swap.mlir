// RUN: sdma-opt %schedules/all_to_all_swap.mlir --sdma-unroll=ranks=8 --sdma-verify > %t
// RUN: FileCheck %s < %t
// RUN: grep -c sdma.swap %t | grep -x 28
// RUN: sdma-opt %schedules/all_to_all_swap.mlir --sdma-unroll=ranks=3 --sdma-verify | FileCheck %s --check-prefix=R3

// 8 ranks: 28 swaps (every pair once); rank 0 swaps with 1, 2, 3 and 4.
// CHECK-LABEL: sdma.schedule @all_to_all_swap ranks(%R = 8) buffers(%data : 8) implements all_to_all(%data -> %data)
// CHECK-NEXT:    sdma.swap %data[1, 1] on 0 <-> %data[0, 1] on 1
// CHECK-NEXT:    sdma.swap %data[2, 1] on 0 <-> %data[0, 1] on 2
// CHECK-NEXT:    sdma.swap %data[3, 1] on 0 <-> %data[0, 1] on 3
// CHECK-NEXT:    sdma.swap %data[4, 1] on 0 <-> %data[0, 1] on 4
// CHECK-NEXT:    sdma.swap %data[2, 1] on 1 <-> %data[1, 1] on 2
// Rank 4 and up do not repeat the distance-4 swaps.
// CHECK:         sdma.swap %data[5, 1] on 4 <-> %data[4, 1] on 5
// CHECK-NEXT:    sdma.swap %data[6, 1] on 4 <-> %data[4, 1] on 6
// CHECK-NEXT:    sdma.swap %data[7, 1] on 4 <-> %data[4, 1] on 7
// CHECK-NEXT:    sdma.swap %data[6, 1] on 5 <-> %data[5, 1] on 6

// R3-LABEL: sdma.schedule @all_to_all_swap ranks(%R = 3)
// R3-NEXT:    sdma.swap %data[1, 1] on 0 <-> %data[0, 1] on 1
// R3-NEXT:    sdma.swap %data[2, 1] on 1 <-> %data[1, 1] on 2
// R3-NEXT:    sdma.swap %data[0, 1] on 2 <-> %data[2, 1] on 0
// R3-NEXT:  }
