// RUN: sdma-opt %s --sdma-assign-engines | FileCheck %s
// RUN: sdma-opt %s --sdma-assign-engines=policy=round-robin | FileCheck %s --check-prefix=RR

// A pull is issued by its destination's rank and its peer is its source:
// affinity gives it engine (source - destination - 1) mod R on the
// destination's queues, as a put gets (destination - source - 1) mod R on
// the source's; a local pull takes the last engine. Round-robin counts
// per issuing rank (rank 2 issues the three pulls).
// CHECK:      sdma.copy pull %in[0, 1] on 0 -> %out[0, 1] on 2 {engine = 1 : i64}
// CHECK-NEXT: sdma.copy pull %in[0, 1] on 1 -> %out[1, 1] on 2 {engine = 2 : i64}
// CHECK-NEXT: sdma.copy pull %in[0, 1] on 2 -> %out[2, 1] on 2 {engine = 3 : i64}
// CHECK-NEXT: sdma.copy %in[0, 1] on 2 -> %out[2, 1] on 0 {engine = 1 : i64}
// RR:         sdma.copy pull {{.*}} {engine = 0 : i64}
// RR-NEXT:    sdma.copy pull {{.*}} {engine = 1 : i64}
// RR-NEXT:    sdma.copy pull {{.*}} {engine = 2 : i64}
// RR-NEXT:    sdma.copy %in{{.*}} {engine = 3 : i64}
sdma.schedule @pulls ranks(%R = 4) buffers(%in : 1, %out : ranks) {
  sdma.copy pull %in[0, 1] on 0 -> %out[0, 1] on 2
  sdma.copy pull %in[0, 1] on 1 -> %out[1, 1] on 2
  sdma.copy pull %in[0, 1] on 2 -> %out[2, 1] on 2
  sdma.copy %in[0, 1] on 2 -> %out[2, 1] on 0
}
