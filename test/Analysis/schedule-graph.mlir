// RUN: sdma-opt %s -split-input-file -verify-diagnostics --test-sdma-schedule-graph -o /dev/null | FileCheck %s
// RUN: not sdma-opt %s -split-input-file --test-sdma-schedule-graph=memory-budget=600 -o /dev/null 2>&1 >/dev/null | FileCheck %s --check-prefix=BUDGET

// ScheduleGraph directly: for each node its op, rank (and engine), its
// direct predecessors and every node that happens before it; the order it
// found; and for every two data ops where one writes what the other
// touches, whether they are ordered or race.
//
// The memory budget counts nodes before building any (about 128 bytes a
// node, its edges and bookkeeping; no happens-before sets are stored): 600
// bytes admit four nodes (512) but not five (640).
// An unranked fence is one node per rank: @fence_all has four ops and five
// nodes. Schedules with four nodes get as far as their own errors.
// BUDGET: error: 'sdma.schedule' op is too large to verify: its 7 ordering nodes need 896 bytes for its graph, over the verifier's memory budget of 600 bytes
// BUDGET: error: 'sdma.schedule' op is too large to verify: its 5 ordering nodes need 640 bytes
// BUDGET: error: 'sdma.schedule' op is too large to verify: its 7 ordering nodes need 896 bytes
// BUDGET: error: 'sdma.schedule' op is too large to verify: its 6 ordering nodes need 768 bytes
// BUDGET: error: 'sdma.schedule' op is too large to verify: its 5 ordering nodes need 640 bytes
// BUDGET: error: 'sdma.wait' op can never complete: it is part of a cycle of waits
// BUDGET: error: 'sdma.wait' op can never complete: rank 1 waits 2 times for rank 0

// Ops of one rank on one engine run in program order (0 -> 1 -> 3), on
// different engines they do not: node 3 reads what node 2 writes on engine
// 1, a race. A fence on rank 0 follows everything rank 0 issued before it
// and precedes what it issues after (5); it does not order rank 1 (6).
// CHECK-LABEL: schedule @engine_order: 7 nodes
// CHECK-NEXT:  node 0: sdma.copy rank 0, engine 0; preds: -; after: -
// CHECK-NEXT:  node 1: sdma.copy rank 0, engine 0; preds: 0; after: 0
// CHECK-NEXT:  node 2: sdma.copy rank 0, engine 1; preds: -; after: -
// CHECK-NEXT:  node 3: sdma.copy rank 0, engine 0; preds: 1; after: 0, 1
// CHECK-NEXT:  node 4: sdma.fence rank 0; preds: 0, 1, 2, 3; after: 0, 1, 2, 3
// CHECK-NEXT:  node 5: sdma.copy rank 0, engine 1; preds: 4; after: 0, 1, 2, 3, 4
// CHECK-NEXT:  node 6: sdma.copy rank 1, engine 0; preds: -; after: -
// CHECK-NEXT:  order: 0 1 3 2 4 5 6
// CHECK-NEXT:  conflict 0 1: 0 before 1
// CHECK-NEXT:  conflict 2 3: race
// CHECK-NEXT:  conflict 3 5: 3 before 5
// CHECK-NOT:   conflict
sdma.schedule @engine_order ranks(%R = 2) buffers(%a : 4, %b : 4, %c : 4) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 0 {engine = 0 : i64}
  sdma.copy %b[0, 1] on 0 -> %a[1, 1] on 0 {engine = 0 : i64}
  sdma.copy %a[0, 1] on 0 -> %b[1, 1] on 0 {engine = 1 : i64}
  sdma.copy %b[1, 1] on 0 -> %c[0, 1] on 0 {engine = 0 : i64}
  sdma.fence on 0
  sdma.copy %c[0, 1] on 0 -> %a[2, 1] on 0 {engine = 1 : i64}
  sdma.copy %a[0, 1] on 1 -> %a[1, 1] on 1 {engine = 0 : i64}
}

// -----

