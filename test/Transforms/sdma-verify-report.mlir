// RUN: sdma-opt %s --sdma-unroll --sdma-verify -split-input-file -verify-diagnostics

// What sdma-verify says on success: a remark with what it proved, and a
// warning where the outputs cannot be checked. Race reports on unrolled
// schedules name the loop iterations of both ops.

// expected-remark @+1 {{proved for 3 ranks: 9 data ops race-free, 0 waits always released (no deadlock), implements all_gather(in -> out)}}
sdma.schedule @ag ranks(%R = 3) buffers(%in : 1, %out : ranks)
    implements all_gather(%in -> %out) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %in[0, 1] on %r -> %out[%r, 1] on %p
    }
  }
}

// -----

// expected-remark @+1 {{proved for 2 ranks: 2 data ops race-free, 1 waits always released (no deadlock), implements broadcast(a -> b) root 1}}
sdma.schedule @bc ranks(%R = 2) buffers(%a : 1, %b : 1)
    implements broadcast(%a -> %b) root 1 {
  sdma.copy %a[0, 1] on 1 -> %b[0, 1] on 1
  sdma.copy %a[0, 1] on 1 -> %b[0, 1] on 0
  sdma.signal 1 -> 0
  sdma.wait 0 <- 1
}

// -----

// expected-warning @+2 {{declares no collective (`implements`): its outputs are not checked}}
// expected-remark @+1 {{proved for 2 ranks: 1 data ops race-free, 0 waits always released (no deadlock), outputs unchecked (no `implements`)}}
sdma.schedule @free ranks(%R = 2) buffers(%a : 1, %b : 1) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 1
}

// -----

// Unrolled ops name the loop iterations they came from.
sdma.schedule @loop_race ranks(%R = 2) buffers(%in : 1, %out : 1) {
  // expected-note @+2 {{the other op is from the iteration where this loop's index is 0}}
  // expected-note @+1 {{this op is from the iteration where this loop's index is 1}}
  affine.for %r = 0 to 2 {
    // expected-error @+2 {{races with another op: it writes out[0, 1) on rank 0, which the other op writes, and no fence, signal/wait or barrier orders the two (this op is issued by rank 1, the other by rank 0)}}
    // expected-note @+1 {{the other op, issued by rank 0}}
    sdma.copy %in[0, 1] on %r -> %out[0, 1] on 0
  }
}
