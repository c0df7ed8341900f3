// RUN: sdma-opt %s --sdma-assign-engines | FileCheck %s --check-prefix=AFF
// RUN: sdma-opt %s --sdma-assign-engines=engines=2 | FileCheck %s --check-prefix=TWO
// RUN: sdma-opt %s --sdma-assign-engines=policy=round-robin | FileCheck %s --check-prefix=RR
// RUN: sdma-opt %s --sdma-assign-engines=policy=single | FileCheck %s --check-prefix=ONE
// RUN: not sdma-opt %s --sdma-assign-engines=policy=random 2>&1 | FileCheck %s --check-prefix=BAD

// Affinity: engine (peer - rank - 1) mod R, one per peer; local copies use
// the last; a bcast goes by its first destination, a swap by its peer.
// AFF:      sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 2 {engine = 0 : i64}
// AFF-NEXT: sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0 {engine = 2 : i64}
// AFF-NEXT: sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1 {engine = 3 : i64}
// AFF-NEXT: sdma.bcast %in[0, 1] on 3 -> %out[3, 1] on 1, %out[3, 1] on 2 {engine = 1 : i64}
// AFF-NEXT: sdma.swap %out[0, 1] on 0 <-> %out[0, 1] on 3 {engine = 2 : i64}
// TWO:      {engine = 0 : i64}
// TWO-NEXT: {engine = 0 : i64}
// TWO-NEXT: {engine = 1 : i64}
// TWO-NEXT: {engine = 1 : i64}
// TWO-NEXT: {engine = 0 : i64}
// RR:       on 2 {engine = 0 : i64}
// RR-NEXT:  on 0 {engine = 1 : i64}
// RR-NEXT:  on 1 {engine = 2 : i64}
// RR-NEXT:  {engine = 0 : i64}
// RR-NEXT:  {engine = 0 : i64}
// ONE-COUNT-5: {engine = 0 : i64}
// BAD: error: sdma-assign-engines: unknown policy 'random' (expected affinity, round-robin or single)
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : ranks) {
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 2
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1
  sdma.bcast %in[0, 1] on 3 -> %out[3, 1] on 1, %out[3, 1] on 2
  sdma.swap %out[0, 1] on 0 <-> %out[0, 1] on 3
}
