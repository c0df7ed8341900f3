// RUN: sdma-opt %s | FileCheck %s
// RUN: sdma-opt %s | sdma-opt | FileCheck %s
// RUN: sdma-opt %s --mlir-print-op-generic | sdma-opt | FileCheck %s

// Every op, with constant and SSA fields, round-trips.

// CHECK-LABEL: sdma.schedule @every_op ranks(%R = 4)
// CHECK-SAME:    buffers(%input : 1, %output : ranks, %tmp : 2 x ranks + 1, %flat : 7)
sdma.schedule @every_op ranks(%R = 4)
    buffers(%input : 1, %output : ranks, %tmp : 2 x ranks + 1, %flat : 7) {
  // CHECK: sdma.copy %input[0, 1] on 0 -> %output[3, 1] on 2
  sdma.copy %input[0, 1] on 0 -> %output[3, 1] on 2
  // CHECK: sdma.bcast %input[0, 1] on 1 -> %output[1, 1] on 2, %output[1, 1] on 3
  sdma.bcast %input[0, 1] on 1 -> %output[1, 1] on 2, %output[1, 1] on 3
  // CHECK: sdma.swap %tmp[0, 2] on 0 <-> %tmp[2, 2] on 1
  sdma.swap %tmp[0, 2] on 0 <-> %tmp[2, 2] on 1
  // CHECK: sdma.fence{{$}}
  sdma.fence
  // CHECK: sdma.fence on 3
  sdma.fence on 3
  // CHECK: sdma.signal 0 -> 1{{$}}
  sdma.signal 0 -> 1
  // CHECK: sdma.signal 0 -> 1 tag 7
  sdma.signal 0 -> 1 tag 7
  // CHECK: sdma.wait 1 <- 0{{$}}
  sdma.wait 1 <- 0
  // CHECK: sdma.wait 1 <- 0 tag 7
  sdma.wait 1 <- 0 tag 7
  // CHECK: sdma.barrier
  sdma.barrier
  // CHECK: sdma.copy %flat[0, 7] on 3 -> %flat[0, 7] on 0 {note = "kept"}
  sdma.copy %flat[0, 7] on 3 -> %flat[0, 7] on 0 {note = "kept"}
}

// CHECK-LABEL: sdma.schedule @parametric ranks(%R)
sdma.schedule @parametric ranks(%R) buffers(%in : ranks, %out : ranks) {
  // CHECK: affine.for %[[R:.*]] = 0 to %R {
  affine.for %r = 0 to %R {
    // CHECK: affine.for %[[P:.*]] = 0 to %R {
    affine.for %p = 0 to %R {
      // CHECK: %[[N:.*]] = sdma.rank_add %[[R]], 1
      %n = sdma.rank_add %r, 1
      // CHECK: %[[M:.*]] = sdma.rank_add %[[R]], %[[P]]
      %m = sdma.rank_add %r, %p
      // CHECK: sdma.copy %in[%[[P]], 1] on %[[R]] -> %out[%[[R]], 1] on %[[P]]
      sdma.copy %in[%p, 1] on %r -> %out[%r, 1] on %p
      // CHECK: sdma.bcast %in[%[[P]], 1] on %[[R]] -> %out[%[[R]], 1] on %[[N]], %out[%[[R]], 1] on %[[M]]
      sdma.bcast %in[%p, 1] on %r -> %out[%r, 1] on %n, %out[%r, 1] on %m
      // CHECK: sdma.swap %in[%[[P]], 1] on %[[R]] <-> %in[%[[R]], 1] on %[[P]]
      sdma.swap %in[%p, 1] on %r <-> %in[%r, 1] on %p
      // CHECK: sdma.fence on %[[R]]
      sdma.fence on %r
      // CHECK: sdma.signal %[[R]] -> %[[N]] tag 1
      sdma.signal %r -> %n tag 1
      // CHECK: sdma.wait %[[N]] <- %[[R]] tag 1
      sdma.wait %n <- %r tag 1
    }
  }
}

