// --sdma-to-hip and --sdma-to-plan prove the schedule first: a racy one is
// refused with the verifier's error, and becomes a kernel or plan only with
// --sdma-translate-unverified.
// RUN: not sdma-translate --sdma-to-hip %s 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not sdma-translate --sdma-to-plan %s 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: sdma-translate --sdma-to-hip --sdma-translate-unverified %s | FileCheck %s --check-prefix=HIP

// REFUSED: error: 'sdma.copy' op races with another op
// REFUSED: error: not translated: the schedule does not verify (the errors above); --sdma-translate-unverified translates it anyway
// HIP: // sdma-ldst:

// Rank 1 writes its chunk into rank 0's output while rank 0 reads it, with
// nothing ordering the two.
sdma.schedule @racy ranks(%R = 2) buffers(%in : 1, %out : 2) {
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0
  sdma.copy %out[1, 1] on 0 -> %in[0, 1] on 0
}
