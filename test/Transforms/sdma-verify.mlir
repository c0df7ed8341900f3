// RUN: sdma-opt %s --sdma-verify=report=0 -split-input-file -verify-diagnostics
// RUN: sdma-opt %s --sdma-verify=report=0 -split-input-file -verify-diagnostics --mlir-print-op-generic
// (What a success reports: sdma-verify-report.mlir; engine-level schedules:
// sdma-verify-engine-level.mlir.)

// Correct schedules pass: ordered by a fence, by signal/wait, by a barrier,
// by one engine queue; reads may overlap.
sdma.schedule @ok ranks(%R = 2) buffers(%in : 1, %out : ranks) implements all_gather(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1
  sdma.fence on 0
  sdma.copy %out[0, 1] on 0 -> %out[0, 1] on 1
  sdma.signal 1 -> 0
  sdma.wait 0 <- 1
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
}
// A copy of a slice onto itself only rewrites what is there.
sdma.schedule @self_copy ranks(%R = 2) buffers(%a : 2) {
  sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 0
  sdma.copy %a[0, 1] on 0 -> %a[1, 1] on 1
}
sdma.schedule @engine_order ranks(%R = 2) buffers(%a : 2, %b : 2) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 0 {engine = 3 : i64}
  sdma.copy %b[0, 1] on 0 -> %a[1, 1] on 1 {engine = 3 : i64}
  sdma.barrier
  sdma.copy %a[1, 1] on 1 -> %b[1, 1] on 0
  sdma.copy %a[1, 1] on 1 -> %b[0, 1] on 1
}

// -----

sdma.schedule @write_write ranks(%R = 2) buffers(%in : 2, %out : 2) {
  // expected-note @+1 {{the other op, issued by rank}}
  sdma.copy %in[0, 2] on 0 -> %out[0, 2] on 1
  // expected-error @+1 {{races with another op: it writes out[1, 2) on rank 1, which the other op writes, and no fence, signal/wait or barrier orders the two (this op is issued by rank 1, the other by rank 0)}}
  sdma.copy %in[1, 1] on 1 -> %out[1, 1] on 1
}

// -----

// Program order alone does not order ops: rank 0 may forward the chunk
// before it arrives.
sdma.schedule @read_before_arrival ranks(%R = 3) buffers(%b : 1) {
  // expected-note @+1 {{the other op}}
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
  // expected-error @+1 {{races with another op: it reads b[0, 1) on rank 1, which the other op writes}}
  sdma.copy %b[0, 1] on 1 -> %b[0, 1] on 2
}

// -----

// A fence on the wrong rank does not help; a signal orders only the
// signaller's earlier ops.
sdma.schedule @wrong_fence ranks(%R = 3) buffers(%b : 1) {
  // expected-note @+1 {{the other op}}
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1
  sdma.fence on 1
  sdma.signal 2 -> 1
  sdma.wait 1 <- 2
  // expected-error @+1 {{races with another op}}
  sdma.copy %b[0, 1] on 1 -> %b[0, 1] on 2
}

// -----

// A pull is ordered by its issuer, the destination's rank: @wrong_fence's
// fence on 1 orders rank 1's pull of the chunk before rank 1 forwards it.
sdma.schedule @pull_fence ranks(%R = 3) buffers(%b : 1) {
  sdma.copy pull %b[0, 1] on 0 -> %b[0, 1] on 1
  sdma.fence on 1
  sdma.copy %b[0, 1] on 1 -> %b[0, 1] on 2
}

// -----

// ... and a fence on its source's rank does not order it: rank 0's later
// write of what rank 1 pulls races with the pull.
sdma.schedule @pull_source_fence ranks(%R = 2) buffers(%a : 1, %b : 1) {
  // expected-note @+1 {{the other op, issued by rank 1}}
  sdma.copy pull %a[0, 1] on 0 -> %b[0, 1] on 1
  sdma.fence on 0
  // expected-error @+1 {{races with another op: it writes a[0, 1) on rank 0, which the other op reads, and no fence, signal/wait or barrier orders the two (this op is issued by rank 0, the other by rank 1)}}
  sdma.copy %b[0, 1] on 0 -> %a[0, 1] on 0
}

// -----

// A pulled copyv reads its count where it lies: rank 1 pulls the rows
// rank 0 counts; rank 0 rewriting that count afterwards, ordered only on
// rank 0, races with the pull's read of it.
sdma.schedule @pull_copyv_count ranks(%R = 2) buffers(%in : ranks, %out : ranks, %send : counts[ranks], %other : counts[ranks]) {
  // expected-note @+1 {{the other op, issued by rank 1}}
  sdma.copyv pull %in[1] on 0 -> %out[0] on 1, count %send[1] on 0 max 1
  sdma.fence on 0
  // expected-error @+1 {{races with another op: it writes send[1, 2) on rank 0, which the other op reads}}
  sdma.copy %other[1, 1] on 0 -> %send[1, 1] on 0
}

