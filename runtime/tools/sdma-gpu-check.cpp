//===- sdma-gpu-check.cpp - run load/store programs on the GPU, check all
//--===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-gpu-check [--sizes=1K,4K,...] [--iters=N] [--timeout-ms=N]
//                       [--devices=0,1,...]
//                       [--executors=ldst,ldst-staged,ce,ce-batch,ce-graph]
//                       NAME.hip...
//
// Executors: ldst runs the load/store program (ldst-staged: compiled with
// SDMA_STAGED_OPS, CudaOptions::stagedOps); ce, ce-batch and ce-graph
// run the DMA plan NAME.json, and NAME.{pcpy,bcst,swap,b2b}.json where
// present, on CUDA streams (plain, batched copies, replayed CUDA graph);
// ce-value waits on flags instead of events (the path for a signaller in
// another process); a ce name with -k (ce-k, ce-graph-k, ...) issues each
// run's device-local copies as one kernel (CeOptions::localCopyKernel).
// Default: ldst. A copy-engine run that times out ends
// the tool (exit 1) after its report.
// NAME.table.hip (make-gpu-programs.sh: the table kernel of NAME.hip's
// schedule) runs on the load/store kinds only, against NAME.json;
// ldst-staged runs table kernels only (it changes nothing else).
// For every load/store program (with its plan NAME.json beside it): compile
// it with NVRTC (or take it from the cache), and for every size (output
// bytes per rank) run it on GPU 0 with all ranks sharing the GPU, then
// compare every byte of every buffer of every rank with what the CPU
// simulator computes from the plan, and every output byte with what the
// collective requires. Then time `iters` runs with CUDA events. Prints one
// line per (program, size); exit status 1 if any byte differs or a run
// fails. Also reports the warm (cache-hit) preparation time and the host
// time per launch.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/RunCheck.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace sdma::rt;

static bool parseSize(const std::string &text, uint64_t &bytes) {
  std::optional<uint64_t> v = MemoryBudget::parseBytes(text);
  if (!v)
    return false;
  bytes = *v;
  return true;
}

static bool parseInt(const std::string &text, long lo, long hi, long &value) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < lo || v > hi)
    return false;
  value = v;
  return true;
}

static const char *kUsage =
    "usage: sdma-gpu-check [options] NAME.hip...\n"
    "Runs each load/store program (and its plan NAME.json) on the GPU at\n"
    "every size and compares every byte with the CPU simulator.\n"
    "  --sizes=N,...          output bytes per rank, K/M suffixes (default\n"
    "                         1K,4K,...,64M)\n"
    "  --iters=N              timed runs per size (default 20)\n"
    "  --timeout-ms=N         a run that takes longer fails (default 10000)\n"
    "  --devices=I,...        GPUs to spread the ranks over (default 0)\n"
    "  --executors=E,...      ldst, ldst-staged, ce, ce-batch, ce-graph,\n"
    "                         ce-value (flags + cuStreamWaitValue64 instead\n"
    "                         of events: the cross-process path); a ce\n"
    "                         name + -k: device-local copies as one kernel\n"
    "                         per run (ce-k, ce-graph-k, ...)\n"
    "                         (default ldst)\n";

