// Every reduction schedule unrolled for 8 ranks and proved: the remark
// names the collective and the operator; the op shapes are checked where
// the algorithm fixes them.
// RUN: sdma-opt %schedules/all_reduce_one_shot.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: sdma-opt %schedules/all_reduce_two_shot.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: sdma-opt %schedules/all_reduce_ring.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=RING
// RUN: sdma-opt %schedules/all_reduce_in_place.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=INPLACE
// RUN: sdma-opt %schedules/reduce_scatter_direct.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=RS
// RUN: sdma-opt %schedules/reduce_scatter_ring.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=RSRING
// RUN: sdma-opt %schedules/reduce.mlir --sdma-unroll=ranks=8 --sdma-verify 2>&1 | FileCheck %s --check-prefix=REDUCE

// ONE: remark: proved for 8 ranks: 64 data ops race-free, 0 waits always released (no deadlock), implements all_reduce(input -> output) with sum
// ONE: sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// ONE: sdma.fence
// ONE-NEXT: sdma.reduce sum %output[0, 1] on 0 <- %input[0, 1] on 1
// ONE-COUNT-54: sdma.reduce sum
// ONE-NEXT: sdma.reduce sum %output[0, 1] on 7 <- %input[0, 1] on 6
// ONE-NEXT: }

// TWO: remark: proved for 8 ranks: 120 data ops race-free, 0 waits always released (no deadlock), implements all_reduce(input -> output) with sum
// TWO: sdma.reduce sum %output[0, 1] on 0 <- %input[0, 1] on 1
// TWO: sdma.reduce sum %output[7, 1] on 7 <- %input[7, 1] on 6
// TWO-NEXT: sdma.fence
// TWO-NEXT: sdma.copy %output[0, 1] on 0 -> %output[0, 1] on 1

// RING: remark: proved for 8 ranks: 120 data ops race-free, 112 waits always released (no deadlock), implements all_reduce(input -> output) with sum

// INPLACE: remark: proved for 8 ranks: 64 data ops race-free, 56 waits always released (no deadlock), implements all_reduce(data -> data) with sum
// INPLACE: sdma.copy %data[0, 1] on 0 -> %stage[0, 1] on 0
// INPLACE: sdma.fence
// INPLACE-COUNT-56: sdma.signal
// INPLACE-COUNT-56: sdma.wait
// INPLACE-NEXT: sdma.reduce sum %data[0, 1] on 0 <- %stage[0, 1] on 1

// RS: remark: proved for 8 ranks: 64 data ops race-free, 0 waits always released (no deadlock), implements reduce_scatter(input -> output) with sum
// RS: sdma.copy %input[3, 1] on 3 -> %output[0, 1] on 3
// RS: sdma.reduce sum %output[0, 1] on 3 <- %input[3, 1] on 4

// RSRING: remark: proved for 8 ranks: 72 data ops race-free, 56 waits always released (no deadlock), implements reduce_scatter(input -> output) with sum

// REDUCE: remark: proved for 8 ranks: 8 data ops race-free, 0 waits always released (no deadlock), implements reduce(input -> output) root 0 with sum
// REDUCE: sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// REDUCE-NEXT: sdma.fence on 0
// REDUCE-NEXT: sdma.reduce sum %output[0, 1] on 0 <- %input[0, 1] on 1
// REDUCE-COUNT-5: sdma.reduce sum %output[0, 1] on 0
// REDUCE-NEXT: sdma.reduce sum %output[0, 1] on 0 <- %input[0, 1] on 7
// REDUCE-NEXT: }
