// RUN: sdma-translate --sdma-to-hip -split-input-file %s | FileCheck %s
// RUN: sdma-translate --sdma-to-hip --sdma-hip-table-kernel -split-input-file %s | FileCheck %s --check-prefix=TABLE
// Few segments (all-gather direct at 8 ranks: 8) are inlined into their
// phases; many (a broadcast in 34 phases of rank 0 alone) call one routine each.
// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=8 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=INLINE
// RUN: sdma-translate --sdma-to-hip %S/inputs/many-segments.mlir | FileCheck %s --check-prefix=CALL
// RUN: sdma-opt %schedules/all_gather_ring.mlir --sdma-unroll=ranks=8 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=RING
// INLINE: #define SDMA_SPECIALISED 1
// INLINE-NEXT: #ifndef SDMA_SEG_INLINE
// INLINE-NEXT: #define SDMA_SEG_INLINE SDMA_INLINE
// CALL: #define SDMA_SPECIALISED 1
// CALL-NOT: #define SDMA_SEG_INLINE SDMA_INLINE
// CALL: #define SDMA_SEG_INLINE __attribute__((noinline))
// All-gather direct: every rank's body the same up to numbers affine in the
// rank, its 8 copies affine in the op index (peer k gets this rank's input
// at chunk `rank`): one body, constants instead of table rows.
// INLINE: static __device__ SDMA_INLINE bool sdma_rank_all(
// INLINE: { // ops [(0 + 8 * rank), (8 + 8 * rank))
// INLINE: sdma_seg_move<0, true>(T, [=]
// INLINE: a = T->buf[((0 + 1 * rank)) * SDMA_BUFFERS + (0)] + (0) * unit;
// INLINE-NEXT: b = T->buf[(0 + 1 * k) * SDMA_BUFFERS + (1)] + ((0 + 1 * rank)) * unit;
// INLINE: }, 8, chunk, 1 * chunk, nthreads, u, base);
// INLINE-NOT: switch (rank)
// Rank 0's 34 segments are called, each instantiation shared, so their
// rows stay in sdma_ops; a function per rank (rank 1 has none of them).
// CALL: static __device__ bool sdma_rank_0(
// CALL: sdma_seg_move<0, true>(T, sdma_table_ops<0>{sdma_ops + 0}, 2, chunk, 1 * chunk, nthreads, u, base);
// CALL-NEXT: }
// CALL: sdma_seg_move<0, true>(T, sdma_table_ops<0>{sdma_ops + 24}, 2, chunk, 1 * chunk, nthreads, u, base);
// CALL: switch (rank)
// The ring's peers and chunks are counted around the ring (rank + 1 mod 8,
// rank - step mod 8): still one body, 7 segments, inlined.
// RING: #define SDMA_SEG_INLINE SDMA_INLINE
// RING: static __device__ SDMA_INLINE bool sdma_rank_all(
// RING: b = T->buf[(((1 + 1 * rank) % 8)) * SDMA_BUFFERS + (1)] + ((0 + 1 * rank)) * unit;
// RING: sdma_signal(T, ((1 + 1 * rank) % 8), (0 + 1 * rank));
// RING-NEXT: if (!sdma_wait(T, (0 + 1 * rank), ((7 + 1 * rank) % 8), epoch * 7 + 1))
// RING-NOT: switch (rank)
// Past 8192 steps and segments (the ring at 48 ranks: 48 x 47 phases with
// their syncs, signals and waits) the table kernel; at 32 ranks still
// specialised.
// RUN: sdma-opt %schedules/all_gather_ring.mlir --sdma-unroll=ranks=48 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=LARGE
// RUN: sdma-opt %schedules/all_gather_ring.mlir --sdma-unroll=ranks=32 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=BELOW
// LARGE: "kernel":"table"
// LARGE-NOT: #define SDMA_SPECIALISED 1
// BELOW: "kernel":"specialised"

