// RUN: sdma-opt %s --sdma-insert-sync -split-input-file | FileCheck %s
// RUN: sdma-opt %s --sdma-insert-sync="prelaunch=1 completion=per-queue" -split-input-file | FileCheck %s --check-prefix=PRE

// A signal/wait between ranks becomes a notify from the producer's queue
// and a poll on the consumer's; per-op completion notifies flag 1.
// CHECK-LABEL: sdma.schedule @handoff
// CHECK-NEXT:    sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 0 : 0 -> 1[2]
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[1]
// CHECK-NEXT:    sdma.poll 1 : 0 until[2] at_least 1
// CHECK-NEXT:    sdma.copy %b[0, 1] on 1 -> %b[0, 1] on 2 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 1 : 0 -> 1[1]
// CHECK-NEXT:  }
// PRE-LABEL: sdma.schedule @handoff
// PRE-NEXT:    sdma.poll 0 : 0 until[0] at_least 1
// PRE-NEXT:    sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 0 : 0 -> 1[2]
// PRE-NEXT:    sdma.poll 1 : 0 until[0] at_least 1
// PRE-NEXT:    sdma.poll 1 : 0 until[2] at_least 1
// PRE-NEXT:    sdma.copy %b[0, 1] on 1 -> %b[0, 1] on 2 {engine = 0 : i64}
// PRE-NEXT:    sdma.notify 0 : 0 -> 0[1]
// PRE-NEXT:    sdma.notify 1 : 0 -> 1[1]
// PRE-NEXT:  }
sdma.schedule @handoff ranks(%R = 3) buffers(%b : 1) {
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on 1 {engine = 0 : i64}
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.copy %b[0, 1] on 1 -> %b[0, 1] on 2 {engine = 0 : i64}
}

// -----

// A fence between engines of one rank: a later op polls an earlier queue
// once, for the latest op there that touches the same bytes (the queue is
// in order), and only for those: engine 2 reads b[0, 2], written by both of
// engine 0's copies, so it polls for the second; engine 1 reads b[0, 1]
// only, so it polls for engine 0's first copy and not engine 2, which the
// fence orders before it but which touches nothing it does.
// CHECK-LABEL: sdma.schedule @fence
// CHECK-NEXT:    sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 0 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[2]
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[1]
// CHECK-NEXT:    sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 0 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[2]
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[1]
// CHECK-NEXT:    sdma.poll 0 : 2 until[2] at_least 2
// CHECK-NEXT:    sdma.copy %b[0, 2] on 0 -> %a[0, 2] on 1 {engine = 2 : i64}
// CHECK-NEXT:    sdma.notify 0 : 2 -> 0[1]
// CHECK-NEXT:    sdma.poll 0 : 1 until[2] at_least 1
// CHECK-NEXT:    sdma.copy %b[0, 1] on 0 -> %c[0, 1] on 0 {engine = 1 : i64}
// CHECK-NEXT:    sdma.notify 0 : 1 -> 0[1]
// CHECK-NEXT:  }
sdma.schedule @fence ranks(%R = 2) buffers(%a : 2, %b : 2, %c : 1) {
  sdma.copy %a[0, 1] on 0 -> %b[0, 1] on 0 {engine = 0 : i64}
  sdma.copy %a[1, 1] on 0 -> %b[1, 1] on 0 {engine = 0 : i64}
  sdma.fence on 0
  sdma.copy %b[0, 2] on 0 -> %a[0, 2] on 1 {engine = 2 : i64}
  sdma.fence on 0
  sdma.copy %b[0, 1] on 0 -> %c[0, 1] on 0 {engine = 1 : i64}
}