namespace {
struct Stats {
  int failures = 0;
  std::vector<double> warmPrepareMs, launchUs;
};

/// The DMA plans of a program: NAME.json (the default variant) and the
/// NAME.VARIANT.json beside it (make-gpu-programs.sh writes bcst, swap, b2b).
std::vector<std::pair<std::string, std::string>>
variantPlans(const std::string &planPath) {
  std::vector<std::pair<std::string, std::string>> paths{{"pcpy", planPath}};
  std::string stem = planPath.substr(0, planPath.size() - 5);
  for (const char *variant : {"pcpy", "bcst", "swap", "b2b"}) {
    std::string path = stem + "." + variant + ".json";
    if (std::FILE *f = std::fopen(path.c_str(), "r")) {
      std::fclose(f);
      paths.emplace_back(variant, path);
    }
  }
  return paths;
}

/// The tool's executor names as a backend and its options.
/// A copy-engine name ending in "-k" (ce-k, ce-graph-k, ...) also issues
/// each run's device-local copies as one kernel (CeOptions::localCopyKernel).
bool isLocalKernelName(const std::string &name) {
  return name.size() >= 4 && name.rfind("ce", 0) == 0 &&
         name.compare(name.size() - 2, 2, "-k") == 0;
}

std::string configure(const std::string &name, ExecutorOptions &options) {
  bool k = isLocalKernelName(name);
  std::string kind = k ? name.substr(0, name.size() - 2) : name;
  options.cuda.stagedOps = kind == "ldst-staged";
  options.ce = CeOptions();
  options.ce.batch = kind == "ce-batch";
  options.ce.graph = kind == "ce-graph";
  options.ce.valueWaits = kind == "ce-value";
  options.ce.localCopyKernel = k;
  return kind.rfind("ldst", 0) == 0 ? "cuda-ldst" : "cuda-ce";
}

/// Runs `executor` over every size: each run checked byte for byte against
/// the simulator and the collective, then timed, then checked again.
void checkSizes(const std::string &path, const std::string &kind,
                const Plan &plan, Executor &executor,
                const std::vector<uint64_t> &sizes, int iters,
                const MemoryBudget &budget, Stats &stats) {
  int64_t outChunks =
      plan.buffers[plan.collective ? plan.collective->output : 0].chunks;
  RunCheckOptions options;
  options.timedRuns = iters;
  options.checkAfterTiming = true;
  options.launches = 50;
  options.budget = budget;
  for (uint64_t size : sizes) {
    uint64_t chunk = std::max<uint64_t>(1, size / outChunks);
    RunCheckResult result;
    std::string error;
    if (!runAndCheck(executor, plan, chunk, options, result, error)) {
      std::printf("FAIL %s %s size %llu: %s\n", kind.c_str(), path.c_str(),
                  (unsigned long long)size, error.c_str());
      ++stats.failures;
      if (executor.stuck())
        return;
      continue;
    }
    stats.launchUs.push_back(result.launchUs);
    bool ok = result.wrongBytes() == 0;
    stats.failures += !ok;
    // Bytes differing from the simulator are counted apart from the
    // collective's own check of the outputs.
    uint64_t wrong = result.check.wrongBytes - result.differing;
    std::printf("%s %-13s %-28s ranks %2d gpus %d size %9llu chunk %8llu "
                "gpu_us %9.2f host_launch_us %6.2f bytes %llu "
                "differ_from_sim %llu wrong %llu wrong_after_timing %llu%s%s\n",
                ok ? "ok  " : "FAIL", kind.c_str(), plan.schedule.c_str(),
                plan.ranks, executor.deviceCount(),
                (unsigned long long)(chunk * outChunks),
                (unsigned long long)chunk, result.medianUs(), result.launchUs,
                (unsigned long long)result.compared,
                (unsigned long long)result.differing, (unsigned long long)wrong,
                (unsigned long long)result.again.wrongBytes,
                result.check.firstWrong.empty() ? "" : " first: ",
                result.check.firstWrong.c_str());
    std::fflush(stdout);
  }
}

/// A run that timed out leaves streams the driver cannot drain, and later
/// work in the same context can block behind them: the tool reports and
/// exits at once.
void exitIfStuck(const Executor &executor, const std::string &kind,
                 const std::string &path, const Stats &stats) {
  if (!executor.stuck())
    return;
  std::printf("sdma-gpu-check: stopping: a %s run of %s did not finish and "
              "its streams cannot be drained; exiting without touching the "
              "GPU again (%d failures so far)\n",
              kind.c_str(), path.c_str(), stats.failures);
  std::fflush(stdout);
  std::_Exit(1);
}

/// Checks one program (NAME.hip and its plans) on every executor kind.
void checkProgram(const std::string &path,
                  const std::vector<std::string> &executors,
                  ExecutorOptions options, const std::vector<uint64_t> &sizes,
                  int iters, const MemoryBudget &budget, Stats &stats) {
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::load(path, error);
  // NAME.table.hip: the table kernel of NAME.hip's schedule (its plans are
  // NAME's, already run with NAME.hip: only the load/store kinds run).
  static const std::string kTable = ".table.hip";
  bool tableCopy =
      path.size() > kTable.size() &&
      path.compare(path.size() - kTable.size(), kTable.size(), kTable) == 0;
  std::string planPath =
      path.substr(0, path.size() - (tableCopy ? kTable.size() : 4)) + ".json";
  // A reduction's program has no DMA plan (no NAME.json): its layout.
  bool planless = program && program->collective &&
                  program->collective->isReduction() &&
                  !std::ifstream(planPath).good();
  std::optional<Plan> plan = !program   ? std::nullopt
                             : planless ? std::optional<Plan>(program->layout())
                                        : Plan::load(planPath, error);
  if (!program || !plan) {
    std::printf("FAIL %s: %s\n", path.c_str(), error.c_str());
    ++stats.failures;
    return;
  }
  for (const std::string &kind : executors) {
    // SDMA_STAGED_OPS changes the table kernel only.
    if ((tableCopy && kind.rfind("ldst", 0) != 0) ||
        (kind == "ldst-staged" && program->specialised))
      continue;
    std::string backend = configure(kind, options);
    if (backend == "cuda-ldst") {
      CompiledSchedule compiled{*plan, program, std::nullopt};
      auto executor = createExecutor(backend, compiled, options, error);
      if (!executor) {
        std::printf("FAIL %s: %s\n", path.c_str(), error.c_str());
        ++stats.failures;
        continue;
      }
      const CompileInfo &info = *executor->compileInfo();
      std::printf("kernel %s: %s%s, %.1f ms compile, %.2f ms load, %s, %d "
                  "registers, %d blocks/SM\n",
                  path.c_str(), info.cacheHit ? "cache hit" : "compiled",
                  info.cacheWasCorrupt ? " (cache entry was corrupt: rebuilt)"
                                       : "",
                  info.compileMs, info.loadMs,
                  program->specialised ? "specialised" : "table",
                  info.registers, info.blocksPerSM);
      // Warm preparation: a second executor finds the kernel in the cache.
      auto start = std::chrono::steady_clock::now();
      auto warm = createExecutor(backend, compiled, options, error);
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
      if (warm && warm->compileInfo()->cacheHit)
        stats.warmPrepareMs.push_back(ms);
      checkSizes(path, kind, *plan, *executor, sizes, iters, budget, stats);
      continue;
    }
    if (planless) {
      std::printf("n/a  %s %s: it reduces; copy engines cannot add (no DMA "
                  "plan)\n",
                  kind.c_str(), path.c_str());
      continue;
    }
    // The copy engines run each DMA variant's plan; the row names it.
    for (const auto &[variant, variantPath] : variantPlans(planPath)) {
      std::optional<Plan> variantPlan = Plan::load(variantPath, error);
      std::unique_ptr<Executor> executor;
      if (variantPlan)
        executor = createExecutor(
            backend, CompiledSchedule{*variantPlan, std::nullopt, std::nullopt},
            options, error);
      if (!executor) {
        std::printf("FAIL %s %s: %s\n", kind.c_str(), variantPath.c_str(),
                    error.c_str());
        ++stats.failures;
        continue;
      }
      checkSizes(variantPath, kind + "/" + variant, *variantPlan, *executor,
                 sizes, iters, budget, stats);
      exitIfStuck(*executor, kind, variantPath, stats);
    }
  }
}
} // namespace

