// RUN: sdma-translate --sdma-to-hip %s -split-input-file -verify-diagnostics

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
