// RUN: sdma-opt %s --sdma-verify=report=0 -split-input-file -verify-diagnostics
// The proofs of sdma.copyv schedules: run-time counts are symbols, so one
// proof covers every count up to the capacity. (The repository's schedules
// are proved at 2-9 ranks in test/schedules/all_to_allv.mlir.)

// Capacity slots and packed segments, proved.
sdma.schedule @slots ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
  sdma.copyv %in[1] on 0 -> %out[0] on 1, count %n[1] on 0 max 1
  sdma.copyv %in[0] on 1 -> %out[1] on 0, count %n[0] on 1 max 1
  sdma.copyv %in[1] on 1 -> %out[1] on 1, count %n[1] on 1 max 1
}
sdma.schedule @packed ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) implements all_to_allv_packed(%in -> %out) counts(%s -> %c) {
  sdma.copy %s[0, 1] on 0 -> %c[0, 1] on 0
  sdma.copy %s[1, 1] on 0 -> %c[0, 1] on 1
  sdma.copy %s[0, 1] on 1 -> %c[1, 1] on 0
  sdma.copy %s[1, 1] on 1 -> %c[1, 1] on 1
  // Each rank waits only for the counts it reads: rank 0 reads c[0] on 1.
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.signal 1 -> 0
  sdma.wait 0 <- 1
  sdma.copyv %in[packed %s[0] on 0] on 0 -> %out[packed %c[0] on 0] on 0, count %s[0] on 0 max 1
  sdma.copyv %in[packed %s[1] on 0] on 0 -> %out[packed %c[0] on 1] on 1, count %s[1] on 0 max 1
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed %c[1] on 0] on 0, count %s[0] on 1 max 1
  sdma.copyv %in[packed %s[1] on 1] on 1 -> %out[packed %c[1] on 1] on 1, count %s[1] on 1 max 1
}

// -----

// Without the exchange's ordering, the data phase reads counts in flight.
sdma.schedule @no_barrier ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) implements all_to_allv_packed(%in -> %out) counts(%s -> %c) {
  // expected-note @+1 {{the other op, issued by rank 0}}
  sdma.copy %s[0, 1] on 0 -> %c[0, 1] on 0
  sdma.copy %s[1, 1] on 0 -> %c[0, 1] on 1
  sdma.copy %s[0, 1] on 1 -> %c[1, 1] on 0
  sdma.copy %s[1, 1] on 1 -> %c[1, 1] on 1
  sdma.copyv %in[packed %s[0] on 0] on 0 -> %out[packed %c[0] on 0] on 0, count %s[0] on 0 max 1
  sdma.copyv %in[packed %s[1] on 0] on 0 -> %out[packed %c[0] on 1] on 1, count %s[1] on 0 max 1
  // expected-error @+1 {{races with another op: it reads c[0, 1) on rank 0, which the other op writes}}
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed %c[1] on 0] on 0, count %s[0] on 1 max 1
  sdma.copyv %in[packed %s[1] on 1] on 1 -> %out[packed %c[1] on 1] on 1, count %s[1] on 1 max 1
}

// -----

// Two packed segments with the same index of one table row overlap.
sdma.schedule @same_segment ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2]) {
  // expected-note @+1 {{the other op, issued by rank 0}}
  sdma.copyv %in[0] on 0 -> %out[packed %s[1] on 1] on 1, count %s[0] on 0 max 1
  // expected-error @+1 {{races with another op: it writes out[0, 2) (where a packed segment of run-time offset may lie) on rank 1}}
  sdma.copyv %in[1] on 0 -> %out[packed %s[1] on 1] on 1, count %s[1] on 0 max 1
}

// -----

// expected-error @+1 {{does not implement all_to_allv: the rows rank 1 sends to rank 0 should come from in[0] of rank 1, but in[1] of rank 1 is copied there}}
sdma.schedule @wrong_slot ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
  sdma.copyv %in[1] on 0 -> %out[0] on 1, count %n[1] on 0 max 1
  // expected-note @+1 {{the sdma.copyv}}
  sdma.copyv %in[1] on 1 -> %out[1] on 0, count %n[0] on 1 max 1
  sdma.copyv %in[0] on 1 -> %out[1] on 1, count %n[1] on 1 max 1
}

// -----

