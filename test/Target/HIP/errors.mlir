// The translator's own errors, on inputs the verifier would refuse first.
// RUN: sdma-translate --sdma-to-hip --sdma-translate-unverified %s -split-input-file -verify-diagnostics

// expected-error @+1 {{has no fixed rank count: run sdma-unroll before --sdma-to-hip}}
sdma.schedule @s ranks(%R) buffers(%b : 2) {}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not part of a flat schedule: run sdma-unroll (and sdma-verify) before --sdma-to-hip}}
  affine.for %i = 0 to 2 {
  }
}

// -----

// expected-error @+1 {{has a wait that no signal satisfies: run sdma-verify before --sdma-to-hip}}
sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  sdma.wait 1 <- 0
}

// -----

// expected-error @+1 {{expected exactly one sdma.schedule, found 0}}
module {}

// -----

// The kernel computes in one element type with one operator.
sdma.schedule @s ranks(%R = 2) buffers(%a : f32[4], %b : i32[2]) {
  sdma.reduce sum %a[0, 1] on 0 <- %a[1, 1] on 1
  // expected-error @+1 {{uses a different element type or operator than the schedule's other reduces; the load/store kernel computes in one type with one operator}}
  sdma.reduce max %a[2, 1] on 0 <- %a[3, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[4], %b : i32[2]) {
  sdma.reduce sum %a[0, 1] on 0 <- %a[1, 1] on 1
  // expected-error @+1 {{uses a different element type or operator}}
  sdma.reduce sum %b[0, 1] on 0 <- %b[1, 1] on 1
}
