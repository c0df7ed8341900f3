// Two ops of rank 1 ordered only by their shared engine queue: every DMA
// variant must keep that order (FINDINGS.md F2: sdma-run refused it as racy
// after engine assignment). Shrunk from difftest seed 109.
// RUN: python3 %sdma_src/test/diff/difftest.py --bin %sdma_bin --replay %s | FileCheck %s
// CHECK: ok   user-engine.mlir
sdma.schedule @user_engine ranks(%R = 6) buffers(%in : 18, %out : 3, %tmp : 7, %sc : 2) {
  sdma.bcast %sc[1, 1] on 1 -> %sc[0, 1] on 3, %sc[1, 1] on 5 {engine = 0}
  sdma.copy %sc[0, 1] on 1 -> %sc[1, 1] on 5 {engine = 0}
}
