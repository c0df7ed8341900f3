// RUN: sdma-translate --sdma-to-hip %s | FileCheck %s
// RUN: sdma-opt %schedules/all_reduce_one_shot.mlir --sdma-unroll=ranks=2 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=REDUCE
// RUN: sdma-translate --sdma-to-hip %S/basic.mlir | FileCheck %s --check-prefix=NONE

// The low-latency tables (LowLatency.h) of a schedule whose ranks each run
// one phase of copies and broadcasts of their own chunks. Rank 0 copies a[0]
// to rank 1's b[2] and broadcasts a[1] to its own b[0] and rank 1's b[1];
// rank 1 copies a[0] within itself and a[0..2) to rank 0's b[2..4).
// Pushes (buffer, offset, chunks, to, pair offset): rank 0 a[0] and a[1]
// to rank 1 at 0 and 1; rank 1 a[0..2) to rank 0 at 0. Copies in place
// (buffer, offset, chunks, buffer, offset): rank 0 a[1] -> b[0]; rank 1
// a[0] -> b[0]. Receives (from, buffer, offset, chunks, pair offset):
// rank 0 b[2..4) from 1 at 0; rank 1 b[2] from 0 at 0, b[1] at 1. The most
// chunks one rank sends another: 2.
// CHECK: "low_latency":{"pair_chunks":2}
// CHECK: #define SDMA_LL 1
// CHECK:      static __constant__ const long long sdma_ll_push[] = {
// CHECK-NEXT:     0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0,
// CHECK-NEXT:     2, 0, 0,};
// CHECK:      static __constant__ const int sdma_ll_push_begin[] = {
// CHECK-NEXT:     0, 2, 3,};
// CHECK:      static __constant__ const long long sdma_ll_local[] = {
// CHECK-NEXT:     0, 1, 1, 1, 0, 0, 0, 1, 1, 0,};
// CHECK:      static __constant__ const long long sdma_ll_recv[] = {
// CHECK-NEXT:     1, 1, 2, 2, 0, 0, 1, 2, 1, 0, 0, 1,
// CHECK-NEXT:     1, 1, 1,};
// CHECK:      static __constant__ const int sdma_ll_recv_begin[] = {
// CHECK-NEXT:     0, 1, 3,};
// CHECK:      static __constant__ const long long sdma_ll_red[] = {0};
// CHECK: sdma_ldst_ll(const SDMA_GRID_CONSTANT SdmaTable table,

// A one-shot all-reduce at 2 ranks: each rank pushes its input to the other
// (pair offset 0) and reduces into its output (buffer 1): the initial value
// its own input in place (pair offset -1), then the peer's from its packets.
// REDUCE: "low_latency":{"pair_chunks":1}
// REDUCE:      static __constant__ const long long sdma_ll_push[] = {
// REDUCE-NEXT:     0, 0, 1, 1, 0, 0, 0, 1, 0, 0,};
// REDUCE:      static __constant__ const long long sdma_ll_red[] = {
// REDUCE-NEXT:     1, 0, 1, 1, 2, 0, 1, 0, 1, 1, 2, 2,};
// REDUCE:      static __constant__ const long long sdma_ll_rsrc[] = {
// REDUCE-NEXT:     0, 0, 0, -1, 1, 0, 0, 0, 0, 0, 0, 0,
// REDUCE-NEXT:     1, 0, 0, -1,};

// A rank with a sync, a signal or a wait, or a swap, has none.
// NONE-NOT: "low_latency"
// NONE-NOT: #define SDMA_LL 1
// NONE-NOT: sdma_ll_push[]
sdma.schedule @s ranks(%R = 2) buffers(%a : 2, %b : 4) {
  sdma.copy %a[0, 1] on 0 -> %b[2, 1] on 1
  sdma.bcast %a[1, 1] on 0 -> %b[0, 1] on 0, %b[1, 1] on 1
  sdma.copy %a[0, 2] on 1 -> %b[2, 2] on 0
  sdma.copy %a[0, 1] on 1 -> %b[0, 1] on 1
}
