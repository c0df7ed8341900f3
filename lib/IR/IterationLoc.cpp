//===- IterationLoc.cpp - loop iterations carried in op locations ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/IterationLoc.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace sdma;

Location sdma::withIterations(Location loc,
                              ArrayRef<LoopIteration> iterations) {
  if (iterations.empty())
    return loc;
  SmallVector<Location> locations{loc};
  SmallVector<int64_t> indices;
  for (const LoopIteration &it : iterations) {
    locations.push_back(it.loop);
    indices.push_back(it.index);
  }
  return FusedLoc::get(loc.getContext(), locations,
                       DenseI64ArrayAttr::get(loc.getContext(), indices));
}

SmallVector<LoopIteration> sdma::getIterations(Location loc) {
  auto fused = dyn_cast<FusedLoc>(loc);
  if (!fused)
    return {};
  auto indices = dyn_cast_or_null<DenseI64ArrayAttr>(fused.getMetadata());
  ArrayRef<Location> locations = fused.getLocations();
  // FusedLoc drops repeated locations: then the pairing is lost.
  if (!indices || locations.size() != indices.size() + 1)
    return {};
  SmallVector<LoopIteration> result;
  for (auto [i, index] : llvm::enumerate(indices.asArrayRef()))
    result.push_back({locations[i + 1], index});
  return result;
}

void sdma::attachIterationNotes(Diagnostic &diag, Location loc,
                                StringRef what) {
  for (const LoopIteration &it : getIterations(loc))
    diag.attachNote(it.loop) << what
                             << " is from the iteration where this loop's "
                                "index is "
                             << it.index;
}
