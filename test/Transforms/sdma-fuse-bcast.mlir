// RUN: sdma-opt %s --sdma-fuse-bcast -split-input-file | FileCheck %s
// RUN: sdma-opt %s --sdma-fuse-bcast -split-input-file --sdma-verify > /dev/null

// Copies of one source slice pair up into broadcasts, in order; an odd one
// out stays a copy.
// CHECK-LABEL: sdma.schedule @pairs
// CHECK-NEXT:    sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[0, 1] on 2
// CHECK-NEXT:    sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 3, %out[0, 1] on 0
// CHECK-NEXT:    sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
// CHECK-NEXT:    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 4
// CHECK-NEXT:  }
sdma.schedule @pairs ranks(%R = 5) buffers(%in : 1, %out : ranks) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 3
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 4
}

// -----

// Not across an ordering op, not for different sources (rank, offset or
// count), not when a destination overlaps the source (a self-copy).
// CHECK-LABEL: sdma.schedule @no_fusion
// CHECK-NOT:     sdma.bcast
sdma.schedule @no_fusion ranks(%R = 4) buffers(%in : 2, %out : 8) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1
  sdma.fence on 3
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 2
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 2
  sdma.copy %in[1, 1] on 0 -> %out[4, 1] on 2
  sdma.copy %in[0, 2] on 0 -> %out[2, 2] on 2
  sdma.signal 0 -> 1
  sdma.copy %out[0, 1] on 3 -> %out[0, 1] on 3
  sdma.copy %out[0, 1] on 3 -> %out[5, 1] on 2
}

// -----

// The all-gather direct schedule at 5 ranks: 4 broadcasts and a copy per
// rank become 3 commands per rank (ceil(5/2)).
// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=5 --sdma-fuse-bcast --sdma-verify > %t
// RUN: grep -c sdma.bcast %t | grep -x 10
// RUN: grep -c sdma.copy %t | grep -x 5
sdma.schedule @placeholder ranks(%R = 1) buffers(%b : 1) {}
