// RUN: sdma-opt %s --sdma-verify="report=0 memory-budget=1600" -verify-diagnostics

// ... and the graph (128 bytes a node with its edges and bookkeeping; no
// happens-before sets are stored), counted before anything is built: 12
// nodes need 1536 bytes, within 1600; 13 need 1664.
// expected-error @+1 {{is too large to verify: its 13 ordering nodes need 1.6 KiB for its graph, over the verifier's memory budget of 1.6 KiB (raise it: SDMA_MEMORY_BUDGET or sdma-verify's memory-budget; or verify fewer ranks)}}
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
