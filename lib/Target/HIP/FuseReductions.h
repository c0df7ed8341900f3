//===- FuseReductions.h - reduce rows that take over copies -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The load/store kernel computes a reduce row in registers. Two copies
// around it then only cost memory traffic:
//
//   copy   A -> D          fence          reduce D <- S1..Sn
//     (D = A, written, then read back)  =>  reduce D <- [A], S1..Sn
//                                           (A is the first operand; D is
//                                           not read)
//   reduce D <- S1..Sn     fence          copy D -> E1, ..., copy D -> Ek
//     (D written, read back k times)    =>  reduce D <- S1..Sn, also -> E1..Ek
//                                           (the result stored k + 1 times)
//
// One-shot all-reduce (copy own input, fence, add the peers' inputs) then
// reads R inputs and writes once; two-shot (copy own chunk, fence, add,
// fence, copy the sum to every peer) reads R chunks and writes R: the least
// traffic an all-reduce has. The results are the same bits: every row
// combines its operands in (rank, buffer, offset) order, and A takes D's
// place in it (the same rank; every built-in has one operand per rank).
//
// Sound for a race-free schedule: the rank issues no signal, wait or
// barrier between the two phases (so no other rank can be ordered between
// the copy and the reduce: a reader of D, of A or of E is ordered before
// both or after both), and no other op of the two phases touches D, A
// (writes) or E.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_HIP_FUSEREDUCTIONS_H
#define SDMA_LIB_TARGET_HIP_FUSEREDUCTIONS_H

#include "LdstSteps.h"

namespace sdma::hip {

/// Applies both fusions to one rank's steps wherever they are sound.
void fuseReductions(std::vector<RawStep> &steps);

} // namespace sdma::hip

#endif // SDMA_LIB_TARGET_HIP_FUSEREDUCTIONS_H
