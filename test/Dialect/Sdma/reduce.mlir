// RUN: sdma-opt %s | FileCheck %s
// RUN: sdma-opt %s | sdma-opt | FileCheck %s
// RUN: sdma-opt %s --mlir-print-op-generic | sdma-opt | FileCheck %s

// Typed buffers and sdma.reduce round-trip; untyped buffers and count tables
// keep their spelling next to typed ones.

// CHECK-LABEL: sdma.schedule @typed ranks(%R = 4)
// CHECK-SAME:    buffers(%a : f32[1], %b : f16[ranks], %c : bf16[2 x ranks + 1], %d : i32[3], %e : i64[ranks], %raw : 2, %n : counts[ranks])
sdma.schedule @typed ranks(%R = 4)
    buffers(%a : f32[1], %b : f16[ranks], %c : bf16[2 x ranks + 1], %d : i32[3],
            %e : i64[ranks], %raw : 2, %n : counts[ranks]) {
  // CHECK: sdma.reduce sum %b[0, 1] on 0 <- %b[1, 1] on 2
  sdma.reduce sum %b[0, 1] on 0 <- %b[1, 1] on 2
  // CHECK: sdma.reduce max %c[1, 2] on 3 <- %c[5, 2] on 3
  sdma.reduce max %c[1, 2] on 3 <- %c[5, 2] on 3
  // CHECK: sdma.reduce min %d[0, 1] on 1 <- %d[2, 1] on 0 {engine = 2 : i64}
  sdma.reduce min %d[0, 1] on 1 <- %d[2, 1] on 0 {engine = 2 : i64}
  // CHECK: sdma.reduce prod %e[0, 2] on 1 <- %e[2, 2] on 1
  sdma.reduce prod %e[0, 2] on 1 <- %e[2, 2] on 1
  // Copies move bytes between buffers of any types.
  // CHECK: sdma.copy %a[0, 1] on 0 -> %raw[1, 1] on 1
  sdma.copy %a[0, 1] on 0 -> %raw[1, 1] on 1
}

// CHECK-LABEL: sdma.schedule @open ranks(%R)
// CHECK-SAME:    implements all_reduce(%in -> %out)
// CHECK: sdma.reduce sum %out[0, 1] on %{{.*}} <- %in[0, 1] on %{{.*}}
sdma.schedule @open ranks(%R) buffers(%in : f32[1], %out : f32[1])
    implements all_reduce(%in -> %out) {
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.reduce sum %out[0, 1] on %r <- %in[0, 1] on %p
    }
  }
}

// CHECK-LABEL: sdma.schedule @kinds
// CHECK-SAME: implements reduce_scatter(%in -> %out)
sdma.schedule @kinds ranks(%R = 2) buffers(%in : bf16[ranks], %out : bf16[1])
    implements reduce_scatter(%in -> %out) {}
// CHECK-LABEL: sdma.schedule @rooted
// CHECK-SAME: implements reduce(%in -> %in) root 1
sdma.schedule @rooted ranks(%R = 2) buffers(%in : i32[1])
    implements reduce(%in -> %in) root 1 {}
