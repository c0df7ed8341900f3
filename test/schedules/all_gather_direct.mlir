// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=8 --sdma-verify > /dev/null
// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=8 | FileCheck %s
// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=8 -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=8 | sdma-translate --sdma-to-json | FileCheck %s --check-prefix=JSON

// 8 x 8 copies: rank r's input to output slot r on every rank p.
// CHECK-LABEL: sdma.schedule @all_gather_direct ranks(%R = 8) buffers(%input : 1, %output : 8)
// CHECK-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// CHECK-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1
// CHECK-COUNT-61: sdma.copy %input[0, 1] on
// CHECK-NEXT:    sdma.copy %input[0, 1] on 7 -> %output[7, 1] on 7
// CHECK-NEXT:  }

// Nothing in it is redundant: canonicalisation keeps all 64 copies.
// CANON-COUNT-64: sdma.copy
// CANON-NOT:      sdma.copy

// JSON: "name": "all_gather_direct",
// JSON-NEXT: "ranks": 8,
// JSON-COUNT-64: "op": "copy",
// JSON-NOT: "op":
