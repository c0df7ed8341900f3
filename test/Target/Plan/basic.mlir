// The plan's layout (its schedules are format fixtures, not all proved).
// RUN: sdma-translate --sdma-to-plan --sdma-translate-unverified %s | FileCheck %s

// An engine-level schedule becomes per-(rank, engine) queues, in program
// order, with completion counts per rank.
// CHECK:      "format": "sdma.plan",
// CHECK-NEXT: "version": 1,
// CHECK-NEXT: "schedule": "two",
// CHECK-NEXT: "ranks": 2,
// CHECK-NEXT: "collective": {
// CHECK-NEXT:  "kind": "broadcast",
// CHECK-NEXT:  "input": "in",
// CHECK-NEXT:  "output": "out",
// CHECK-NEXT:  "root": 0
// CHECK:      "engines": 2,
// CHECK-NEXT: "flags": 4,
// CHECK-NEXT: "prelaunch": true,
// CHECK-NEXT: "done": [
// CHECK-NEXT:  1,
// CHECK-NEXT:  1
// CHECK:      "streams": [
// CHECK-NEXT:  {
// CHECK-NEXT:   "rank": 0,
// CHECK-NEXT:   "engine": 0,
// CHECK-NEXT:   "ops": [
// CHECK-NEXT:    {
// CHECK-NEXT:     "op": "poll",
// CHECK-NEXT:     "flag": 0,
// CHECK-NEXT:     "value": 1
// CHECK:          "op": "copy",
// CHECK-NEXT:     "src": {
// CHECK-NEXT:      "rank": 0,
// CHECK-NEXT:      "buffer": "in",
// CHECK:          "op": "notify",
// CHECK-NEXT:     "rank": 1,
// CHECK-NEXT:     "flag": 3
// CHECK:          "op": "notify",
// CHECK-NEXT:     "rank": 0,
// CHECK-NEXT:     "flag": 1
// CHECK:        "rank": 1,
// CHECK-NEXT:   "engine": 1,
// CHECK:          "op": "poll",
// CHECK-NEXT:     "flag": 0,
// CHECK:          "op": "poll",
// CHECK-NEXT:     "flag": 3,
// CHECK-NEXT:     "value": 1
// CHECK:          "op": "swap",
// CHECK-NEXT:     "a": {
// CHECK-NEXT:      "rank": 1,
sdma.schedule @two ranks(%R = 2) buffers(%in : 1, %out : 1, %t : 2) implements broadcast(%in -> %out) root 0 {
  sdma.poll 0 : 0 until [0] at_least 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [3]
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 1 : 1 until [0] at_least 1
  sdma.poll 1 : 1 until [3] at_least 1
  sdma.swap %t[0, 1] on 1 <-> %t[1, 1] on 0 {engine = 1 : i64}
  sdma.notify 1 : 1 -> 1 [1]
}
