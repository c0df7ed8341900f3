// RUN: sdma-translate --sdma-to-hip --sdma-hip-no-reduce-fusion %s | FileCheck %s
// (reduce-fusion.mlir: the same schedule with the copies fused in.)

// sdma.reduce rows: one per destination slice and phase; the reduces that
// accumulate into it become its operands in sdma_rsrc, the destination's
// own value among them, all sorted by (rank, buffer, offset) whatever
// their order in the schedule (rank 0's sources are written 2 then 1): so
// every rank adds in0 + in1 + in2 in that order and the three sums are the
// same bits. Row: kind 4, destination (rank, buffer, offset), count,
// operator (0 sum), element type (2 bf16), first operand, operands,
// first-operand-is-the-start flag (always 1 now).
// The metadata names each buffer's type and the collective's operator.
// CHECK: // sdma-ldst: {{.*}}"buffers":[{"name":"in","chunks":2,"type":"bf16"},{"name":"out","chunks":2,"type":"bf16"}],"collective":{"kind":"all_reduce","input":"in","output":"out","op":"sum"}
// CHECK: #define SDMA_REDUCE 1
// CHECK-NEXT: #define SDMA_REDUCE_MAX_SRCS 3
// CHECK-NEXT: #define SDMA_REDUCE_MAX_DSTS 1
// CHECK-NEXT: #ifndef SDMA_REDUCE_TYPE
// CHECK-NEXT: #define SDMA_REDUCE_TYPE 2
// CHECK: #define SDMA_REDUCE_OP 0
// CHECK:      static __constant__ const long long sdma_ops[] = {
// CHECK-NEXT:     0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     4, 0, 1, 0, 2, 0, 2, 0, 3, 1, 0, 0,
// CHECK-NEXT:     0, 1, 0, 0, 2, 1, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     4, 1, 1, 0, 2, 0, 2, 3, 3, 1, 0, 0,
// CHECK-NEXT:     0, 2, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0,
// CHECK-NEXT:     4, 2, 1, 0, 2, 0, 2, 6, 3, 1, 0, 0,};
// Rank 0: out@0, in@1, in@2; rank 1: in@0, out@1, in@2; rank 2: in@0,
// in@1, out@2.
// CHECK:      static __constant__ const long long sdma_rsrc[] = {
// CHECK-NEXT:     0, 1, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0,
// CHECK-NEXT:     1, 1, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0,
// CHECK-NEXT:     2, 1, 0,};
// Each rank: its copy phase, a sync (the fence), the reduce phase.
// CHECK:      static __constant__ const int sdma_steps[] = {
// CHECK-NEXT:     0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 2, 1,
sdma.schedule @s ranks(%R = 3) buffers(%in : bf16[2], %out : bf16[2])
    implements all_reduce(%in -> %out) {
  sdma.copy %in[0, 2] on 0 -> %out[0, 2] on 0
  sdma.copy %in[0, 2] on 1 -> %out[0, 2] on 1
  sdma.copy %in[0, 2] on 2 -> %out[0, 2] on 2
  sdma.fence
  sdma.reduce sum %out[0, 2] on 0 <- %in[0, 2] on 2
  sdma.reduce sum %out[0, 2] on 0 <- %in[0, 2] on 1
  sdma.reduce sum %out[0, 2] on 1 <- %in[0, 2] on 0
  sdma.reduce sum %out[0, 2] on 1 <- %in[0, 2] on 2
  sdma.reduce sum %out[0, 2] on 2 <- %in[0, 2] on 0
  sdma.reduce sum %out[0, 2] on 2 <- %in[0, 2] on 1
}