int main(int argc, char **argv) {
  // Each line out as it is known, also when a run hangs and is killed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<uint64_t> sizes;
  int iters = 20;
  uint64_t timeoutMs = 10000;
  std::vector<int> devices;
  std::vector<std::string> programs, executors;
  MemoryBudget budget;
  if (int status =
          tool::handleCommon(argc, argv, "sdma-gpu-check", kUsage, budget);
      status >= 0)
    return status;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int status = 0;
    long value = 0;
    if (tool::memoryBudgetOption("sdma-gpu-check", arg, budget, status)) {
      if (status)
        return status;
    } else if (arg.rfind("--sizes=", 0) == 0) {
      std::stringstream list(arg.substr(8));
      std::string item;
      while (std::getline(list, item, ',')) {
        uint64_t bytes;
        if (!parseSize(item, bytes)) {
          std::fprintf(stderr, "sdma-gpu-check: bad size '%.64s'\n",
                       item.c_str());
          return tool::kUsageError;
        }
        sizes.push_back(bytes);
      }
    } else if (arg.rfind("--iters=", 0) == 0) {
      if (!parseInt(arg.substr(8), 1, 1 << 20, value)) {
        std::fprintf(stderr, "sdma-gpu-check: bad --iters '%.64s'\n",
                     arg.c_str() + 8);
        return tool::kUsageError;
      }
      iters = static_cast<int>(value);
    } else if (arg.rfind("--devices=", 0) == 0) {
      std::stringstream list(arg.substr(10));
      std::string item;
      while (std::getline(list, item, ',')) {
        if (!parseInt(item, 0, 1 << 16, value)) {
          std::fprintf(stderr, "sdma-gpu-check: bad device '%.64s'\n",
                       item.c_str());
          return tool::kUsageError;
        }
        devices.push_back(static_cast<int>(value));
      }
    } else if (arg.rfind("--executors=", 0) == 0) {
      std::stringstream list(arg.substr(12));
      std::string item;
      while (std::getline(list, item, ',')) {
        std::string base =
            isLocalKernelName(item) ? item.substr(0, item.size() - 2) : item;
        if (base != "ldst" && base != "ldst-staged" && base != "ce" &&
            base != "ce-batch" && base != "ce-graph" && base != "ce-value") {
          std::fprintf(stderr,
                       "sdma-gpu-check: unknown executor '%.64s' (ldst, "
                       "ldst-staged, ce, ce-batch, ce-graph, ce-value; a ce "
                       "one with -k: device-local copies as one kernel)\n",
                       item.c_str());
          return tool::kUsageError;
        }
        executors.push_back(item);
      }
    } else if (arg.rfind("--timeout-ms=", 0) == 0) {
      if (!parseInt(arg.substr(13), 1, 1l << 40, value)) {
        std::fprintf(stderr, "sdma-gpu-check: bad --timeout-ms '%.64s'\n",
                     arg.c_str() + 13);
        return tool::kUsageError;
      }
      timeoutMs = static_cast<uint64_t>(value);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return tool::unknownOption("sdma-gpu-check", arg);
    } else {
      programs.push_back(arg);
    }
  }
  if (executors.empty())
    executors.push_back("ldst");
  if (sizes.empty())
    for (uint64_t s = 1024; s <= (64ull << 20); s *= 4)
      sizes.push_back(s);

  Stats stats;
  ExecutorOptions options;
  options.cuda.timeoutNs = timeoutMs * 1000000ull;
  options.cuda.devices = devices;
  for (const std::string &path : programs)
    checkProgram(path, executors, options, sizes, iters, budget, stats);
  std::printf("warm prepare (cache hit, create to ready): median %.3f ms over "
              "%zu programs\n",
              median(stats.warmPrepareMs), stats.warmPrepareMs.size());
  std::printf("host time per launch: median %.2f us over %zu runs\n",
              median(stats.launchUs), stats.launchUs.size());
  std::printf("%s: %d failures\n", stats.failures ? "FAILED" : "PASSED",
              stats.failures);
  return stats.failures ? 1 : 0;
}
