// RUN: sdma-translate --sdma-to-hip --sdma-hip-table-kernel -split-input-file %s | FileCheck %s
// RUN: sdma-translate --sdma-to-hip --sdma-hip-table-kernel --sdma-hip-no-reduce-fusion -split-input-file %s | FileCheck %s --check-prefix=APART

// The table kernel's layout (a specialised kernel sorts each phase's rows;
// specialise.mlir).

// Two-shot at 2 ranks: rank r copies its chunk r, adds the peer's, and
// copies the sum to the peer. Both copies fuse into the reduce row: the own
// input is the first operand (row[9] = 1), the peer's output an extra
// destination (row[10] = 1), one phase per rank and no sync at all.
// Row: kind 4, destination (rank, buffer, offset), count, operator, type,
// first of its sdma_rsrc entries, operands, initial-value flag, extra
// destinations. rsrc of rank 0: in[0] on 0 (initial), in[0] on 1, then
// out[0] on 1 (destination); of rank 1: in[1] on 0, in[1] on 1 (the
// fused copy's source takes its rank's place in the order), out[1] on 0.
// CHECK-LABEL: schedule":"two"
// CHECK: #define SDMA_REDUCE_MAX_SRCS 2
// CHECK-NEXT: #define SDMA_REDUCE_MAX_DSTS 1
// CHECK:      sdma_ops[] = {
// CHECK-NEXT:     4, 0, 1, 0, 1, 0, 0, 0, 2, 1, 1, 0,
// CHECK-NEXT:     4, 1, 1, 1, 1, 0, 0, 3, 2, 1, 1, 0,};
// CHECK:      sdma_rsrc[] = {
// CHECK-NEXT:     0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1,
// CHECK-NEXT:     1, 0, 1, 0, 1, 1,};
// CHECK:      sdma_steps[] = {
// CHECK-NEXT:     0, 0, 1, 0, 1, 1,};
// Apart: copy phase, sync, reduce phase, sync, copy phase per rank.
// APART-LABEL: schedule":"two"
// APART:      sdma_steps[] = {
// APART-NEXT:     0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0,
// APART-NEXT:     0, 2, 1, 0, 3, 1, 1, 0, 0, 0, 4, 1,
// APART-NEXT:     1, 0, 0, 0, 5, 1,};
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

// Not fused: rank 0 signals and waits between its copy and its reduce
// (rank 1 reads the copied value in between, so the copy must stay where
// it is); rank 1's reduce of %out is apart from its copy too.
// CHECK-LABEL: schedule":"signalled"
// CHECK:      sdma_ops[] = {
// CHECK-NEXT:     0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     4, 0, 1, 0, 1, 0, 0, 0, 2, 1, 0, 0,
// CHECK-NEXT:     0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0,
sdma.schedule @signalled ranks(%R = 2) buffers(%in : f32[1], %out : f32[1], %peek : f32[1])
    implements all_reduce(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 1
  sdma.copy %in[0, 1] on 1 -> %peek[0, 1] on 1
  sdma.fence
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.reduce sum %peek[0, 1] on 1 <- %out[0, 1] on 0
  sdma.fence on 1
  sdma.signal 1 -> 0
  sdma.wait 0 <- 1
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.reduce sum %out[0, 1] on 1 <- %in[0, 1] on 0
}

// -----

// Not fused: an op of the reduce's phase writes the copy's source (%a), so
// reading it there would see the new value; and one writes where the sum
// is copied to afterwards (%e), which must end up holding the sum.
// CHECK-LABEL: schedule":"shared"
// CHECK:      sdma_ops[] = {
// CHECK-NEXT:     0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     4, 0, 1, 0, 1, 0, 0, 0, 2, 1, 0, 0,
// CHECK-NEXT:     0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0,
// CHECK-NEXT:     0, 0, 2, 0, 1, 0, 3, 0, 0, 0, 0, 0,
// CHECK-NEXT:     0, 0, 1, 0, 1, 0, 3, 0, 0, 0, 0, 0,};
sdma.schedule @shared ranks(%R = 2) buffers(%a : f32[1], %d : f32[1], %s : f32[1], %e : f32[1]) {
  sdma.copy %a[0, 1] on 0 -> %d[0, 1] on 0
  sdma.fence
  sdma.reduce sum %d[0, 1] on 0 <- %s[0, 1] on 1
  sdma.copy %s[0, 1] on 0 -> %a[0, 1] on 0
  sdma.copy %s[0, 1] on 0 -> %e[0, 1] on 0
  sdma.fence
  sdma.copy %d[0, 1] on 0 -> %e[0, 1] on 0
}
