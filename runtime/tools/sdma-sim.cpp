//===- sdma-sim.cpp - load, validate and simulate a plan ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-sim PLAN.json [--chunk-bytes=N] [--adversarial] [--seeds=N]
//                           [--check-only]
// Loads and validates the plan (runtime side of the plan contract), fills
// the collective's input with a pattern, runs the plan on the CPU simulator
// once (or once per seed in adversarial mode) and checks every output byte.
// Exit status: 0 all runs correct, 1 a bad plan or a stuck run, 2 wrong
// bytes in some run.
//
//===----------------------------------------------------------------------===//

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

int main(int argc, char **argv) {
  const char *path = nullptr;
  uint64_t chunkBytes = 64, seeds = 1;
  bool adversarial = false, checkOnly = false;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (!std::strncmp(arg, "--chunk-bytes=", 14)) {
      if (!parseUnsigned(arg + 14, chunkBytes) || chunkBytes == 0 ||
          chunkBytes > (uint64_t(1) << 30)) {
        std::fprintf(stderr, "sdma-sim: bad --chunk-bytes '%s'\n", arg + 14);
        return 1;
      }
    } else if (!std::strncmp(arg, "--seeds=", 8)) {
      if (!parseUnsigned(arg + 8, seeds) || seeds == 0) {
        std::fprintf(stderr, "sdma-sim: bad --seeds '%s'\n", arg + 8);
        return 1;
      }
    } else if (!std::strcmp(arg, "--adversarial")) {
      adversarial = true;
    } else if (!std::strcmp(arg, "--check-only")) {
      checkOnly = true;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      std::fprintf(stderr, "sdma-sim: unknown option '%s'\n", arg);
      return 1;
    } else if (!path) {
      path = arg;
    } else {
      std::fprintf(stderr, "sdma-sim: more than one plan given\n");
      return 1;
    }
  }
  if (!path) {
    std::fprintf(stderr, "usage: sdma-sim PLAN.json [--chunk-bytes=N] "
                         "[--adversarial] [--seeds=N] [--check-only]\n");
    return 1;
  }
  std::string error;
  std::optional<Plan> plan = Plan::load(path, error);
  if (!plan) {
    std::fprintf(stderr, "sdma-sim: error: %s\n", error.c_str());
    return 1;
  }
  size_t commands = 0;
  for (const Stream &stream : plan->streams)
    commands += stream.commands.size();
  std::printf("plan %s: %d ranks, %zu queues, %zu commands\n",
              plan->schedule.c_str(), plan->ranks, plan->streams.size(),
              commands);
  if (checkOnly)
    return 0;

  HostMemory memory(*plan, chunkBytes);
  uint64_t wrongRuns = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    fillInputs(*plan, memory);
    SimulatorOptions options;
    options.adversarial = adversarial;
    options.seed = seed;
    if (!simulate(*plan, memory, options, error)) {
      std::fprintf(stderr, "sdma-sim: error: seed %llu: %s\n",
                   static_cast<unsigned long long>(seed), error.c_str());
      return 1;
    }
    CheckResult check = checkOutputs(*plan, memory);
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
