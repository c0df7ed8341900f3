//===- Passes.h - sdma transformation passes --------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TRANSFORMS_PASSES_H
#define SDMA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "sdma/IR/SdmaOps.h"

#include <map>
#include <string>
#include <vector>

namespace sdma {

/// Count tables' contents by buffer name: [rank][entry].
using CountTables = std::map<std::string, std::vector<std::vector<int64_t>>>;

/// sdma-resolve-counts on one flat, proved schedule: `initial` is what the
/// count tables hold at the start (a table not named starts at 0), `final`
/// receives what every count table holds at the end.
mlir::LogicalResult resolveCounts(ScheduleOp schedule,
                                  const CountTables &initial,
                                  CountTables &final);

#define GEN_PASS_DECL
#include "sdma/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sdma/Transforms/Passes.h.inc"

} // namespace sdma

#endif // SDMA_TRANSFORMS_PASSES_H
