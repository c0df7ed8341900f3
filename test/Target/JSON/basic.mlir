// RUN: sdma-translate --sdma-to-json %s | FileCheck %s

// Every op kind, in program order, with slices by buffer name.
// CHECK:      "format": "sdma.schedule",
// CHECK-NEXT: "version": 1,
// CHECK-NEXT: "schedules": [
// CHECK-NEXT:   {
// CHECK-NEXT:     "name": "every_op",
// CHECK-NEXT:     "ranks": 4,
// CHECK-NEXT:     "buffers": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "name": "input",
// CHECK-NEXT:         "chunks": 1
// CHECK-NEXT:       },
// CHECK-NEXT:       {
// CHECK-NEXT:         "name": "output",
// CHECK-NEXT:         "chunks": 4
// CHECK-NEXT:       }
// CHECK-NEXT:     ],
// CHECK-NEXT:     "ops": [
sdma.schedule @every_op ranks(%R = 4) buffers(%input : 1, %output : ranks) {
  // CHECK:      "op": "copy",
  // CHECK-NEXT: "rank": 0,
  // CHECK-NEXT: "src": {
  // CHECK-NEXT:   "rank": 0,
  // CHECK-NEXT:   "buffer": "input",
  // CHECK-NEXT:   "offset": 0,
  // CHECK-NEXT:   "count": 1
  // CHECK-NEXT: },
  // CHECK-NEXT: "dst": {
  // CHECK-NEXT:   "rank": 2,
  // CHECK-NEXT:   "buffer": "output",
  // CHECK-NEXT:   "offset": 3,
  // CHECK-NEXT:   "count": 1
  sdma.copy %input[0, 1] on 0 -> %output[3, 1] on 2
  // CHECK:      "op": "bcast",
  // CHECK-NEXT: "rank": 1,
  // CHECK:      "dst": [
  // CHECK-NEXT:   {
  // CHECK-NEXT:     "rank": 2,
  // CHECK:        {
  // CHECK-NEXT:     "rank": 3,
  sdma.bcast %input[0, 1] on 1 -> %output[1, 1] on 2, %output[1, 1] on 3
  // CHECK:      "op": "swap",
  // CHECK-NEXT: "rank": 2,
  // CHECK-NEXT: "a": {
  // CHECK-NEXT:   "rank": 2,
  // CHECK-NEXT:   "buffer": "output",
  // CHECK-NEXT:   "offset": 0,
  // CHECK-NEXT:   "count": 2
  // CHECK:      "b": {
  // CHECK-NEXT:   "rank": 3,
  // CHECK-NEXT:   "buffer": "output",
  // CHECK-NEXT:   "offset": 2,
  // CHECK-NEXT:   "count": 2
  sdma.swap %output[0, 2] on 2 <-> %output[2, 2] on 3
  // CHECK:      "op": "fence"
  // CHECK-NEXT: },
  sdma.fence
  // CHECK-NEXT: {
  // CHECK-NEXT:   "op": "fence",
  // CHECK-NEXT:   "rank": 3
  sdma.fence on 3
  // CHECK:        "op": "signal",
  // CHECK-NEXT:   "rank": 0,
  // CHECK-NEXT:   "to": 1,
  // CHECK-NEXT:   "tag": 5
  sdma.signal 0 -> 1 tag 5
  // CHECK:        "op": "wait",
  // CHECK-NEXT:   "rank": 1,
  // CHECK-NEXT:   "from": 0,
  // CHECK-NEXT:   "tag": 5
  sdma.wait 1 <- 0 tag 5
  // CHECK:        "op": "barrier"
  sdma.barrier
  // A data op's engine (its queue: ordered with the engine's other ops).
  // CHECK:        "op": "copy",
  // CHECK:        "dst": {
  // CHECK:        },
  // CHECK-NEXT:   "engine": 2
  sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0 {engine = 2 : i64}
}
// CHECK:      "name": "second",
// CHECK-NEXT: "ranks": 1,
sdma.schedule @second ranks(%R = 1) buffers(%b : 1) {}
