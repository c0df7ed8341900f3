// The translator's own errors, on inputs the verifier would refuse first.
// RUN: sdma-translate --sdma-to-plan --sdma-translate-unverified %s -split-input-file -verify-diagnostics

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not engine-level: run sdma-assign-engines and sdma-insert-sync before --sdma-to-plan}}
  sdma.copy %b[0, 1] on 0 -> %b[1, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not engine-level: run sdma-assign-engines and sdma-insert-sync before --sdma-to-plan}}
  sdma.fence
}

// -----

// expected-error @+1 {{has no fixed rank count}}
sdma.schedule @s ranks(%R) buffers(%b : 2) {
}

// -----

// expected-error @+1 {{expected exactly one sdma.schedule, found 2}}
module {
  sdma.schedule @a ranks(%R = 1) buffers(%b : 2) {}
  sdma.schedule @b ranks(%R = 1) buffers(%b : 2) {}
}
