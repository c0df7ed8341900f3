//===- Specialise.h - each rank's steps as straight-line code ----*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The table kernel (LdstPhases.hip) interprets the step and op tables: per
// step two dependent table loads, per op of a phase a full row resolved by
// every thread, reduce loops whose source count is a run-time value. A
// specialised kernel is the same schedule written as code, one function
// per rank:
//
//   table kernel, rank 3                  specialised, rank 3
//     steps: [PHASE 16,8][SYNC]             sdma_rank_3(T, chunk, epoch):
//            [SIGNAL 2,5][WAIT 5,1]           phase: sdma_seg_move<0>(T,
//     ops:   8 copy rows of 1 chunk             sdma_ops + 16 * 12, 8, chunk,
//                                               1 * chunk, ...)
//                                             sdma_rank_sync(T, 3)
//                                             sdma_signal(T, 2, 5)
//                                             sdma_wait(T, 3, 5, epoch * 1 + 1)
//
// The rows of each phase are sorted so that ops of one kind and size are
// adjacent; each such run (a segment) is one call whose kind, op count and
// size in chunks are constants: a thread finds its op by one division, a
// reduce row's sources and destinations are unrolled (all loads in flight
// before the first add). Phases, syncs, signals, waits and barriers are
// the table kernel's, in the same order, so both kernels run the same
// schedule (ops within one phase are concurrent, their order is free).
// A segment whose rows are affine in the op index gets its addresses from
// constants (a lambda instead of `sdma_ops + ...`), and where the ranks'
// code differs only in numbers affine in the rank (or mod R around a
// ring), one function, sdma_rank_all, serves every rank.
//
// Schedules with sdma.copyv (run-time counts) or more than
// kSpecialiseMaxLines steps and segments together keep the table kernel.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_HIP_SPECIALISE_H
#define SDMA_LIB_TARGET_HIP_SPECIALISE_H

#include "LdstSteps.h"

#include <optional>
#include <string>

namespace sdma::hip {

/// The most steps plus segments, over all ranks, written as code.
constexpr std::size_t kSpecialiseMaxLines = 8192;
/// The most segments emitted (over all ranks, or in the one shared body)
/// whose routines are inlined into their phases (SDMA_SEG_INLINE); beyond,
/// each routine is one function and reads its rows from sdma_ops.
constexpr std::size_t kInlineMaxSegments = 32;

struct SpecialisedCode {
  /// Before the kernel source: SDMA_SPECIALISED, SDMA_SEG_INLINE.
  std::string defines;
  /// After it: the rank functions and `sdma_run_rank`.
  std::string ranks;
};

/// The code of `sdma_run_rank` for `steps` over `ops` (whose phases'
/// rows it sorts into segments), or none when the schedule keeps the table
/// kernel (then `ops` is unchanged). `perEpoch[rank * slots + slot]` is
/// what a wait's value grows by per run.
std::optional<SpecialisedCode>
specialiseRanks(const std::vector<std::vector<Step>> &steps,
                std::vector<int64_t> &ops,
                const std::vector<unsigned long long> &perEpoch, int64_t slots);

} // namespace sdma::hip

#endif // SDMA_LIB_TARGET_HIP_SPECIALISE_H
