//===- sdma-sim.cpp - load, validate and simulate a plan ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-sim PLAN.json [--chunk-bytes=N] [--adversarial] [--seeds=N]
//                           [--check-only]
// Loads and validates the plan (runtime side of the plan contract), fills
// the collective's input with a pattern, runs the plan on the CPU simulator
// once (or once per seed in adversarial mode) and checks every output byte.
// Exit status: 0 all runs correct, 1 a bad plan, a stuck run or a run
// beyond the memory budget, 2 wrong bytes in some run or a command-line
// mistake.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/Simulator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace sdma::rt;

static bool parseUnsigned(const char *text, uint64_t &value) {
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-')
    return false;
  value = v;
  return true;
}

static const char *kUsage =
    "usage: sdma-sim PLAN.json [options]\n"
    "Loads and validates a plan (sdma-translate --sdma-to-plan), runs it on\n"
    "the CPU reference simulator and checks every output byte.\n"
    "  --chunk-bytes=N        bytes per chunk, 1..2^30 (default 64)\n"
    "  --adversarial          random queue order, reads and writes split\n"
    "                         (default: off, each queue as far as it goes)\n"
    "  --seeds=N              runs, one per seed (default 1)\n"
    "  --check-only           load and validate only (default: off)\n";

int main(int argc, char **argv) {
  const char *path = nullptr;
  uint64_t chunkBytes = 64, seeds = 1;
  bool adversarial = false, checkOnly = false;
  MemoryBudget budget;
  if (int status = tool::handleCommon(argc, argv, "sdma-sim", kUsage, budget);
      status >= 0)
    return status;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    int status = 0;
    if (tool::memoryBudgetOption("sdma-sim", arg, budget, status)) {
      if (status)
        return status;
    } else if (!std::strncmp(arg, "--chunk-bytes=", 14)) {
      if (!parseUnsigned(arg + 14, chunkBytes) || chunkBytes == 0 ||
          chunkBytes > (uint64_t(1) << 30)) {
        std::fprintf(stderr, "sdma-sim: bad --chunk-bytes '%.64s'\n", arg + 14);
        return tool::kUsageError;
      }
    } else if (!std::strncmp(arg, "--seeds=", 8)) {
      if (!parseUnsigned(arg + 8, seeds) || seeds == 0) {
        std::fprintf(stderr, "sdma-sim: bad --seeds '%.64s'\n", arg + 8);
        return tool::kUsageError;
      }
    } else if (!std::strcmp(arg, "--adversarial")) {
      adversarial = true;
    } else if (!std::strcmp(arg, "--check-only")) {
      checkOnly = true;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return tool::unknownOption("sdma-sim", arg);
    } else if (!path) {
      path = arg;
    } else {
      std::fprintf(stderr, "sdma-sim: more than one plan given\n");
      return tool::kUsageError;
    }
  }
  if (!path) {
    std::fprintf(stderr, "usage: sdma-sim PLAN.json [--chunk-bytes=N] "
                         "[--adversarial] [--seeds=N] [--check-only] "
                         "(sdma-sim --help for more)\n");
    return tool::kUsageError;
  }
  std::string error;
  std::optional<Plan> plan = Plan::load(path, error);
  if (!plan) {
    std::fprintf(stderr, "sdma-sim: error: %s\n", error.c_str());
    return 1;
  }
  size_t commands = plan->commandCount();
  std::printf("plan %s: %d ranks, %zu queues, %zu commands\n",
              plan->schedule.c_str(), plan->ranks, plan->streams.size(),
              commands);
  if (checkOnly)
    return 0;

  std::optional<HostMemory> memory =
      HostMemory::create(*plan, chunkBytes, error, budget);
  if (!memory) {
    std::fprintf(stderr, "sdma-sim: error: %s\n", error.c_str());
    return 1;
  }
  uint64_t wrongRuns = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    fillInputs(*plan, *memory);
    SimulatorOptions options;
    options.adversarial = adversarial;
    options.seed = seed;
    options.budget = budget;
    if (!simulate(*plan, *memory, options, error)) {
      std::fprintf(stderr, "sdma-sim: error: seed %llu: %s\n",
                   static_cast<unsigned long long>(seed), error.c_str());
      return 1;
    }
    CheckResult check = checkOutputs(*plan, *memory);
    if (check.wrongBytes) {
      if (wrongRuns++ == 0)
        std::printf("seed %llu: %llu of %llu bytes wrong; first: %s\n",
                    static_cast<unsigned long long>(seed),
                    static_cast<unsigned long long>(check.wrongBytes),
                    static_cast<unsigned long long>(check.checkedBytes),
                    check.firstWrong.c_str());
    }
  }
  std::printf("%llu of %llu runs correct%s\n",
              static_cast<unsigned long long>(seeds - wrongRuns),
              static_cast<unsigned long long>(seeds),
              plan->collective ? "" : " (no collective declared: unchecked)");
  return wrongRuns ? 2 : 0;
}