// scf loops and plain arith work too.
// CHECK-LABEL: sdma.schedule @with_scf ranks(%R)
sdma.schedule @with_scf ranks(%R) buffers(%buf : 2 x ranks) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for
  scf.for %r = %c0 to %R step %c1 {
    %twice = arith.muli %r, %c1 : index
    %cond = arith.cmpi ne, %r, %c0 : index
    // CHECK: scf.if
    scf.if %cond {
      sdma.copy %buf[%twice, 1] on %r -> %buf[%twice, 1] on %c0
    }
  }
}

// An empty schedule is valid.
// CHECK-LABEL: sdma.schedule @empty ranks(%R = 1) buffers(%b : 1) {
// CHECK-NEXT: }
sdma.schedule @empty ranks(%R = 1) buffers(%b : 1) {
}

// The collective a schedule implements, and engine-level ops.
// CHECK-LABEL: sdma.schedule @engine_level ranks(%R = 2) buffers(%in : 1, %out : ranks) implements gather(%in -> %out) root 1 {
// CHECK-NEXT:    sdma.poll 0 : 3 until[0] at_least 1
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 3 : i64}
// CHECK-NEXT:    sdma.notify 0 : 3 -> 1[2]
sdma.schedule @engine_level ranks(%R = 2) buffers(%in : 1, %out : ranks) implements gather(%in -> %out) root 1 {
  sdma.poll 0 : 3 until [0] at_least 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 3 : i64}
  sdma.notify 0 : 3 -> 1 [2]
}
// CHECK-LABEL: sdma.schedule @in_place ranks(%R) buffers(%d : ranks) implements all_to_all(%d -> %d) {
sdma.schedule @in_place ranks(%R) buffers(%d : ranks) implements all_to_all(%d -> %d) {
}

// Count tables and run-time counts: fixed slots, packed segments, and
// fields from loop variables.
// CHECK-LABEL: sdma.schedule @moe ranks(%R = 2) buffers(%in : ranks, %out : ranks, %send : counts[ranks], %recv : counts[2]) implements all_to_allv(%in -> %out) counts(%send -> %recv)
// CHECK-NEXT:    sdma.copy %send[1, 1] on 0 -> %recv[0, 1] on 1
// CHECK-NEXT:    sdma.copyv %in[1] on 0 -> %out[0] on 1, count %send[1] on 0 max 1
// CHECK-NEXT:    sdma.copyv %in[packed %send[1] on 0] on 0 -> %out[packed %recv[0] on 1] on 1, count %send[1] on 0 max 1
// CHECK:         sdma.copyv %in[%{{.*}}] on %{{.*}} -> %out[packed %recv[%{{.*}}] on %{{.*}}] on %{{.*}}, count %send[%{{.*}}] on %{{.*}} max 1
sdma.schedule @moe ranks(%R = 2) buffers(%in : ranks, %out : ranks, %send : counts[ranks], %recv : counts[2]) implements all_to_allv(%in -> %out) counts(%send -> %recv) {
  sdma.copy %send[1, 1] on 0 -> %recv[0, 1] on 1
  sdma.copyv %in[1] on 0 -> %out[0] on 1, count %send[1] on 0 max 1
  sdma.copyv %in[packed %send[1] on 0] on 0 -> %out[packed %recv[0] on 1] on 1, count %send[1] on 0 max 1
  affine.for %r = 0 to 2 {
    %p = sdma.rank_add %r, 1
    sdma.copyv %in[%p] on %r -> %out[packed %recv[%r] on %p] on %p, count %send[%p] on %r max 1
  }
}

