//===- Simulator.h - the CPU reference executor of a plan -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every (rank, engine) queue runs its commands in order; queues run
// concurrently. A poll blocks its queue until the flag reaches the value; a
// notify adds one to a flag once everything before it on its queue is done.
//
// Deterministic mode runs each queue as far as it can, in turn. Adversarial
// mode picks, at every step, a random queue that can move, and splits each
// data command into a start (reads its sources) and a finish (writes its
// destinations) with other queues' steps in between: a schedule whose
// ordering leaves a race then produces wrong bytes for some seeds.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_SIMULATOR_H
#define SDMA_RUNTIME_SIMULATOR_H

#include "sdma/runtime/HostMemory.h"

namespace sdma::rt {

struct SimulatorOptions {
  bool adversarial = false;
  uint64_t seed = 0;
  /// Steps after which a run that has not finished is reported stuck.
  uint64_t maxSteps = uint64_t(1) << 32;
  /// The memory budget the run's own allocations (adversarial mode's
  /// staging copies) and `memory` together must fit.
  MemoryBudget budget;
};

/// Runs `plan` on `memory` (whose flags it resets first). Returns false and
/// sets `error` if a queue waits forever (naming the rank, engine, command,
/// flag, value awaited and value seen) or the completion counts are wrong,
/// and, before running, if the plan breaks the loader's rules
/// (Plan::check), `memory` has another layout, or staging would exceed the
/// budget. A command whose slices are identical (Command::isNoOp) moves
/// nothing; no copy ever runs between overlapping bytes.
bool simulate(const Plan &plan, HostMemory &memory,
              const SimulatorOptions &options, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_SIMULATOR_H
