// RUN: sdma-translate --sdma-to-hip %s | FileCheck %s

// The metadata line the runtime reads, the schedule as tables, and the
// generic kernel. Rank 0: a phase with a copy and a bcast, a sync and a
// signal to rank 1 (slot 0 = tag 0, source 0), a sync and the barrier (slot
// 2, value 2 = two ranks). Rank 1: a wait for the first signal of slot 0, a
// swap phase, a sync and the barrier. Per epoch, slot 0 of rank 1 gets one
// signal and slot 2 of each rank two barrier arrivals.
// CHECK: // sdma-ldst: {"format":"sdma.ldst","version":2,"schedule":"s","ranks":2,"entry":"sdma_ldst","flag_slots":3,"op_stride":12,"kernel":"specialised","buffers":[{"name":"a","chunks":2},{"name":"b","chunks":4}],"collective":null,"phases_per_rank":[1,1]}
// CHECK: #define SDMA_RANKS 2
// CHECK: #define SDMA_BUFFERS 2
// CHECK: #define SDMA_FLAG_SLOTS 3
// CHECK:      static __constant__ const long long sdma_ops[] = {
// CHECK-NEXT:     0, 0, 0, 0, 1, 1, 1, 2, 0, 0, 0, 0,
// CHECK-NEXT:     1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0,
// CHECK-NEXT:     2, 1, 1, 0, 2, 0, 1, 2, 0, 0, 0, 0,};
// CHECK:      static __constant__ const int sdma_steps[] = {
// CHECK-NEXT:     0, 0, 2, 1, 0, 0, 2, 1, 0, 1, 0, 0,
// CHECK-NEXT:     4, 2, 2, 3, 0, 1, 0, 2, 1, 1, 0, 0,
// CHECK-NEXT:     4, 2, 2,};
// CHECK:      static __constant__ const int sdma_rank_begin[] = {
// CHECK-NEXT:     0, 5, 9,};
// CHECK:      static __constant__ const unsigned long long sdma_per_epoch[] = {
// CHECK-NEXT:     0ull, 0ull, 2ull, 1ull, 0ull, 2ull,};
// CHECK: extern "C" __global__ void SDMA_BOUNDS
// CHECK-NEXT: sdma_ldst(const SDMA_GRID_CONSTANT SdmaTable table,
sdma.schedule @s ranks(%R = 2) buffers(%a : 2, %b : 4) {
  sdma.copy %a[0, 1] on 0 -> %b[2, 1] on 1
  sdma.bcast %a[1, 1] on 0 -> %b[0, 1] on 1, %b[1, 1] on 1
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.swap %b[0, 2] on 1 <-> %b[2, 2] on 0
  sdma.barrier
}
