//===- RunCheck.cpp - fill, run, check and time a compiled schedule -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/RunCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace sdma::rt;

double sdma::rt::median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double sdma::rt::busFactor(const std::string &collective, int ranks) {
  if (collective == "broadcast" || collective == "reduce")
    return 1.0;
  if (collective == "all_reduce") // nccl-tests: 2 (n - 1) / n
    return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 1.0;
  return ranks > 1 ? double(ranks - 1) / ranks : 1.0;
}

void sdma::rt::writeHostTables(
    const std::vector<std::pair<int, std::vector<std::vector<int64_t>>>>
        &tables,
    HostMemory &memory) {
  for (const auto &[buffer, ranks] : tables)
    for (size_t r = 0; r < ranks.size(); ++r) {
      size_t bytes = std::min(memory.bufferBytes(int(r), buffer),
                              ranks[r].size() * sizeof(int64_t));
      std::memcpy(memory.buffer(int(r), buffer), ranks[r].data(), bytes);
    }
}

namespace {
/// Adds the bytes that differ from the reference to `check`.
void addDifferences(uint64_t differ, CheckResult &check) {
  if (!differ)
    return;
  check.wrongBytes += differ;
  check.firstWrong = std::to_string(differ) +
                     " bytes differ from the reference simulator" +
                     (check.firstWrong.empty() ? "" : "; " + check.firstWrong);
}
} // namespace

bool sdma::rt::runAndCheck(Executor &executor, const Plan &plan,
                           size_t chunkBytes, const RunCheckOptions &options,
                           RunCheckResult &result, std::string &error) {
  result = RunCheckResult();
  // Two copies of every buffer on the host (the executor's bytes and the
  // reference), each from what the budget has left.
  MemoryBudget left = options.budget;
  auto allocate = [&]() -> std::optional<HostMemory> {
    std::optional<HostMemory> memory =
        HostMemory::create(plan, chunkBytes, error, left);
    if (memory)
      left.bytes -= memory->totalBytes();
    return memory;
  };
  std::optional<HostMemory> actual = allocate();
  if (!actual)
    return false;
  std::optional<HostMemory> reference;
  // A load/store program without a DMA plan has no queues for the
  // reference simulator: its outputs are checked against the collective.
  if (options.compareWithReference && plan.hasQueues) {
    reference = allocate();
    if (!reference)
      return false;
    fillInputs(plan, *reference, options.counts);
    bool simulated = simulate(plan, *reference, {}, error);
    if (simulated)
      writeHostTables(options.hostTables, *reference);
    if (!simulated) {
      // Still run the executor: it must fail cleanly too.
      result.referenceError = error;
      fillInputs(plan, *actual, options.counts);
      std::string executorError;
      bool ran = executor.prepare(chunkBytes, executorError) &&
                 executor.upload(*actual, executorError) &&
                 executor.run(executorError);
      error = "reference simulator: " + result.referenceError + "; " +
              executor.name() + ": " +
              (ran ? "ran although the simulator says it cannot complete"
                   : executorError);
      return false;
    }
  }
  if (!executor.prepare(chunkBytes, error))
    return false;
  // Host executors run over `actual` itself: no copies in or out.
  bool inPlace = executor.runsInPlace();
  for (int i = 0; i < std::max(1, options.checkedRuns); ++i) {
    fillInputs(plan, *actual, options.counts);
    if (!inPlace && !executor.upload(*actual, error))
      return false;
    auto start = std::chrono::steady_clock::now();
    if (inPlace ? !executor.runInPlace(*actual, error) : !executor.run(error))
      return false;
    if (options.timeCheckedRuns)
      result.microseconds.push_back(
          std::chrono::duration<double, std::micro>(
              std::chrono::steady_clock::now() - start)
              .count());
    if (!inPlace && !executor.download(*actual, error))
      return false;
    if (options.hostTablesOnActual)
      writeHostTables(options.hostTables, *actual);
    result.check = checkOutputs(plan, *actual);
    if (reference) {
      result.differing =
          differingBytes(plan, *actual, *reference, &result.compared);
      addDifferences(result.differing, result.check);
    }
    if (result.check.wrongBytes)
      return true;
  }
  // Timed runs use the executor's own memory: for one that ran in place,
  // it first gets what a GPU executor would hold now.
  if (options.timedRuns > 0 &&
      ((inPlace && !executor.modelTimed() &&
        !executor.upload(*actual, error)) ||
       !executor.time(options.timedRuns, result.microseconds, error)))
    return false;
  bool inPlaceCollective =
      plan.collective && plan.collective->input == plan.collective->output;
  if (options.checkAfterTiming && options.timedRuns > 0 && !inPlaceCollective) {
    if (!executor.download(*actual, error))
      return false;
    if (options.hostTablesOnActual)
      writeHostTables(options.hostTables, *actual);
    result.again = checkOutputs(plan, *actual);
  }
  if (options.launches > 0) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.launches; ++i)
      if (!executor.launch(error))
        return false;
    result.launchUs = std::chrono::duration<double, std::micro>(
                          std::chrono::steady_clock::now() - start)
                          .count() /
                      options.launches;
    if (!executor.wait(error))
      return false;
  }
  return true;
}