// Each rank's steps as code. Rank 0's phase has, in program order, a copy
// of 2 chunks, a broadcast, and two copies of 1 chunk: sorted by (kind,
// size), the rows become three segments (the two 1-chunk copies, the
// 2-chunk copy, the broadcast), each one call with its kind, op count and
// size as constants. Then rank 0 syncs and signals rank 1 (slot 0); rank
// 1 waits for it (1 signal per run: epoch * 1 + 1), swaps, and both take
// the barrier (slot 2: 2 arrivals per run).
// CHECK-LABEL: "schedule":"s"
// CHECK-SAME: "kernel":"specialised"
// CHECK:      #define SDMA_SPECIALISED 1
// CHECK:      static __constant__ const long long sdma_ops[] = {
// CHECK-NEXT:     0, 0, 0, 2, 1, 1, 1, 2, 0, 0, 0, 0,
// CHECK-NEXT:     0, 0, 0, 3, 1, 0, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     1, 0, 0, 1, 1, 1, 1, 3, 0, 1, 3, 0,
// CHECK-NEXT:     2, 1, 1, 0, 1, 0, 1, 2, 0, 0, 0, 0,};
// CHECK:      // Each rank's steps (SDMA_SPECIALISED).
// CHECK-NEXT: static __device__ bool sdma_rank_0(
// CHECK:        { // ops [0, 4)
// CHECK-NEXT:     unsigned long long u = {{.*}}, base = 0;
// Each segment's rows are affine in the op index k (two rows always are):
// the addresses come from constants, not from sdma_ops.
// CHECK-NEXT:     sdma_seg_move<0>(T, [=](const SdmaTable *T, unsigned long long i,
// CHECK-NEXT:         unsigned long long unit, char *&a, char *&b, char *&c) {
// CHECK-NEXT:       const long long k = (long long)i;
// CHECK-NEXT:       a = T->buf[(0) * SDMA_BUFFERS + (0)] + (2 + 1 * k) * unit;
// CHECK-NEXT:       b = T->buf[(1 + (-1) * k) * SDMA_BUFFERS + (1)] + (2 + (-2) * k) * unit;
// CHECK-NEXT:       c = b;
// CHECK-NEXT:     }, 2, chunk, 1 * chunk, nthreads, u, base);
// CHECK-NEXT:     sdma_seg_move<0>(T, [=]
// CHECK:            a = T->buf[(0) * SDMA_BUFFERS + (0)] + (0) * unit;
// CHECK-NEXT:       b = T->buf[(1) * SDMA_BUFFERS + (1)] + (0) * unit;
// CHECK-NEXT:       c = b;
// CHECK-NEXT:     }, 1, chunk, 2 * chunk, nthreads, u, base);
// CHECK-NEXT:     sdma_seg_move<1>(T, [=]
// CHECK:            a = T->buf[(0) * SDMA_BUFFERS + (0)] + (1) * unit;
// CHECK-NEXT:       b = T->buf[(1) * SDMA_BUFFERS + (1)] + (3) * unit;
// CHECK-NEXT:       c = T->buf[(0) * SDMA_BUFFERS + (1)] + (3) * unit;
// CHECK-NEXT:     }, 1, chunk, 1 * chunk, nthreads, u, base);
// CHECK-NEXT:   }
// CHECK-NEXT:   sdma_rank_sync(T, 0);
// CHECK-NEXT:   sdma_signal(T, 1, 0);
// CHECK-NEXT:   sdma_rank_sync(T, 0);
// CHECK-NEXT:   if (!sdma_barrier_step(T, 0, 2, epoch * 2 + 2))
// CHECK-NEXT:     return false;
// CHECK-NEXT:   return true;
// CHECK-NEXT: }
// CHECK-NEXT: static __device__ bool sdma_rank_1(
// CHECK:        if (!sdma_wait(T, 1, 0, epoch * 1 + 1))
// CHECK-NEXT:     return false;
// CHECK-NEXT:   { // ops [4, 5)
// CHECK-NEXT:     unsigned long long u = {{.*}}, base = 0;
// CHECK-NEXT:     sdma_seg_move<2>(T, [=]
// CHECK:            a = T->buf[(1) * SDMA_BUFFERS + (1)] + (0) * unit;
// CHECK-NEXT:       b = T->buf[(0) * SDMA_BUFFERS + (1)] + (2) * unit;
// CHECK:          }, 1, chunk, 1 * chunk, nthreads, u, base);
// CHECK:      static __device__ bool sdma_run_rank(
// CHECK:        case 1:
// CHECK-NEXT:     return sdma_rank_1(T, chunk, epoch);
// The table kernel: program order kept, no rank functions.
// TABLE-LABEL: "schedule":"s"
// TABLE-SAME: "kernel":"table"
// TABLE-NOT:  #define SDMA_SPECIALISED 1
// TABLE:      static __constant__ const long long sdma_ops[] = {
// TABLE-NEXT:     0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0, 0,
// TABLE-NOT:  sdma_rank_0
sdma.schedule @s ranks(%R = 2) buffers(%a : 4, %b : 4) {
  sdma.copy %a[0, 2] on 0 -> %b[0, 2] on 1
  sdma.bcast %a[1, 1] on 0 -> %b[3, 1] on 1, %b[3, 1] on 0
  sdma.copy %a[2, 1] on 0 -> %b[2, 1] on 1
  sdma.copy %a[3, 1] on 0 -> %b[0, 1] on 0
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.swap %b[0, 1] on 1 <-> %b[2, 1] on 0
  sdma.barrier
}

// -----

// A two-shot all-reduce at 2 ranks: each rank's fused row (its own chunk
// as the initial value, the peer's added, the sum also stored to the
// peer) is one reduce segment: 2 sources, 1 extra destination, first = 1.
// Both ranks' code differs only in numbers affine in the rank (their op
// rows, 12 numbers apart): one body for every rank, no switch.
// CHECK-LABEL: "schedule":"two"
// CHECK-SAME: "kernel":"specialised"
// CHECK-NOT: sdma_rank_0
// CHECK: static __device__ SDMA_INLINE bool sdma_rank_all(const SdmaTable *T, int rank,
// CHECK: sdma_seg_reduce<2, 1, 1>(T, sdma_ops + (0 + 12 * rank), 1, chunk, 1 * chunk, nthreads, u, base);
// CHECK: static __device__ bool sdma_run_rank(
// CHECK-NEXT: unsigned long long chunk,
// CHECK-NEXT: unsigned long long epoch) {
// CHECK-NEXT: return sdma_rank_all(T, rank, chunk, epoch);
sdma.schedule @two ranks(%R = 2) buffers(%in : f32[2], %out : f32[2])
    implements all_reduce(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[1, 1] on 1 -> %out[1, 1] on 1
  sdma.fence
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.reduce sum %out[1, 1] on 1 <- %in[1, 1] on 0
  sdma.fence
  sdma.copy %out[0, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %out[1, 1] on 1 -> %out[1, 1] on 0
}

// -----

// Counts read at run time (sdma.copyv): the table kernel.
// CHECK-LABEL: "schedule":"v"
// CHECK-SAME: "kernel":"table"
// CHECK-NOT: #define SDMA_SPECIALISED 1
// CHECK-NOT: sdma_rank_0
sdma.schedule @v ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  sdma.copyv %in[0] on 0 -> %out[0] on 1, count %n[0] on 0 max 1
}