// A fence without a rank is a fence on each rank, one node per rank: the
// ranks do not wait for each other, so rank 0's copy after it still races
// with rank 1's read before it.
// CHECK-LABEL: schedule @fence_all: 5 nodes
// CHECK-NEXT:  node 0: sdma.copy rank 0; preds: -; after: -
// CHECK-NEXT:  node 1: sdma.copy rank 1; preds: -; after: -
// CHECK-NEXT:  node 2: sdma.fence rank 0; preds: 0; after: 0
// CHECK-NEXT:  node 3: sdma.fence rank 1; preds: 1; after: 1
// CHECK-NEXT:  node 4: sdma.copy rank 0; preds: 2; after: 0, 2
// CHECK-NEXT:  order: 0 2 4 1 3
// CHECK-NEXT:  conflict 0 4: 0 before 4
// CHECK-NEXT:  conflict 1 4: race
// CHECK-NOT:   conflict
sdma.schedule @fence_all ranks(%R = 2) buffers(%a : 2) {
  sdma.copy %a[0, 1] on 0 -> %a[1, 1] on 0
  sdma.copy %a[0, 1] on 1 -> %a[1, 1] on 1
  sdma.fence
  sdma.copy %a[1, 1] on 0 -> %a[0, 1] on 1
}

// -----

// A signal follows what its rank issued before it; the matching wait
// follows the signal, and the waiting rank's later ops follow the wait
// (0 -> 1 -> 2 -> 3). A signal orders nothing its rank issues after it:
// node 4 races with node 3. A barrier follows everything and precedes
// everything after it.
// CHECK-LABEL: schedule @handoff: 7 nodes
// CHECK-NEXT:  node 0: sdma.copy rank 0; preds: -; after: -
// CHECK-NEXT:  node 1: sdma.signal rank 0; preds: 0; after: 0
// CHECK-NEXT:  node 2: sdma.wait rank 1; preds: 1; after: 0, 1
// CHECK-NEXT:  node 3: sdma.copy rank 1; preds: 2; after: 0, 1, 2
// CHECK-NEXT:  node 4: sdma.copy rank 0; preds: -; after: -
// CHECK-NEXT:  node 5: sdma.barrier all ranks; preds: 1, 2, 3, 4; after: 0, 1, 2, 3, 4
// CHECK-NEXT:  node 6: sdma.copy rank 1; preds: 5; after: 0, 1, 2, 3, 4, 5
// CHECK-NEXT:  order: 0 1 2 3 4 5 6
// CHECK-NEXT:  conflict 0 3: 0 before 3
// CHECK-NEXT:  conflict 0 6: 0 before 6
// CHECK-NEXT:  conflict 3 4: race
// CHECK-NEXT:  conflict 3 6: 3 before 6
// CHECK-NEXT:  conflict 4 6: 4 before 6
// CHECK-NOT:   conflict
sdma.schedule @handoff ranks(%R = 2) buffers(%a : 2) {
  sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 1
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.copy %a[0, 1] on 1 -> %a[1, 1] on 1
  sdma.copy %a[1, 1] on 0 -> %a[1, 1] on 1
  sdma.barrier
  sdma.copy %a[1, 1] on 1 -> %a[0, 1] on 0
}

// -----

// A pull is issued by its destination's rank (1): rank 1's fence orders
// it (0) before rank 1's later copy of the chunk it pulled (2); rank 0's
// fence (3) orders nothing of it, so rank 0's write of the chunk it reads
// (4) races with it (a put, issued by rank 0, would be ordered).
// CHECK-LABEL: schedule @pull: 5 nodes
// CHECK-NEXT:  node 0: sdma.copy rank 1; preds: -; after: -
// CHECK-NEXT:  node 1: sdma.fence rank 1; preds: 0; after: 0
// CHECK-NEXT:  node 2: sdma.copy rank 1; preds: 1; after: 0, 1
// CHECK-NEXT:  node 3: sdma.fence rank 0; preds: -; after: -
// CHECK-NEXT:  node 4: sdma.copy rank 0; preds: 3; after: 3
// CHECK-NEXT:  order:
// CHECK-NEXT:  conflict 0 2: 0 before 2
// CHECK-NEXT:  conflict 0 4: race
// CHECK-NEXT:  conflict 2 4: race
// CHECK-NOT:   conflict
sdma.schedule @pull ranks(%R = 2) buffers(%a : 2) {
  sdma.copy pull %a[0, 1] on 0 -> %a[0, 1] on 1
  sdma.fence on 1
  sdma.copy %a[0, 1] on 1 -> %a[1, 1] on 0
  sdma.fence on 0
  sdma.copy %a[1, 1] on 0 -> %a[0, 1] on 0
}

