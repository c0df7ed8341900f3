// RUN: sdma-opt %s --sdma-verify=report=0 -split-input-file -verify-diagnostics

// Engine-level schedules (after sdma-insert-sync): queues run in order, a
// notify follows everything before it on its queue, and a poll follows the
// notifies its flag needs. sdma-verify proves what sdma-insert-sync and
// sdma-batch produce (translation validation).

// Rank 0 engine 0 copies into rank 1's out and notifies flag 2 of rank 1;
// rank 1 engine 0 polls it, then forwards the chunk. Flag 0 is the launch
// flag the host raises; flag 1 counts completions for the host.
sdma.schedule @forward ranks(%R = 2) buffers(%in : 1, %out : 1) {
  sdma.poll 0 : 0 until [0] at_least 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 1 : 0 until [2] at_least 1
  sdma.copy %out[0, 1] on 1 -> %in[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 1 : 0 -> 1 [1]
}

// -----

// Without the poll, rank 1's copy may read before rank 0's write lands.
sdma.schedule @no_poll ranks(%R = 2) buffers(%in : 1, %out : 1) {
  // expected-note @+1 {{the other op, issued by rank 0}}
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  // expected-error @+1 {{races with another op: it reads out[0, 1) on rank 1, which the other op writes}}
  sdma.copy %out[0, 1] on 1 -> %in[0, 1] on 1 {engine = 1 : i64}
}

// -----

// A poll for the second notify: only the second copy is ordered before it.
sdma.schedule @second_notify ranks(%R = 2) buffers(%a : 2, %b : 2) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  // expected-note @+1 {{the other op, issued by rank 0}}
  sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  sdma.poll 1 : 0 until [2] at_least 1
  sdma.copy %b[0, 1] on 1 -> %a[0, 1] on 1 {engine = 0 : i64}
  // expected-error @+1 {{races with another op: it reads b[1, 2) on rank 1}}
  sdma.copy %b[1, 1] on 1 -> %a[1, 1] on 1 {engine = 0 : i64}
}

// -----

// A polled flag has one writer queue: with two, which notify releases the
// poll (and whether one does) depends on timing. The runtime's executors
// refuse such plans too.
sdma.schedule @two_writers ranks(%R = 2) buffers(%a : 2, %b : 2) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 1 {engine = 1 : i64}
  sdma.notify 0 : 1 -> 1 [2]
  // expected-error @+1 {{polls flag 2 of rank 1, which engines 0 of rank 0 and 1 of rank 0 both notify: a polled flag needs one writer queue}}
  sdma.poll 1 : 0 until [2] at_least 2
  sdma.copy %b[0, 2] on 1 -> %a[0, 2] on 1 {engine = 0 : i64}
}

// -----

// Flag 1 counts completions for the host: many queues notify it, nothing
// polls it.
sdma.schedule @done_flag ranks(%R = 2) buffers(%a : 2, %b : 2) {
  sdma.poll 0 : 0 until [0] at_least 1
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 0 : 1 until [0] at_least 1
  sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 1 {engine = 1 : i64}
  sdma.notify 0 : 1 -> 0 [1]
}

// -----

sdma.schedule @never_released ranks(%R = 2) buffers(%a : 1) {
  sdma.notify 0 : 0 -> 1 [3]
  // expected-error @+1 {{can never complete: engine 0 of rank 1 waits for flag 3 to reach 2 but only 1 notifies reach it}}
  sdma.poll 1 : 0 until [3] at_least 2
}

// -----

sdma.schedule @poll_cycle ranks(%R = 2) buffers(%a : 1) {
  // expected-error @+1 {{can never complete: it is part of a cycle of waits (deadlock): engine 0 of rank 0 waits for flag 2 >= 1; engine 1 of rank 1 waits for flag 3 >= 1}}
  sdma.poll 0 : 0 until [2] at_least 1
  // expected-note @+1 {{a signal on the cycle}}
  sdma.notify 0 : 0 -> 1 [3]
  // expected-note @+1 {{a wait on the cycle}}
  sdma.poll 1 : 1 until [3] at_least 1
  // expected-note @+1 {{a signal on the cycle}}
  sdma.notify 1 : 1 -> 0 [2]
}
