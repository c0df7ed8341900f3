// RUN: sdma-opt %s --sdma-batch -split-input-file -verify-diagnostics

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not engine-level: run sdma-insert-sync before sdma-batch}}
  sdma.fence
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not engine-level: run sdma-insert-sync before sdma-batch}}
  sdma.copy %b[0, 1] on 0 -> %b[1, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  sdma.notify 0 : 0 -> 1 [2]
  // expected-error @+1 {{waits for more notifies than its flag gets}}
  sdma.poll 1 : 0 until [2] at_least 2
}
