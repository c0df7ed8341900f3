// Both all-to-allv schedules unroll and are proved (race-free, deadlock-
// free, the all_to_allv postcondition for every count) at 2 to 9 ranks.
// RUN: for r in 2 3 4 5 6 7 8 9; do sdma-opt %schedules/all_to_allv_slots.mlir --sdma-unroll=ranks=$r --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=SLOTS
// RUN: for r in 2 3 4 5 6 7 8 9; do sdma-opt %schedules/all_to_allv_packed.mlir --sdma-unroll=ranks=$r --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=PACKED
// RUN: sdma-opt %schedules/all_to_allv_packed.mlir --sdma-unroll=ranks=3 | FileCheck %s --check-prefix=OPS

// SLOTS-COUNT-8: remark: proved for {{[2-9]}} ranks: {{[0-9]+}} data ops race-free, 0 waits always released (no deadlock), implements all_to_allv(input -> output) counts(send_counts -> recv_counts) for every count
// PACKED: remark: proved for 2 ranks: 8 data ops race-free
// PACKED: remark: proved for 9 ranks: 162 data ops race-free, 0 waits always released (no deadlock), implements all_to_allv_packed(input -> output) counts(send_counts -> recv_counts) for every count

// OPS-NOT:  sdma.barrier
// OPS:      sdma.copyv %input[packed %send_counts[0] on 0] on 0 -> %output[packed forwarded %recv_counts[0] on 0] on 0, count %send_counts[0] on 0 max 1
// OPS-NEXT: sdma.copyv %input[packed %send_counts[1] on 0] on 0 -> %output[packed forwarded %recv_counts[0] on 1] on 1, count %send_counts[1] on 0 max 1
// OPS-COUNT-6: sdma.copyv
// OPS-NEXT: sdma.copyv %input[packed %send_counts[2] on 2] on 2 -> %output[packed forwarded %recv_counts[2] on 2] on 2, count %send_counts[2] on 2 max 1
// OPS-NEXT: sdma.copy %send_counts[0, 1] on 0 -> %recv_counts[0, 1] on 0
// OPS-NEXT: sdma.copy %send_counts[1, 1] on 0 -> %recv_counts[0, 1] on 1
// OPS-COUNT-7: sdma.copy %send_counts
// OPS-NOT:  sdma.barrier

// Read unforwarded, the receive table races with the count puts filling it
// (no barrier between them any more).
// RUN: sed 's/packed forwarded/packed/' %schedules/all_to_allv_packed.mlir | not sdma-opt --sdma-unroll=ranks=3 --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFORWARDED
// UNFORWARDED: 'sdma.copy' op races with another op: it writes recv_counts[0, 1) on rank 0, which the other op reads
