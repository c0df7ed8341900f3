// RUN: sdma-opt %s --sdma-verify="report=0 memory-budget=100" -verify-diagnostics

// ... and the happens-before sets (ops^2 bits): 12 nodes need 12 x 8 bytes
// (one 64-bit word each), within 100 bytes; 13 need 104.
// expected-error @+1 {{is too large to verify: its 13 ordering nodes need 104 bytes of happens-before sets, over the verifier's memory budget of 100 bytes (raise it: SDMA_MEMORY_BUDGET or sdma-verify's memory-budget; or verify fewer ranks)}}
sdma.schedule @many ranks(%R = 2) buffers(%a : 16) {
  sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 1
  sdma.copy %a[1, 1] on 0 -> %a[1, 1] on 1
  sdma.copy %a[2, 1] on 0 -> %a[2, 1] on 1
  sdma.copy %a[3, 1] on 0 -> %a[3, 1] on 1
  sdma.copy %a[4, 1] on 0 -> %a[4, 1] on 1
  sdma.copy %a[5, 1] on 0 -> %a[5, 1] on 1
  sdma.copy %a[6, 1] on 0 -> %a[6, 1] on 1
  sdma.copy %a[7, 1] on 0 -> %a[7, 1] on 1
  sdma.copy %a[8, 1] on 0 -> %a[8, 1] on 1
  sdma.copy %a[9, 1] on 0 -> %a[9, 1] on 1
  sdma.copy %a[10, 1] on 0 -> %a[10, 1] on 1
  sdma.copy %a[11, 1] on 0 -> %a[11, 1] on 1
  sdma.copy %a[12, 1] on 0 -> %a[12, 1] on 1
}
