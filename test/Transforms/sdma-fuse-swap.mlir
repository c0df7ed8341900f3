// RUN: sdma-opt %s --sdma-fuse-swap=always=1 -split-input-file | FileCheck %s
// RUN: sdma-opt %s --sdma-fuse-swap=always=1 -split-input-file --sdma-verify > /dev/null
// RUN: sdma-opt %s --sdma-fuse-swap -split-input-file | FileCheck %s --check-prefix=PAYS

// An opposite pair becomes two staging copies, the hand-off (signal from
// the other rank, fence on the issuer, wait) and one swap. Distance 1 is
// odd: rank 0 issues. Unpaired ops stay first.
// A lone pair does not pay (two staging copies for one saved command):
// without always=1 the stretch stays as it is.
// PAYS-LABEL: sdma.schedule @pair
// PAYS-NEXT:    sdma.copy %in[1, 1] on 0 -> %out[0, 1] on 1
// PAYS-NEXT:    sdma.copy %b[0, 1] on 2 -> %b[1, 1] on 3
// PAYS-NEXT:    sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
// CHECK-LABEL: sdma.schedule @pair
// CHECK-NEXT:    sdma.copy %b[0, 1] on 2 -> %b[1, 1] on 3
// CHECK-NEXT:    sdma.copy %in[1, 1] on 0 -> %out[1, 1] on 0
// CHECK-NEXT:    sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 1
// CHECK-NEXT:    sdma.signal 1 -> 0 tag 3
// CHECK-NEXT:    sdma.fence on 0
// CHECK-NEXT:    sdma.wait 0 <- 1 tag 3
// CHECK-NEXT:    sdma.swap %out[1, 1] on 0 <-> %out[0, 1] on 1
// CHECK-NEXT:    sdma.signal 2 -> 3 tag 2
sdma.schedule @pair ranks(%R = 4) buffers(%in : 2, %out : 2, %b : 2) {
  sdma.copy %in[1, 1] on 0 -> %out[0, 1] on 1
  sdma.copy %b[0, 1] on 2 -> %b[1, 1] on 3
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
  sdma.signal 2 -> 3 tag 2
  sdma.wait 3 <- 2 tag 2
}

// -----

// Even distance: the second rank issues.
// CHECK-LABEL: sdma.schedule @even
// CHECK:         sdma.signal 0 -> 2 tag 1
// CHECK-NEXT:    sdma.fence on 2
// CHECK-NEXT:    sdma.wait 2 <- 0 tag 1
// CHECK-NEXT:    sdma.swap %out[0, 1] on 2 <-> %out[2, 1] on 0
sdma.schedule @even ranks(%R = 4) buffers(%in : 4, %out : 4) {
  sdma.copy %in[2, 1] on 0 -> %out[0, 1] on 2
  sdma.copy %in[0, 1] on 2 -> %out[2, 1] on 0
}

// -----

// No pair: same rank, different sizes, not opposite, or across a fence.
// CHECK-LABEL: sdma.schedule @no_pairs
// CHECK-NOT:     sdma.swap
sdma.schedule @no_pairs ranks(%R = 3) buffers(%in : 4, %out : 4) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[1, 2] on 0 -> %out[0, 2] on 1
  sdma.copy %in[1, 1] on 1 -> %out[1, 1] on 0
  sdma.copy %in[2, 1] on 1 -> %out[2, 1] on 2
  sdma.fence
  sdma.copy %in[3, 1] on 2 -> %out[3, 1] on 1
}

// -----

// The direct all-to-all at 4 ranks: after canonicalisation and sdma-merge-copies one staging copy
// per rank and 6 swaps replace 12 remote copies, and it still verifies. The
// all-gather, whose staging copies would not merge, is left alone.
// RUN: sdma-opt %schedules/all_to_all_direct.mlir --sdma-unroll=ranks=4 --sdma-fuse-swap -canonicalize --sdma-merge-copies --sdma-verify | FileCheck %s --check-prefix=A2A
// A2A-COUNT-4: sdma.copy %input[0, 4] on
// A2A-NOT:     sdma.copy
// A2A-COUNT-6: sdma.swap
// RUN: sdma-opt %schedules/all_gather_direct.mlir --sdma-unroll=ranks=4 --sdma-fuse-swap | FileCheck %s --check-prefix=AG
// AG-NOT: sdma.swap
sdma.schedule @placeholder ranks(%R = 1) buffers(%b : 1) {}
