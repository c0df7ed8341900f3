//===- ScheduleVerifier.h - what sdma-verify proves --------------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The proof behind sdma-verify, callable from passes that validate their own
// output (translation validation) and from tools. On a flat schedule, at the
// schedule level (fence, signal/wait, barrier) or the engine level (notify,
// poll), it proves:
//  1. deadlock freedom: every wait and poll is released, no cycle of waits;
//  2. race freedom: no two data ops that touch overlapping chunks of one
//     buffer on one rank, at least one writing, are unordered;
//  3. the postcondition of the declared collective, by symbolic execution.
// The order is ScheduleGraph's (see there); every backend implements it.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_ANALYSIS_SCHEDULEVERIFIER_H
#define SDMA_ANALYSIS_SCHEDULEVERIFIER_H

#include "sdma/IR/SdmaOps.h"

#include <optional>
#include <string>

namespace sdma {

struct VerifyOptions {
  /// Refuse (with an error) schedules whose proof would need more memory;
  /// 0: getDefaultMemoryBudget().
  uint64_t memoryBudget = 0;
};

/// What a successful verification proved.
struct VerifyReport {
  int64_t ranks = 0;
  int64_t dataOps = 0;
  /// Waits matched with signals, and polls released by notifies.
  int64_t waits = 0;
  int64_t polls = 0;
  /// The declared collective, if any ("all_gather"), and its buffers.
  std::optional<std::string> collective;
  /// The operator a reduction's outputs combine with ("sum"); unset for
  /// other collectives (and for one rank, which combines nothing).
  std::optional<std::string> reduction;
  /// One line: "proved for 8 ranks: 56 data ops race-free, 7 waits ...".
  std::string summary(ScheduleOp schedule) const;
};

/// Proves `schedule` (see above). Failures are reported as diagnostics at
/// the offending ops.
mlir::FailureOr<VerifyReport> verifySchedule(ScheduleOp schedule,
                                             const VerifyOptions &options = {});

/// True when `schedule` verifies; its diagnostics are swallowed and the
/// first error's message is stored in `reason` (if given).
bool scheduleVerifies(ScheduleOp schedule, std::string *reason = nullptr,
                      const VerifyOptions &options = {});

/// The default budget: SDMA_MEMORY_BUDGET if set (bytes, K/M/G/T suffix,
/// as for the runtime), else half of the physical memory of this machine.
uint64_t getDefaultMemoryBudget();

} // namespace sdma

#endif // SDMA_ANALYSIS_SCHEDULEVERIFIER_H
