//===- IterationLoc.h - loop iterations carried in op locations -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-unroll gives every op it creates a location that also names the loop
// iterations it came from: a FusedLoc of the op's own location followed by
// each enclosing loop's location (outermost first), with the loops' index
// values as metadata. Diagnostics show the op's own location (the first);
// later passes (sdma-verify) name the iterations in notes.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_ITERATIONLOC_H
#define SDMA_IR_ITERATIONLOC_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

namespace sdma {

/// One enclosing loop iteration.
struct LoopIteration {
  mlir::Location loop;
  int64_t index;
};

/// `loc` extended with the loop iterations it was created in.
mlir::Location withIterations(mlir::Location loc,
                              llvm::ArrayRef<LoopIteration> iterations);

/// The iterations `withIterations` recorded in `loc`, outermost first.
llvm::SmallVector<LoopIteration> getIterations(mlir::Location loc);

/// Attaches one note per iteration of `loc`: "<what> is from the iteration
/// where this loop's index is N".
void attachIterationNotes(mlir::Diagnostic &diag, mlir::Location loc,
                          llvm::StringRef what);

} // namespace sdma

#endif // SDMA_IR_ITERATIONLOC_H
