// sdma.copyv's packed offsets: the emitter lists, per phase, the count
// tables its copyv ops sum (forms 0 and 1) as rows of sdma_vtabs (rank,
// buffer, entries read, form, place in shared memory), and points each
// side at its table's place (sdma_vops word 4 of a side); the kernel scans
// each table once per phase (LdstPhases.hip's sdma_scan) instead of every
// op summing up to a whole table of another rank's memory.
//
// Dispatch into expert-major rows, 2 ranks x 2 experts: rank 0's copyv
// phase reads its own send counts packed (form 0, 3 entries: 5 words) and
// each receiver's recv counts expert-major (form 1, 2 entries and one
// group: 4 words each); rank 1's the same with 3 entries per receiver.
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=2 experts=2 major-align=4" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=DISPATCH
// DISPATCH: #define SDMA_VOP_STRIDE 10
// DISPATCH: #define SDMA_PREFIX_CACHE 17
// DISPATCH-NEXT: #define SDMA_SCAN_SEG 16
// DISPATCH-LABEL: sdma_vops[] = {
// DISPATCH-NEXT: 2, 0, 0, 0, 0, 3, 0, 0, 1, 5, 2, 0,
// DISPATCH-LABEL: sdma_vtabs[] = {
// DISPATCH-NEXT: 0, 2, 3, 0, 0, 0, 3, 2, 1, 5, 1, 3,
// DISPATCH-NEXT: 2, 1, 9, 0, 3, 3, 1, 0, 1, 2, 3, 0,
// DISPATCH-NEXT: 6, 1, 3, 3, 1, 11,};
// DISPATCH-NEXT: sdma_vtab_begin[] = {
// DISPATCH-NEXT: 0, 0, 0, 0, 3, 3, 3, 3, 6,};
//
// The combine: its input offsets are given (form 2, one entry: no scan,
// word 4 stays -1); its packed output is scanned.
// RUN: sdma-opt %schedules/all_to_allv_2d_offset.mlir --sdma-unroll="ranks=2 experts=2" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=COMBINE
// COMBINE: #define SDMA_PREFIX_CACHE 10
// COMBINE-LABEL: sdma_vops[] = {
// COMBINE-NEXT: 2, 0, 4, 2, -1, 3, 0, 0, 0, 0,
// COMBINE-LABEL: sdma_vtabs[] = {
// COMBINE-NEXT: 0, 3, 1, 0, 0, 1, 3, 1, 0, 3,
//
// A phase whose tables pass 32 KiB of shared memory keeps the per-op sums:
// 9 ranks x 40 experts fits (3983 words), 48 does not.
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=9 experts=40" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=FITS
// FITS: #define SDMA_PREFIX_CACHE 3983
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=9 experts=48" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=LARGE
// LARGE-NOT: #define SDMA_PREFIX_CACHE {{[1-9]}}
// LARGE-NOT: sdma_vtabs
// LARGE: sdma_ldst
