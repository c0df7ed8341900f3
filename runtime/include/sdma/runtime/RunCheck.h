//===- RunCheck.h - fill, run, check and time a compiled schedule -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The one chain every tool, the bench and the example run an Executor
// through: fill every rank's inputs with the rank/buffer pattern, run,
// compare every byte with the CPU reference simulator and every output
// byte with what the collective requires, time, and check again after
// timing.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_RUNCHECK_H
#define SDMA_RUNTIME_RUNCHECK_H

#include "sdma/runtime/BackendRegistry.h"

namespace sdma::rt {

struct RunCheckOptions {
  /// Checked runs before timing: each fills, uploads, runs, downloads and
  /// checks; the first wrong one ends the checking.
  int checkedRuns = 1;
  /// Timed runs (Executor::time); 0: none.
  int timedRuns = 5;
  /// Record the host time of each checked run's run() as its time (for
  /// host executors, whose separate timed runs would repeat the same work).
  bool timeCheckedRuns = false;
  /// Compare every byte of every buffer with the reference simulator's run
  /// of the plan (besides the collective's outputs).
  bool compareWithReference = true;
  /// Download and check the outputs again after timing (skipped for an
  /// in-place collective: running it again permutes its data again).
  bool checkAfterTiming = false;
  /// Also measure the host time of `launches` launches issued back to back
  /// (then waited for); 0: not measured.
  int launches = 0;
  /// Host memory for the executor's bytes and the reference together.
  MemoryBudget budget;
  /// An all-to-allv's run-time counts.
  CountPattern counts;
  /// A plan built for counts the host knows (sdma-resolve-counts): the
  /// count tables' contents at the end, [buffer] -> [rank][entry], which
  /// the host writes after each run (the plan moves rows, not counts).
  std::vector<std::pair<int, std::vector<std::vector<int64_t>>>> hostTables;
  /// Also write them after the executor's runs (false: the executor runs
  /// the load/store kernel, which moves the counts itself, and only the
  /// reference's run of the plan gets them).
  bool hostTablesOnActual = true;
};

/// Writes `tables` into `memory` (RunCheckOptions::hostTables).
void writeHostTables(
    const std::vector<std::pair<int, std::vector<std::vector<int64_t>>>>
        &tables,
    HostMemory &memory);

struct RunCheckResult {
  /// The checked runs' verdict: outputs plus bytes differing from the
  /// reference (firstWrong says which, in words).
  CheckResult check;
  /// Bytes that differ from the reference, and bytes compared.
  uint64_t differing = 0, compared = 0;
  /// After timing (checkAfterTiming).
  CheckResult again;
  std::vector<double> microseconds;
  /// Host microseconds per launch (RunCheckOptions::launches).
  double launchUs = 0;
  /// The reference simulator could not run the plan (the executor was then
  /// run anyway, to see that it fails cleanly too): its reason.
  std::string referenceError;

  uint64_t wrongBytes() const { return check.wrongBytes + again.wrongBytes; }
  double medianUs() const { return median(microseconds); }
};

/// Runs `executor` at `chunkBytes` through the chain above; `plan` is the
/// compiled plan (the reference and the checks use it). False with `error`
/// where the executor or an allocation fails; wrong bytes are a result, not
/// an error.
bool runAndCheck(Executor &executor, const Plan &plan, size_t chunkBytes,
                 const RunCheckOptions &options, RunCheckResult &result,
                 std::string &error);

/// nccl-tests' bus-bandwidth factor for a collective over `ranks` ranks.
double busFactor(const std::string &collective, int ranks);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_RUNCHECK_H
