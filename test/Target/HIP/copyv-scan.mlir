// sdma.copyv's packed offsets: the emitter lists, per phase, the count
// tables its copyv ops sum (forms 0 and 1) as rows of sdma_vtabs (rank,
// buffer, entries read, form, place in shared memory), and points each
// side at its table's place (sdma_vops word 4 of a side); the kernel scans
// each table once per phase (LdstPhases.hip's sdma_scan) instead of every
// op summing up to a whole table of another rank's memory.
//
// Dispatch into expert-major rows, 2 ranks x 2 experts, in one phase with
// its count puts: rank 0's copyv ops read its own send counts packed (form
// 0, 3 entries: 5 words) and each receiver's recv counts expert-major and
// forwarded (form 1 + 4, 3 entries and one group: 5 words each), their
// rank word the row's first entry in sdma_fwd, which holds where the count
// puts read each entry: (rank * 4 buffers + send_counts) << 32 | entry, so
// entry 1 of receiver 0's row is send_counts[0] of rank 1 (6 << 32). The
// one launch that runs every rank waits on a barrier of its own (slot 0)
// before reading peers' tables.
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=2 experts=2 major-align=4" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=DISPATCH
// DISPATCH: #define SDMA_FLAG_SLOTS 1
// DISPATCH: #define SDMA_VOP_STRIDE 10
// DISPATCH: #define SDMA_FORWARDED 1
// DISPATCH-NEXT: #define SDMA_PEER_COUNTS_SLOT 0
// DISPATCH-NEXT: #define SDMA_PREFIX_CACHE 17
// DISPATCH-NEXT: #define SDMA_SCAN_SEG 16
// DISPATCH-LABEL: sdma_vops[] = {
// DISPATCH-NEXT: 2, 0, 0, 0, 0, 3, 0, 0, 5, 5, 2, 0,
// DISPATCH-LABEL: sdma_fwd[] = {
// DISPATCH-NEXT: 8589934592, 25769803776, 8589934593, 8589934594, 25769803778, 8589934595,};
// DISPATCH-LABEL: sdma_vtabs[] = {
// DISPATCH-NEXT: 0, 2, 3, 0, 0, 0, 3, 2, 5, 5, 3, 3,
// DISPATCH-NEXT: 2, 5, 9, 0, 3, 3, 5, 0, 1, 2, 3, 0,
// DISPATCH-NEXT: 6, 3, 3, 3, 5, 11,};
// DISPATCH-NEXT: sdma_vtab_begin[] = {
// DISPATCH-NEXT: 0, 3, 6,};
// DISPATCH-LABEL: sdma_per_epoch[] = {
// DISPATCH-NEXT: 2ull, 2ull,};
//
// The combine: its input offsets are given (form 2, one entry: no scan,
// word 4 stays -1); its packed output is forwarded (form 0 + 4) and
// scanned. Its rows are pulled, so each rank's phase holds the copyvs into
// its own output and scans its own row of the receive counts only (one
// table row per rank, 5 words) where a push scanned every receiver's
// (10). The copyvs' counts lie with other ranks: each rank checks every
// count it holds, and the one launch of every rank waits on a barrier of
// its own (slot 0) before reading them.
// RUN: sdma-opt %schedules/all_to_allv_2d_offset.mlir --sdma-unroll="ranks=2 experts=2" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=COMBINE
// COMBINE: #define SDMA_FORWARDED 1
// COMBINE-NEXT: #define SDMA_PEER_COUNTS_SLOT 0
// COMBINE-NEXT: #define SDMA_PEER_COUNT_CHECKS 1
// COMBINE-NEXT: #define SDMA_PREFIX_CACHE 5
// COMBINE-LABEL: sdma_vops[] = {
// COMBINE-NEXT: 2, 0, 4, 2, -1, 3, 0, 0, 4, 0,
// COMBINE-LABEL: sdma_fwd[] = {
// COMBINE-NEXT: 8589934592, 8589934594, 25769803776, 8589934593, 8589934595, 25769803777,};
// COMBINE-LABEL: sdma_vtabs[] = {
// COMBINE-NEXT: 0, 3, 3, 4, 0, 3, 3, 3, 4, 0,};
// COMBINE-NEXT: sdma_vtab_begin[] = {
// COMBINE-NEXT: 0, 1, 2,};
// Rank 0 holds the counts of its own pulls from itself (ops 0, 1) and of
// rank 1's pulls from it (8, 9): its block 0 checks those.
// COMBINE-NEXT: sdma_count_checks[] = {
// COMBINE-NEXT: 0, 1, 8, 9, 2, 3, 10, 11,};
// COMBINE-NEXT: sdma_count_check_begin[] = {
// COMBINE-NEXT: 0, 4, 8,};
//
// A schedule without forwarded sides (capacity slots) has no sdma_fwd and
// no barrier of its own.
// RUN: sdma-opt %schedules/all_to_allv_slots.mlir --sdma-unroll=ranks=2 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=PLAIN
// PLAIN: #define SDMA_FLAG_SLOTS 1
// PLAIN: #define SDMA_COUNT_OPS 1
// PLAIN-NOT: SDMA_FORWARDED
// PLAIN-NOT: SDMA_PEER_COUNT
// PLAIN-NOT: sdma_fwd
// PLAIN-NOT: sdma_count_checks
// PLAIN: sdma_per_epoch[] = {
// PLAIN-NEXT: 0ull, 0ull,};
//
// A phase whose tables pass 32 KiB of shared memory keeps the per-op sums:
// 9 ranks x 40 experts fits (3983 words), 48 does not.
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=9 experts=40" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=FITS
// FITS: #define SDMA_PREFIX_CACHE 3983
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=9 experts=48" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=LARGE
// LARGE-NOT: #define SDMA_PREFIX_CACHE {{[1-9]}}
// LARGE-NOT: sdma_vtabs
// LARGE: sdma_ldst
