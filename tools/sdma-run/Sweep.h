//===- Sweep.h - sdma-run's size sweep and nccl-tests table ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// For each message size: choose the executor (one backend, or auto's
// per-size pick by the NVIDIA cost model), run it through rt::runAndCheck,
// and print one nccl-tests row.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TOOLS_SDMARUN_SWEEP_H
#define SDMA_TOOLS_SDMARUN_SWEEP_H

#include "Progress.h"
#include "sdma/runtime/BackendRegistry.h"
#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/NvTimingModel.h"

#include <memory>

namespace sdma::run {

/// Which executor runs a size.
class ExecutorChoice {
public:
  virtual ~ExecutorChoice();
  /// The executor for `chunkBytes`; `pick` receives the table's pick
  /// column (empty without one). Null with `error` on failure.
  virtual rt::Executor *forChunk(size_t chunkBytes, std::string &pick,
                                 std::string &error) = 0;
  /// Whether the table has a pick column.
  virtual bool picks() const { return false; }
};

/// Always `executor`.
std::unique_ptr<ExecutorChoice>
fixedChoice(std::unique_ptr<rt::Executor> executor);

/// --backend=auto: per size, the (variant, executor) the NVIDIA cost model
/// predicts fastest among `candidates`, run on the GPU where `fallback` is
/// the GPU's load/store executor (`onGpu`), else shown and run on
/// `fallback` (the simulator).
std::unique_ptr<ExecutorChoice>
autoChoice(std::unique_ptr<rt::Executor> fallback, bool onGpu,
           rt::NvTimingProfile profile,
           std::vector<std::pair<std::string, rt::CompiledSchedule>> candidates,
           const rt::ExecutorOptions &options, int devices);

struct SweepOptions {
  uint64_t minBytes = 1024, maxBytes = 1 << 20;
  unsigned factor = 4, iters = 5;
  /// The backend's table entry: how its runs are checked and timed.
  const rt::BackendInfo *backend = nullptr;
  /// Chunk sizes are rounded down to a multiple of this.
  size_t chunkAlign = 1;
  /// An all-to-allv's run-time counts.
  rt::CountPattern counts;
  /// A plan built for host-known counts: the count tables at the end
  /// (rt::RunCheckOptions::hostTables).
  std::vector<std::pair<int, std::vector<std::vector<int64_t>>>> hostTables;
  bool hostTablesOnActual = true;
};

/// Prints the column header and one row per size; returns the exit status
/// (0 all correct, 1 an error, 3 wrong bytes).
int sweep(ExecutorChoice &choice, const rt::Plan &plan,
          const SweepOptions &options, ProgressLines &progress);

} // namespace sdma::run

#endif // SDMA_TOOLS_SDMARUN_SWEEP_H
