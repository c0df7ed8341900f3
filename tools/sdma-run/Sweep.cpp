//===- Sweep.cpp - sdma-run's size sweep and nccl-tests table -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "Sweep.h"

#include "sdma/runtime/RunCheck.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace sdma;
using namespace sdma::run;

ExecutorChoice::~ExecutorChoice() = default;

namespace {
class FixedChoice : public ExecutorChoice {
public:
  explicit FixedChoice(std::unique_ptr<rt::Executor> executor)
      : executor_(std::move(executor)) {}
  rt::Executor *forChunk(size_t, std::string &, std::string &) override {
    return executor_.get();
  }

private:
  std::unique_ptr<rt::Executor> executor_;
};

class AutoChoice : public ExecutorChoice {
public:
  AutoChoice(
      std::unique_ptr<rt::Executor> fallback, bool onGpu,
      rt::NvTimingProfile profile,
      std::vector<std::pair<std::string, rt::CompiledSchedule>> candidates,
      const rt::ExecutorOptions &options, int devices)
      : fallback_(std::move(fallback)), onGpu_(onGpu),
        profile_(std::move(profile)), candidates_(std::move(candidates)),
        options_(options), devices_(devices) {}
  bool picks() const override { return true; }

  rt::Executor *forChunk(size_t chunk, std::string &pickText,
                         std::string &error) override {
    std::vector<const rt::Plan *> plans;
    for (const auto &candidate : candidates_)
      plans.push_back(&candidate.second.plan);
    std::optional<rt::NvTimingProfile::Pick> pick =
        profile_.pickFastest(plans, chunk, devices_);
    if (!pick)
      return fallback_.get();
    bool ldst = pick->executor == rt::NvExecutor::Ldst;
    pickText = std::string("  ") + rt::nvExecutorName(pick->executor) +
               (ldst || candidates_.size() == 1
                    ? ""
                    : "/" + candidates_[pick->candidate].first) +
               "(" + llvm::formatv("{0:F1}", pick->microseconds).str() + ")";
    if (!onGpu_ || ldst)
      return fallback_.get();
    // The copy-engine executor of this (variant, mode), made once.
    std::unique_ptr<rt::Executor> &slot =
        ce_[{pick->candidate, pick->executor}];
    if (!slot) {
      rt::ExecutorOptions options = options_;
      options.ce.batch = pick->executor == rt::NvExecutor::CeBatch;
      options.ce.graph = pick->executor == rt::NvExecutor::CeGraph;
      slot = rt::createExecutor("cuda-ce", candidates_[pick->candidate].second,
                                options, error);
    }
    return slot.get();
  }

private:
  std::unique_ptr<rt::Executor> fallback_;
  bool onGpu_;
  rt::NvTimingProfile profile_;
  std::vector<std::pair<std::string, rt::CompiledSchedule>> candidates_;
  rt::ExecutorOptions options_;
  int devices_;
  std::map<std::pair<size_t, rt::NvExecutor>, std::unique_ptr<rt::Executor>>
      ce_;
};

/// "16 MiB", "1 KiB", "1000 B": a size in progress lines.
std::string formatSize(uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}
} // namespace

std::unique_ptr<ExecutorChoice>
sdma::run::fixedChoice(std::unique_ptr<rt::Executor> executor) {
  return std::make_unique<FixedChoice>(std::move(executor));
}

std::unique_ptr<ExecutorChoice> sdma::run::autoChoice(
    std::unique_ptr<rt::Executor> fallback, bool onGpu,
    rt::NvTimingProfile profile,
    std::vector<std::pair<std::string, rt::CompiledSchedule>> candidates,
    const rt::ExecutorOptions &options, int devices) {
  return std::make_unique<AutoChoice>(std::move(fallback), onGpu,
                                      std::move(profile), std::move(candidates),
                                      options, devices);
}

int sdma::run::sweep(ExecutorChoice &choice, const rt::Plan &plan,
                     const SweepOptions &options, ProgressLines &progress) {
  std::string kind = plan.collective ? plan.collective->kind : "";
  int64_t outChunks =
      plan.buffers[plan.collective ? plan.collective->output : 0].chunks;
  llvm::outs() << llvm::format("#%11s %11s %10s %12s %11s %11s %8s", "size",
                               "count", "chunk", "time(us)", "algbw(GB/s)",
                               "busbw(GB/s)", "#wrong")
               << (choice.picks() ? "  pick(predicted us)" : "") << "\n";
  llvm::outs().flush();
  // GPU backends: one checked run, then timed runs. Host backends: every
  // run checked (and, unless a model times them, timed by the host clock);
  // the reference simulator (sim, and sdma-sim's bytes) is not compared
  // with itself.
  const rt::BackendInfo &backend = *options.backend;
  rt::RunCheckOptions run;
  run.counts = options.counts;
  run.hostTables = options.hostTables;
  run.hostTablesOnActual = options.hostTablesOnActual;
  run.checkedRuns = backend.checkEveryRun ? options.iters : 1;
  run.timeCheckedRuns = !backend.gpu && !backend.modelTimed;
  run.timedRuns = run.timeCheckedRuns  ? 0
                  : backend.modelTimed ? 1
                                       : options.iters;
  run.compareWithReference =
      backend.name != "sim" && backend.name != "sdma-sim";
  bool anyWrong = false;
  for (uint64_t size = options.minBytes; size <= options.maxBytes;
       size *= options.factor) {
    uint64_t chunk = std::max<uint64_t>(1, size / outChunks);
    size_t align = options.chunkAlign;
    chunk = std::max<uint64_t>(align, chunk - chunk % align);
    uint64_t actual = chunk * outChunks;
    // nccl-tests' count: elements of the output's type (4-byte words when
    // untyped).
    size_t elementBytes = 4;
    if (plan.collective && !plan.buffers[plan.collective->output].type.empty())
      elementBytes = plan.buffers[plan.collective->output].elementBytes();
    std::string pick, error;
    rt::Executor *executor = choice.forChunk(chunk, pick, error);
    if (executor)
      progress.step("running " + formatSize(size) + " on " + executor->name());
    rt::RunCheckResult result;
    if (!executor ||
        !rt::runAndCheck(*executor, plan, chunk, run, result, error)) {
      llvm::errs() << "sdma-run: error: " << error << "\n";
      return 1;
    }
    // A wrong checked run ends the checking before any timing.
    double us = result.microseconds.empty() ? 0 : result.medianUs();
    double algbw = us > 0 ? actual / (us * 1e3) : 0;
    const rt::CheckResult &check = result.check;
    llvm::outs() << llvm::format(
                        " %11llu %11llu %10llu %12.2f %11.3f %11.3f %8s",
                        (unsigned long long)actual,
                        (unsigned long long)(actual / elementBytes),
                        (unsigned long long)chunk, us, algbw,
                        algbw * rt::busFactor(kind, plan.ranks),
                        kind.empty() && !check.wrongBytes
                            ? "n/a"
                            : std::to_string(check.wrongBytes).c_str())
                 << pick << "\n";
    llvm::outs().flush(); // one row at a time, also into a pipe
    if (check.wrongBytes) {
      anyWrong = true;
      llvm::errs() << "sdma-run: wrong output at size " << actual << ": "
                   << check.firstWrong << "\n";
    }
    if (size > options.maxBytes / options.factor)
      break;
  }
  return anyWrong ? 3 : 0;
}
