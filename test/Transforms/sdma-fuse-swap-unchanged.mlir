// RUN: sdma-opt %s --sdma-fuse-swap=always=1 -verify-diagnostics | FileCheck %s

// Translation validation: a staged all-to-all hand-off that verifies. Fusing
// its opposite tmp copies into a swap issued by one rank would move the
// write of rank 0's tmp to rank 1, which rank 0's later read is not ordered
// after, so sdma-fuse-swap leaves the schedule as it was and says why.
//
//   rank 0: in [a0][a1]  ->  tmp(1) = a1 ... wait ... out [a0][b0]
//   rank 1: in [b0][b1]  ->  tmp(0) = b0 ... wait ... out [a1][b1]

// CHECK-LABEL: sdma.schedule @handoff
// CHECK-NOT:     sdma.swap
// CHECK:         sdma.copy %in[1, 1] on 0 -> %tmp[0, 1] on 1
// CHECK-NEXT:    sdma.copy %in[0, 1] on 1 -> %tmp[0, 1] on 0
// expected-warning @+1 {{sdma-fuse-swap left @handoff unchanged: its rewrite would not verify ('sdma.copy' op races with another op: it reads tmp[0, 1) on rank 0, which the other op writes}}
sdma.schedule @handoff ranks(%R = 2) buffers(%in : ranks, %tmp : 1, %out : ranks)
    implements all_to_all(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[1, 1] on 1 -> %out[1, 1] on 1
  sdma.copy %in[1, 1] on 0 -> %tmp[0, 1] on 1
  sdma.copy %in[0, 1] on 1 -> %tmp[0, 1] on 0
  sdma.signal 0 -> 1
  sdma.signal 1 -> 0
  sdma.wait 1 <- 0
  sdma.wait 0 <- 1
  sdma.copy %tmp[0, 1] on 1 -> %out[0, 1] on 1
  sdma.copy %tmp[0, 1] on 0 -> %out[1, 1] on 0
}
