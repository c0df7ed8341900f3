// The MoE pair (dispatch into expert-major rows, and its combine) unrolls
// and is proved (race-free, deadlock-free, the postcondition for every
// count) at 2 to 9 ranks x 1 to 8 experts per rank, the dispatch with
// three alignments; mutants are refused with the row named.
// RUN: for r in 2 3 4 5 6 7 8 9; do for e in 1 2 3 4 5 6 7 8; do sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=$r experts=$e major-align=$((1 + (r * e) %% 3 * 7))" --sdma-verify 2>&1 >/dev/null; done; done | FileCheck %s --check-prefix=DISPATCH
// RUN: for r in 2 3 4 5 6 7 8 9; do for e in 1 2 3 4 5 6 7 8; do sdma-opt %schedules/all_to_allv_2d_offset.mlir --sdma-unroll="ranks=$r experts=$e" --sdma-verify 2>&1 >/dev/null; done; done | FileCheck %s --check-prefix=COMBINE
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=2 experts=2 major-align=16" | FileCheck %s --check-prefix=OPS

// DISPATCH: remark: proved for 2 ranks: 8 data ops race-free
// DISPATCH-COUNT-63: implements all_to_allv_2d(input -> output) counts(send_counts -> recv_counts) for every count
// DISPATCH: remark: proved for 9 ranks: 1296 data ops race-free, 0 waits always released (no deadlock), implements all_to_allv_2d(input -> output) counts(send_counts -> recv_counts) for every count
// COMBINE-COUNT-63: implements all_to_allv_2d_offset(input -> output) counts(send_counts -> recv_counts) for every count
// COMBINE: remark: proved for 9 ranks: 1296 data ops race-free, 0 waits always released (no deadlock), implements all_to_allv_2d_offset(input -> output) counts(send_counts -> recv_counts) for every count

// OPS:      buffers(%input : 2, %output : 2, %send_counts : counts[4], %recv_counts : counts[4])
// OPS-SAME: attributes {experts = 2 : i64, major_align = 16 : i64}
// OPS-NOT:  sdma.barrier
// OPS:      sdma.copyv %input[packed %send_counts[0] on 0] on 0 -> %output[expert_major forwarded %recv_counts[0] on 0] on 0, count %send_counts[0] on 0 max 1
// OPS-NEXT: sdma.copyv %input[packed %send_counts[1] on 0] on 0 -> %output[expert_major forwarded %recv_counts[2] on 0] on 0, count %send_counts[1] on 0 max 1
// OPS:      sdma.copy %send_counts[0, 1] on 0 -> %recv_counts[0, 1] on 0
// OPS-NEXT: sdma.copy %send_counts[1, 1] on 0 -> %recv_counts[2, 1] on 0
// OPS-NEXT: sdma.copy %send_counts[2, 1] on 0 -> %recv_counts[0, 1] on 1

// Mutants, each refused naming what is wrong.
// RUN: sed 's/-> %%output\[expert_major/-> %%output[packed/' %schedules/all_to_allv_2d.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNPADDED
// UNPADDED: does not implement all_to_allv_2d: the rows rank 0 sends to rank 0 (expert 0) are never written to output[0] on rank 0
// RUN: sed 's/-> %%recv_counts\[%%j, 1\] on %%p/-> %%recv_counts[%%i, 1] on %%p/' %schedules/all_to_allv_2d.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANKMAJOR
// RANKMAJOR: 'sdma.copyv' op destination reads entry 0 of count table 'recv_counts' on rank 0 forwarded, but 3 copies write it; forwarding needs exactly one
// Unforwarded (the receive table read while the count puts fill it) and
// forwarded from a table an op writes.
// RUN: sed 's/expert_major forwarded/expert_major/' %schedules/all_to_allv_2d.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFORWARDED
// UNFORWARDED: 'sdma.copy' op races with another op: it writes recv_counts[0, 1) on rank 0, which the other op reads
// RUN: sed 's/packed forwarded/packed/' %schedules/all_to_allv_2d_offset.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFORWARDED-COMBINE
// UNFORWARDED-COMBINE: 'sdma.copy' op races with another op: it writes recv_counts[0, 1) on rank 0, which the other op reads
// RUN: sed 's/count %%send_counts\[%%i\] on %%r max 1/count %%send_counts[%%j] on %%r max 1/' %schedules/all_to_allv_2d.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: the rows rank 1 sends to rank 0 (expert 0) number send_counts[0] of rank 1, but send_counts[1] of rank 1 are copied
// RUN: sed 's/%%input\[at %%send_counts\[%%o\]/%%input[at %%send_counts[%%j]/' %schedules/all_to_allv_2d_offset.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFFSETS
// OFFSETS: the rows rank 0 sends to rank 0 (expert 0) should come from input[0 + send_counts[6] of rank 0] of rank 0, but input[0 + send_counts[0] of rank 0] of rank 0 is copied there
// RUN: sed 's/-> %%output\[packed forwarded %%recv_counts\[%%i\] on %%r\]/-> %%output[expert_major forwarded %%recv_counts[%%i] on %%r]/' %schedules/all_to_allv_2d_offset.mlir | not sdma-opt --sdma-unroll="ranks=3 experts=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=PADDED
// PADDED: does not implement all_to_allv_2d_offset: the rows rank 0 sends to rank 0 (expert 0) are never written
// No expert count bound.
// RUN: not sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll=ranks=3 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: error: 'sdma.schedule' op sizes buffer 'send_counts' in experts, but none is bound: pass sdma-unroll experts=E