// expected-error @+1 {{the rows rank 0 sends to rank 1 number n[1] of rank 0, but n[0] of rank 0 are copied}}
sdma.schedule @wrong_count ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
  // expected-note @+1 {{the sdma.copyv}}
  sdma.copyv %in[1] on 0 -> %out[0] on 1, count %n[0] on 0 max 1
  sdma.copyv %in[0] on 1 -> %out[1] on 0, count %n[0] on 1 max 1
  sdma.copyv %in[1] on 1 -> %out[1] on 1, count %n[1] on 1 max 1
}

// -----

// expected-error @+1 {{the rows rank 0 sends to rank 0 may number up to the capacity 2, but the sdma.copyv that moves them has max 1}}
sdma.schedule @small_max ranks(%R = 2) buffers(%in : 4, %out : 4, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  // expected-note @+1 {{the sdma.copyv}}
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
}

// -----

// expected-error @+1 {{the rows rank 1 sends to rank 1 are never written to out[1] on rank 1}}
sdma.schedule @missing ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
  sdma.copyv %in[1] on 0 -> %out[0] on 1, count %n[1] on 0 max 1
  sdma.copyv %in[0] on 1 -> %out[1] on 0, count %n[0] on 1 max 1
}

// -----

sdma.schedule @static_write ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  // expected-error @+1 {{writes 'out', which this all_to_allv fills with sdma.copyv}}
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
}

// -----

sdma.schedule @mixed ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n) {
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
  sdma.barrier
  // expected-error @+1 {{lays out 'out' on rank 0 differently from an earlier sdma.copyv}}
  sdma.copyv %in[0] on 1 -> %out[packed %n[1] on 0] on 0, count %n[0] on 1 max 1
}

// -----

// The exchange puts rank 1's count into the wrong entry.
// expected-error @+1 {{the rows rank 0 sends to rank 1 are counted in c[0] of rank 1, which holds nothing (never written) at the end, not s[1] of rank 0}}
sdma.schedule @wrong_exchange ranks(%R = 2) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) implements all_to_allv_packed(%in -> %out) counts(%s -> %c) {
  sdma.copy %s[0, 1] on 0 -> %c[0, 1] on 0
  sdma.copy %s[1, 1] on 0 -> %c[1, 1] on 1
  sdma.copy %s[0, 1] on 1 -> %c[1, 1] on 0
  sdma.barrier
  sdma.copyv %in[packed %s[0] on 0] on 0 -> %out[packed %c[0] on 0] on 0, count %s[0] on 0 max 1
  sdma.copyv %in[packed %s[1] on 0] on 0 -> %out[packed %c[0] on 1] on 1, count %s[1] on 0 max 1
  sdma.copyv %in[packed %s[0] on 1] on 1 -> %out[packed %c[1] on 0] on 0, count %s[0] on 1 max 1
  sdma.copyv %in[packed %s[1] on 1] on 1 -> %out[packed %c[1] on 1] on 1, count %s[1] on 1 max 1
}

// -----

sdma.schedule @extra ranks(%R = 1) buffers(%in : 2, %out : 2, %s : counts[2], %c : counts[2]) implements all_to_allv_packed(%in -> %out) counts(%s -> %c) {
  sdma.copy %s[0, 1] on 0 -> %c[0, 1] on 0
  sdma.fence on 0
  sdma.copyv %in[packed %s[0] on 0] on 0 -> %out[packed %c[0] on 0] on 0, count %s[0] on 0 max 1
  // expected-error @+1 {{writes out[0 + s[0] of rank 0] on rank 0, which is no sender's segment of all_to_allv}}
  sdma.copyv %in[packed %s[0] on 0] on 0 -> %out[packed %c[1] on 0] on 0, count %s[0] on 0 max 1
}

// -----

// A fixed-size collective whose output a copyv may overwrite is not proved.
// expected-error @+1 {{does not implement all_to_all: afterwards chunk 0 of out on rank 0 holds nothing (never written), but should hold in[0] of rank 0}}
sdma.schedule @overwritten ranks(%R = 1) buffers(%in : 1, %out : 1, %n : counts[1]) implements all_to_all(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.fence
  sdma.copyv %in[0] on 0 -> %out[0] on 0, count %n[0] on 0 max 1
}
