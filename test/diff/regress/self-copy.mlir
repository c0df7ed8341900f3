// A legal copy of a slice onto itself must survive every DMA variant and load
// in the runtime (FINDINGS.md F1: pcpy/b2b plans kept it, "slices overlap").
// RUN: python3 %sdma_src/test/diff/difftest.py --bin %sdma_bin --replay %s | FileCheck %s
// CHECK: ok   self-copy.mlir
sdma.schedule @self_copy ranks(%R = 2) buffers(%a : 2) {
  sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 0
  sdma.copy %a[0, 1] on 0 -> %a[1, 1] on 1
}
