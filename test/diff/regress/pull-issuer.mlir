// Pulls (`sdma.copy pull`) are issued by their destination's rank, so the
// syncs that order them are that rank's: an all-gather of 3 ranks made of
// pulls ordered by the issuer's fence, engine queue and signal, a local
// pull, two pulls of adjacent chunks (sdma-merge-copies merges them, but not
// with the put next to them) and two opposite pulls (which sdma-fuse-swap
// leaves alone). Replayed on every backend here; exhaustive.test also
// mutates it (each sync dropped, each pull made a put, ...): the checker
// and sdma-verify must agree which mutants lose an order.
// RUN: python3 %sdma_src/test/diff/difftest.py --bin %sdma_bin --replay %s | FileCheck %s
// CHECK: ok   pull-issuer.mlir
sdma.schedule @pull_issuer ranks(%R = 3) buffers(%in : 1, %out : 3, %t : 1, %x : 5) implements all_gather(%in -> %out) {
  sdma.copy pull %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1
  sdma.copy %in[0, 1] on 2 -> %out[2, 1] on 2
  // rank 0's chunk: rank 1 pulls it, then forwards it to rank 2.
  sdma.copy pull %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.fence on 1
  sdma.copy %out[0, 1] on 1 -> %out[0, 1] on 2
  // rank 1's chunk: rank 0 pulls it through t on one engine, then rank 2
  // pulls it from rank 0 once rank 0 signals.
  sdma.copy pull %in[0, 1] on 1 -> %t[0, 1] on 0 {engine = 1 : i64}
  sdma.copy %t[0, 1] on 0 -> %out[1, 1] on 0 {engine = 1 : i64}
  sdma.signal 0 -> 2
  sdma.wait 2 <- 0
  sdma.copy pull %out[1, 1] on 0 -> %out[1, 1] on 2
  // rank 2's chunk: rank 0 pulls it, rank 1 pulls it from rank 0.
  sdma.copy pull %in[0, 1] on 2 -> %out[2, 1] on 0
  sdma.signal 0 -> 1 tag 1
  sdma.wait 1 <- 0 tag 1
  sdma.copy pull %out[2, 1] on 0 -> %out[2, 1] on 1
  // Scratch: adjacent pulls and a put, then opposite pulls.
  sdma.copy pull %x[0, 1] on 0 -> %x[2, 1] on 1
  sdma.copy pull %x[1, 1] on 0 -> %x[3, 1] on 1
  sdma.copy %x[2, 1] on 0 -> %x[4, 1] on 1
  sdma.barrier
  sdma.copy pull %x[0, 1] on 0 -> %x[1, 1] on 2
  sdma.copy pull %x[0, 1] on 2 -> %x[1, 1] on 0
}
