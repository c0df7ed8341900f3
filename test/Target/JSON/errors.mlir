// RUN: sdma-translate --sdma-to-json %s -split-input-file -verify-diagnostics

// expected-error @+1 {{has no fixed rank count: run sdma-unroll before --sdma-to-json}}
sdma.schedule @open ranks(%R) buffers(%b : ranks) {}

// -----

sdma.schedule @loops ranks(%R = 2) buffers(%b : ranks) {
  // expected-error @+1 {{is not part of a flat schedule: run sdma-unroll before --sdma-to-json}}
  affine.for %r = 0 to 2 {
  }
}

// -----

sdma.schedule @dynamic ranks(%R = 2) buffers(%b : ranks) {
  // expected-error @+1 {{is not part of a flat schedule: run sdma-unroll before --sdma-to-json}}
  %c1 = arith.constant 1 : index
  sdma.fence on %c1
}
