// The load/store kernel of a schedule with a signal/wait hand-off must run on
// the CPU against the reference simulator (FINDINGS.md F4: sdma-ldst-cpu
// refused every plan with more than 2 flags, "the host memory was made for
// another plan").
// RUN: python3 %sdma_src/test/diff/difftest.py --bin %sdma_bin --replay %s | FileCheck %s
// CHECK: ok   ldst-flags.mlir
sdma.schedule @ldst_flags ranks(%R = 3) buffers(%in : 1, %out : 3) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.signal 0 -> 1 tag 1
  sdma.wait 1 <- 0 tag 1
  sdma.copy %out[0, 1] on 1 -> %out[1, 1] on 2
}
