// RUN: not sdma-opt %s --sdma-unroll 2>&1 | FileCheck %s

// An open rank count needs the pass option.
// CHECK: error: 'sdma.schedule' op has no rank count: write ranks(%R = N) or pass sdma-unroll ranks=N
sdma.schedule @open ranks(%R) buffers(%b : ranks) {}
