// RUN: sdma-opt %s --sdma-batch | FileCheck %s
// RUN: sdma-opt %s --sdma-batch=max-batch=2 | FileCheck %s --check-prefix=MAX2

// Back-to-back copies on one engine keep only the last notify of each flag
// (other notifies in between do not stop it; a poll does), and the poll for
// the second notify of flag 2 now waits for the first surviving one.
// CHECK-LABEL: sdma.schedule @b2b
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2 {engine = 0 : i64}
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 3 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 0 : 0 -> 1[2]
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[1]
// CHECK-NEXT:    sdma.poll 0 : 0 until[0] at_least 1
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 0 : 0 -> 0[1]
// CHECK-NEXT:    sdma.poll 1 : 0 until[2] at_least 1
// CHECK-NEXT:    sdma.copy %out[0, 1] on 1 -> %out[1, 1] on 1 {engine = 0 : i64}
// CHECK-NEXT:    sdma.notify 1 : 0 -> 1[1]
// CHECK-NEXT:  }
// With at most two data ops per signal, the third copy gets signals of
// its own, and the poll keeps waiting for the second notify of flag 2.
// MAX2-LABEL: sdma.schedule @b2b
// MAX2-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
// MAX2-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2 {engine = 0 : i64}
// MAX2-NEXT:    sdma.notify 0 : 0 -> 1[2]
// MAX2-NEXT:    sdma.notify 0 : 0 -> 0[1]
// MAX2-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 3 {engine = 0 : i64}
// MAX2-NEXT:    sdma.notify 0 : 0 -> 1[2]
// MAX2-NEXT:    sdma.notify 0 : 0 -> 0[1]
// MAX2:         sdma.poll 1 : 0 until[2] at_least 2
sdma.schedule @b2b ranks(%R = 4) buffers(%in : 1, %out : ranks) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 0 [1]
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  sdma.notify 0 : 0 -> 0 [1]
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 3 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [2]
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 0 : 0 until [0] at_least 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 1 : 0 until [2] at_least 2
  sdma.copy %out[0, 1] on 1 -> %out[1, 1] on 1 {engine = 0 : i64}
  sdma.notify 1 : 0 -> 1 [1]
}
