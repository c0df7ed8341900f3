// RUN: sdma-opt %schedules/all_to_all_direct.mlir --sdma-unroll=ranks=8 --sdma-verify > /dev/null
// RUN: sdma-opt %schedules/all_to_all_direct.mlir --sdma-unroll=ranks=8 | FileCheck %s
// RUN: sdma-opt %schedules/all_to_all_direct.mlir --sdma-unroll=ranks=3 | FileCheck %s --check-prefix=R3

// CHECK-LABEL: sdma.schedule @all_to_all_direct ranks(%R = 8) buffers(%input : 8, %output : 8)
// CHECK-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// CHECK-NEXT:    sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1
// CHECK-COUNT-61: sdma.copy %input
// CHECK-NEXT:    sdma.copy %input[7, 1] on 7 -> %output[7, 1] on 7
// CHECK-NEXT:  }

// R3-LABEL: sdma.schedule @all_to_all_direct ranks(%R = 3)
// R3-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// R3-NEXT:    sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1
// R3-NEXT:    sdma.copy %input[2, 1] on 0 -> %output[0, 1] on 2
// R3-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0
// R3-NEXT:    sdma.copy %input[1, 1] on 1 -> %output[1, 1] on 1
// R3-NEXT:    sdma.copy %input[2, 1] on 1 -> %output[1, 1] on 2
// R3-NEXT:    sdma.copy %input[0, 1] on 2 -> %output[2, 1] on 0
// R3-NEXT:    sdma.copy %input[1, 1] on 2 -> %output[2, 1] on 1
// R3-NEXT:    sdma.copy %input[2, 1] on 2 -> %output[2, 1] on 2
// R3-NEXT:  }
