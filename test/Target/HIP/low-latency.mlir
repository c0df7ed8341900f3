// RUN: sdma-translate --sdma-to-hip %s | FileCheck %s
// RUN: sdma-translate --sdma-to-hip %S/basic.mlir | FileCheck %s --check-prefix=NONE

// The low-latency tables (LowLatency.h) of a schedule whose ranks each run
// one phase of copies and broadcasts of their own chunks. Rank 0 copies a[0]
// to rank 1's b[2] (its first chunk to rank 1: offset 0) and broadcasts
// a[1] to its own b[0] (in place: -1) and rank 1's b[1] (offset 1 after the
// copy's chunk); rank 1's ops, in the table's order, copy within itself and
// send rank 0 two chunks.
// Rank 0 receives one row (from 1: b[2], 2 chunks at 0); rank 1 two (from
// 0: b[2], 1 chunk at 0; b[1], 1 chunk at 1). The most chunks one rank
// sends another: 2.
// CHECK: "low_latency":{"pair_chunks":2}
// CHECK: #define SDMA_LL 1
// CHECK:      static __constant__ const long long sdma_ll_send[] = {
// CHECK-NEXT:     0, -1, -1, 1, -1, -1, 0, -1,};
// CHECK:      static __constant__ const long long sdma_ll_recv[] = {
// CHECK-NEXT:     1, 1, 2, 2, 0, 0, 1, 2, 1, 0, 0, 1,
// CHECK-NEXT:     1, 1, 1,};
// CHECK:      static __constant__ const int sdma_ll_recv_begin[] = {
// CHECK-NEXT:     0, 1, 3,};
// CHECK: sdma_ldst_ll(const SDMA_GRID_CONSTANT SdmaTable table,

// A rank with a sync, a signal or a wait, or a swap, has none.
// NONE-NOT: "low_latency"
// NONE-NOT: #define SDMA_LL 1
// NONE-NOT: sdma_ll_send[]
sdma.schedule @s ranks(%R = 2) buffers(%a : 2, %b : 4) {
  sdma.copy %a[0, 1] on 0 -> %b[2, 1] on 1
  sdma.bcast %a[1, 1] on 0 -> %b[0, 1] on 0, %b[1, 1] on 1
  sdma.copy %a[0, 2] on 1 -> %b[2, 2] on 0
  sdma.copy %a[0, 1] on 1 -> %b[0, 1] on 1
}
