// Ops of one rank on one engine run in program order: the second copy reads
// what the first wrote, ordered only by engine 1's queue. The load/store
// kernel must keep that order (issue 12: --sdma-to-hip once put both in one
// phase; sdma-run --backend=ldst-cpu on the build of 01:52 gave "510 bytes
// differ from the reference simulator" at 1 KiB).
// RUN: python3 %sdma_src/test/diff/difftest.py --bin %sdma_bin --replay %s | FileCheck %s
// CHECK: ok   ldst-engine-order.mlir
sdma.schedule @ldst_engine_order ranks(%R = 2) buffers(%a : 2, %b : 2 x ranks + 1) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 1 {engine = 1}
  sdma.copy %a[0, 1] on 0 -> %a[1, 1] on 0 {engine = 1}
  sdma.copy %a[1, 1] on 0 -> %b[2, 1] on 0 {engine = 1}
  sdma.signal 0 -> 1 tag 3
  sdma.wait 1 <- 0 tag 3
  sdma.copy %b[0, 1] on 1 -> %b[1, 1] on 0 {engine = 0}
}
