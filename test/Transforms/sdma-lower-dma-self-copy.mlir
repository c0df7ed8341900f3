// RUN: sdma-opt %s --sdma-lower-dma="variant=pcpy" 2>/dev/null | FileCheck %s
// RUN: sdma-opt %s --sdma-lower-dma="variant=b2b" 2>/dev/null | FileCheck %s

// A copy of a slice onto itself is legal (it only reads) and does nothing:
// every variant drops it before engines are assigned, so no plan carries it.
// CHECK-LABEL: sdma.schedule @self_copy
// CHECK-NOT:     sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 0
// CHECK:         sdma.copy %a[0, 1] on 0 -> %a[1, 1] on 1 {engine = 0 : i64}
// CHECK-NOT:     sdma.copy
sdma.schedule @self_copy ranks(%R = 2) buffers(%a : 2) {
  sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 0
  sdma.copy %a[0, 1] on 0 -> %a[1, 1] on 1
}
