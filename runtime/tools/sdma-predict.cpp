//===- sdma-predict.cpp - features and predicted NVIDIA time of a plan ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-predict PLAN.json --executor=ldst|ce|ce-batch|ce-graph
//                     [--devices=N] [--chunk-bytes=N,...] [--profile=P]
//
// Prints, per chunk size, the cost model's features of one run of the plan
// (NvTimingModel.h) and, with a profile, the predicted microseconds, as CSV.
// bench/fit_nvidia.py fits the profile from these features and the
// benchmark's measurements.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/NvTimingModel.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace sdma::rt;

static const char *kUsage =
    "usage: sdma-predict PLAN.json --executor=ldst|ce|ce-batch|ce-graph "
    "[options]\n"
    "Prints, per chunk size, the NVIDIA cost model's features of one run of\n"
    "the plan and, with a profile, the predicted microseconds (CSV).\n"
    "  --executor=E           ldst, ce, ce-batch or ce-graph (required)\n"
    "  --devices=N            GPUs the ranks are spread over (default 1)\n"
    "  --chunk-bytes=N,...    chunk sizes (default 1024)\n"
    "  --profile=P.json       an NVIDIA timing profile, e.g.\n"
    "                         runtime/profiles/h200-nvidia.json (default: "
    "none,\n"
    "                         features only)\n";

int main(int argc, char **argv) {
  const char *path = nullptr;
  std::optional<NvExecutor> executor;
  int devices = 1;
  std::vector<uint64_t> chunks;
  std::string profilePath;
  MemoryBudget budget;
  if (int status =
          tool::handleCommon(argc, argv, "sdma-predict", kUsage, budget);
      status >= 0)
    return status;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int status = 0;
    if (tool::memoryBudgetOption("sdma-predict", arg, budget, status)) {
      if (status)
        return status;
    } else if (arg.rfind("--executor=", 0) == 0) {
      executor = parseNvExecutor(arg.substr(11));
      if (!executor) {
        std::fprintf(stderr,
                     "sdma-predict: unknown executor '%.64s' (ldst, ce, "
                     "ce-batch, ce-graph)\n",
                     arg.c_str() + 11);
        return tool::kUsageError;
      }
    } else if (arg.rfind("--devices=", 0) == 0) {
      char *end = nullptr;
      long v = std::strtol(arg.c_str() + 10, &end, 10);
      if (*end || v < 1 || v > 65536) {
        std::fprintf(stderr, "sdma-predict: bad --devices '%.64s'\n",
                     arg.c_str() + 10);
        return tool::kUsageError;
      }
      devices = static_cast<int>(v);
    } else if (arg.rfind("--chunk-bytes=", 0) == 0) {
      std::stringstream items(arg.substr(14));
      std::string item;
      while (std::getline(items, item, ',')) {
        char *end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(item.c_str(), &end, 10);
        if (*end || !v || errno || item[0] == '-') {
          std::fprintf(stderr, "sdma-predict: bad chunk size '%.64s'\n",
                       item.c_str());
          return tool::kUsageError;
        }
        chunks.push_back(v);
      }
    } else if (arg.rfind("--profile=", 0) == 0) {
      profilePath = arg.substr(10);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return tool::unknownOption("sdma-predict", arg);
    } else if (!path) {
      path = argv[i];
    } else {
      std::fprintf(stderr, "sdma-predict: unexpected argument '%.64s'\n",
                   arg.c_str());
      return tool::kUsageError;
    }
  }
  if (!path || !executor) {
    std::fprintf(stderr, "usage: sdma-predict PLAN.json --executor=ldst|ce|"
                         "ce-batch|ce-graph [--devices=N] "
                         "[--chunk-bytes=N,...] [--profile=P] "
                         "(sdma-predict --help for more)\n");
    return tool::kUsageError;
  }
  std::string error;
  std::optional<Plan> plan = Plan::load(path, error);
  if (!plan) {
    std::fprintf(stderr, "sdma-predict: error: %s\n", error.c_str());
    return 1;
  }
  std::optional<NvTimingProfile> profile;
  if (!profilePath.empty()) {
    profile = NvTimingProfile::load(profilePath, error);
    if (!profile) {
      std::fprintf(stderr, "sdma-predict: error: %s\n", error.c_str());
      return 1;
    }
  }
  if (chunks.empty())
    chunks = {1024};
  std::printf("chunk_bytes");
  for (const char *name : kNvFeatureNames)
    std::printf(",%s", name);
  std::printf("%s\n", profile ? ",predicted_us" : "");
  for (uint64_t chunk : chunks) {
    auto f = nvFeatures(*plan, chunk, *executor, devices);
    std::optional<double> us;
    if (profile) {
      std::string why;
      us = profile->predict(*plan, chunk, *executor, devices, &why);
      if (!us) {
        std::fprintf(stderr, "sdma-predict: error: %s (profile %s)\n",
                     why.c_str(), profilePath.c_str());
        return 1;
      }
    }
    std::printf("%llu", (unsigned long long)chunk);
    for (double v : f)
      std::printf(",%.9g", v);
    if (us)
      std::printf(",%.3f", *us);
    std::printf("\n");
  }
  return 0;
}