// -----

// Different engines of one rank run concurrently.
sdma.schedule @two_engines ranks(%R = 2) buffers(%a : 1, %b : 1) {
  // expected-note @+1 {{the other op}}
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 0 {engine = 0 : i64}
  // expected-error @+1 {{races with another op: it reads b[0, 1) on rank 0}}
  sdma.copy %b[0, 1] on 0 -> %a[0, 1] on 1 {engine = 1 : i64}
}

// -----

// A swap reads and writes both slices.
sdma.schedule @swap_race ranks(%R = 2) buffers(%a : 2) {
  // expected-note @+1 {{the other op}}
  sdma.swap %a[0, 1] on 0 <-> %a[0, 1] on 1
  // expected-error @+1 {{races with another op: it reads a[0, 1) on rank 1, which the other op writes}}
  sdma.copy %a[0, 1] on 1 -> %a[1, 1] on 1
}

// -----

sdma.schedule @unmatched ranks(%R = 2) buffers(%b : 1) {
  sdma.signal 0 -> 1 tag 3
  sdma.wait 1 <- 0 tag 3
  // expected-error @+1 {{can never complete: rank 1 waits 2 times for rank 0 with tag 3 but only 1 signals are sent}}
  sdma.wait 1 <- 0 tag 3
}

// -----

sdma.schedule @cycle ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{can never complete: it is part of a cycle of waits (deadlock): rank 0 waits for rank 1; rank 1 waits for rank 0 (tag 2); each is released only by a signal sent after the one before it (the first after the last) returns}}
  sdma.wait 0 <- 1
  // expected-note @+1 {{a signal on the cycle, which is only sent after a wait on it}}
  sdma.signal 0 -> 1 tag 2
  // expected-note @+1 {{a wait on the cycle}}
  sdma.wait 1 <- 0 tag 2
  // expected-note @+1 {{a signal on the cycle, which is only sent after a wait on it}}
  sdma.signal 1 -> 0
}

// -----

// A wait behind a cycle is not on it: the report names the cycle's waits.
sdma.schedule @behind_cycle ranks(%R = 3) buffers(%b : 1) {
  sdma.wait 2 <- 1
  // expected-error @+1 {{cycle of waits (deadlock): rank 0 waits for rank 1; rank 1 waits for rank 0; each}}
  sdma.wait 0 <- 1
  // expected-note @+1 {{a signal on the cycle}}
  sdma.signal 0 -> 1
  // expected-note @+1 {{a wait on the cycle}}
  sdma.wait 1 <- 0
  // expected-note @+1 {{a signal on the cycle}}
  sdma.signal 1 -> 0
  sdma.signal 1 -> 2
}

// -----

// expected-error @+1 {{does not implement all_gather: afterwards chunk 1 of out on rank 0 holds nothing (never written), but should hold in[0] of rank 1}}
sdma.schedule @missing_chunk ranks(%R = 2) buffers(%in : 1, %out : ranks) implements all_gather(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1
}

// -----

// expected-error @+1 {{does not implement all_to_all: afterwards chunk 0 of out on rank 1 holds in[0] of rank 0, but should hold in[1] of rank 0}}
sdma.schedule @wrong_chunk ranks(%R = 2) buffers(%in : ranks, %out : ranks) implements all_to_all(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
  sdma.copy %in[1, 1] on 1 -> %out[1, 1] on 1
}

// -----

// expected-error @+1 {{implements scatter but its buffers have 2 and 2 chunks; with 2 ranks it needs an input of 4 and an output of 2 chunks}}
sdma.schedule @sizes ranks(%R = 2) buffers(%in : 2, %out : 2) implements scatter(%in -> %out) root 0 {
}

// -----

sdma.schedule @not_flat ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{is not part of a flat schedule: run sdma-unroll before sdma-verify}}
  affine.for %i = 0 to 2 {
  }
}

// -----

// expected-error @+1 {{has no fixed rank count: run sdma-unroll before sdma-verify}}
sdma.schedule @open ranks(%R) buffers(%b : 1) {
}


// -----

// Beyond the memory budget the verifier refuses before allocating: the
// symbolic contents of a 2^38-chunk buffer on two ranks...
// expected-error @+1 {{is too large to verify: executing it symbolically needs 12.0 TiB (274877906945 chunks x 2 ranks), over the verifier's memory budget of}}
sdma.schedule @huge_buffer ranks(%R = 2) buffers(%in : 1, %out : 274877906944) implements broadcast(%in -> %in) root 0 {
  sdma.copy %in[0, 1] on 0 -> %in[0, 1] on 1
}