// -----

// The k-th wait matches the k-th signal with the same tag: the tag-0 wait
// (3) the tag-0 signal (1), the two tag-1 waits the tag-1 signals (0, 2),
// each wait also after the rank's wait before it. Signal 2 comes after
// wait 4 in the order found: nothing orders them.
// CHECK-LABEL: schedule @tags: 6 nodes
// CHECK-NEXT:  node 0: sdma.signal rank 0; preds: -; after: -
// CHECK-NEXT:  node 1: sdma.signal rank 0; preds: 0; after: 0
// CHECK-NEXT:  node 2: sdma.signal rank 0; preds: 1; after: 0, 1
// CHECK-NEXT:  node 3: sdma.wait rank 1; preds: 1; after: 0, 1
// CHECK-NEXT:  node 4: sdma.wait rank 1; preds: 0, 3; after: 0, 1, 3
// CHECK-NEXT:  node 5: sdma.wait rank 1; preds: 2, 4; after: 0, 1, 2, 3, 4
// CHECK-NEXT:  order: 0 1 3 4 2 5
// CHECK-NOT:   conflict
sdma.schedule @tags ranks(%R = 2) buffers(%a : 1) {
  sdma.signal 0 -> 1 tag 1
  sdma.signal 0 -> 1
  sdma.signal 0 -> 1 tag 1
  sdma.wait 1 <- 0
  sdma.wait 1 <- 0 tag 1
  sdma.wait 1 <- 0 tag 1
}

// -----

// Engine level: a notify follows the ops before it on its queue, a poll
// for value 1 follows the first notify of its flag, and the poll's queue
// runs in order after it (0 -> 1 -> 2 -> 3). Engine 1 of rank 1 polls
// nothing: its copy races with both.
// CHECK-LABEL: schedule @queues: 5 nodes
// CHECK-NEXT:  node 0: sdma.copy rank 0, engine 0; preds: -; after: -
// CHECK-NEXT:  node 1: sdma.notify rank 0, engine 0; preds: 0; after: 0
// CHECK-NEXT:  node 2: sdma.poll rank 1, engine 0; preds: 1; after: 0, 1
// CHECK-NEXT:  node 3: sdma.copy rank 1, engine 0; preds: 2; after: 0, 1, 2
// CHECK-NEXT:  node 4: sdma.copy rank 1, engine 1; preds: -; after: -
// CHECK-NEXT:  order: 0 1 2 3 4
// CHECK-NEXT:  conflict 0 3: 0 before 3
// CHECK-NEXT:  conflict 0 4: race
// CHECK-NEXT:  conflict 3 4: race
// CHECK-NOT:   conflict
sdma.schedule @queues ranks(%R = 2) buffers(%a : 2) {
  sdma.copy %a[0, 1] on 0 -> %a[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1[1]
  sdma.poll 1 : 0 until[1] at_least 1
  sdma.copy %a[0, 1] on 1 -> %a[1, 1] on 1 {engine = 0 : i64}
  sdma.copy %a[1, 1] on 1 -> %a[0, 1] on 0 {engine = 1 : i64}
}

// -----

// Each rank waits before it signals the other: a cycle, and no graph.
// CHECK-NOT: schedule @cycle
sdma.schedule @cycle ranks(%R = 2) buffers(%a : 1) {
  // expected-error @below {{'sdma.wait' op can never complete: it is part of a cycle of waits (deadlock): rank 0 waits for rank 1; rank 1 waits for rank 0}}
  sdma.wait 0 <- 1
  // expected-note @below {{a signal on the cycle, which is only sent after a wait on it}}
  sdma.signal 0 -> 1
  // expected-note @below {{a wait on the cycle}}
  sdma.wait 1 <- 0
  // expected-note @below {{a signal on the cycle, which is only sent after a wait on it}}
  sdma.signal 1 -> 0
}

// -----

// A second wait with one signal sent never completes.
// CHECK-NOT: schedule @unmatched
sdma.schedule @unmatched ranks(%R = 2) buffers(%a : 1) {
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  // expected-error @below {{'sdma.wait' op can never complete: rank 1 waits 2 times for rank 0 but only 1 signals are sent}}
  sdma.wait 1 <- 0
}