// The MoE forms: sizes in experts, sdma.experts, expert-major and `at`
// offsets.
// CHECK-LABEL: sdma.schedule @moe_2d ranks(%R) buffers(%in : ranks, %out : 2 x ranks + 1, %send : counts[2 x experts x ranks], %recv : counts[experts x ranks]) implements all_to_allv_2d_offset(%in -> %out) counts(%send -> %recv) attributes {major_align = 4 : i64}
// CHECK-NEXT:    %[[E:.*]] = sdma.experts
// CHECK-NEXT:    sdma.copyv %in[at %send[%[[E]]] on 1] on 1 -> %out[packed %recv[1] on 0] on 0, count %send[0] on 1 max 1
// CHECK-NEXT:    sdma.copyv %in[packed %send[1] on 0] on 0 -> %out[expert_major %recv[1] on 1] on 1, count %send[1] on 0 max 1
// CHECK-NEXT:    sdma.copyv %in[packed forwarded %send[1] on 0] on 0 -> %out[expert_major forwarded %recv[1] on 1] on 1, count %send[1] on 0 max 1
// CHECK-NEXT:    sdma.copyv %in[at %send[2] on 0] on 0 -> %out[packed forwarded %recv[0] on 1] on 1, count %send[1] on 0 max 1
sdma.schedule @moe_2d ranks(%R) buffers(%in : ranks, %out : 2 x ranks + 1, %send : counts[2 x experts x ranks], %recv : counts[experts x ranks]) implements all_to_allv_2d_offset(%in -> %out) counts(%send -> %recv) attributes {major_align = 4} {
  %e = sdma.experts
  sdma.copyv %in[at %send[%e] on 1] on 1 -> %out[packed %recv[1] on 0] on 0, count %send[0] on 1 max 1
  sdma.copyv %in[packed %send[1] on 0] on 0 -> %out[expert_major %recv[1] on 1] on 1, count %send[1] on 0 max 1
  sdma.copyv %in[packed forwarded %send[1] on 0] on 0 -> %out[expert_major forwarded %recv[1] on 1] on 1, count %send[1] on 0 max 1
  sdma.copyv %in[at %send[2] on 0] on 0 -> %out[packed forwarded %recv[0] on 1] on 1, count %send[1] on 0 max 1
}

// The root of a rooted schedule, named as a value.
// CHECK-LABEL: sdma.schedule @rooted ranks(%R) buffers(%in : 1, %out : 1) implements broadcast(%in -> %out) root 0 {
// CHECK-NEXT:    %[[ROOT:.*]] = sdma.root
// CHECK-NEXT:    affine.for %[[P:.*]] = 0 to %R {
// CHECK-NEXT:      sdma.copy %in[0, 1] on %[[ROOT]] -> %out[0, 1] on %[[P]]
sdma.schedule @rooted ranks(%R) buffers(%in : 1, %out : 1) implements broadcast(%in -> %out) root 0 {
  %root = sdma.root
  affine.for %p = 0 to %R {
    sdma.copy %in[0, 1] on %root -> %out[0, 1] on %p
  }
}

// Pulls: the destination's rank issues the copy (a get); `pull` prints
// first, and the generic form keeps it as a unit attribute.
// CHECK-LABEL: sdma.schedule @pulls
// CHECK-NEXT:    sdma.copy pull %in[0, 1] on 1 -> %out[0, 1] on 0
// CHECK-NEXT:    sdma.copy pull %in[0, 1] on 0 -> %out[1, 1] on 1 {engine = 2 : i64}
// CHECK-NEXT:    sdma.copyv pull %in[at %send[2] on 1] on 1 -> %out[packed forwarded %recv[0] on 0] on 0, count %send[0] on 1 max 1
// CHECK-NEXT:    sdma.copy %send[0, 1] on 1 -> %recv[0, 1] on 0
sdma.schedule @pulls ranks(%R = 2) buffers(%in : ranks, %out : ranks, %send : counts[2 x ranks], %recv : counts[ranks]) {
  sdma.copy pull %in[0, 1] on 1 -> %out[0, 1] on 0
  sdma.copy pull %in[0, 1] on 0 -> %out[1, 1] on 1 {engine = 2 : i64}
  sdma.copyv pull %in[at %send[2] on 1] on 1 -> %out[packed forwarded %recv[0] on 0] on 0, count %send[0] on 1 max 1
  sdma.copy %send[0, 1] on 1 -> %recv[0, 1] on 0
}
