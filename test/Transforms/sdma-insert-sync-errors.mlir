// RUN: sdma-opt %s --sdma-insert-sync -split-input-file -verify-diagnostics
// RUN: not sdma-opt %s -split-input-file --sdma-insert-sync=completion=sometimes 2>&1 | FileCheck %s
// CHECK: error: sdma-insert-sync: unknown completion 'sometimes' (expected per-op or per-queue)

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{has no engine: run sdma-assign-engines before sdma-insert-sync}}
  sdma.copy %b[0, 1] on 0 -> %b[1, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is already engine-level: sdma-insert-sync runs once}}
  sdma.notify 0 : 0 -> 0 [1]
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{can never complete: rank 1 waits 1 times for rank 0 but only 0 signals are sent}}
  sdma.wait 1 <- 0
  sdma.copy %b[0, 1] on 1 -> %b[1, 1] on 1 {engine = 0 : i64}
}
