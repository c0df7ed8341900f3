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

#include "sdma/runtime/NvTimingModel.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace sdma::rt;

int main(int argc, char **argv) {
  const char *path = nullptr;
  std::optional<NvExecutor> executor;
  int devices = 1;
  std::vector<uint64_t> chunks;
  std::string profilePath;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--executor=", 0) == 0) {
      executor = parseNvExecutor(arg.substr(11));
      if (!executor) {
        std::fprintf(stderr, "sdma-predict: unknown executor '%s'\n",
                     arg.c_str() + 11);
        return 1;
      }
    } else if (arg.rfind("--devices=", 0) == 0) {
      devices = std::atoi(arg.c_str() + 10);
      if (devices < 1) {
        std::fprintf(stderr, "sdma-predict: bad --devices\n");
        return 1;
      }
    } else if (arg.rfind("--chunk-bytes=", 0) == 0) {
      std::stringstream items(arg.substr(14));
      std::string item;
      while (std::getline(items, item, ',')) {
        char *end = nullptr;
        unsigned long long v = std::strtoull(item.c_str(), &end, 10);
        if (*end || !v) {
          std::fprintf(stderr, "sdma-predict: bad chunk size '%s'\n",
                       item.c_str());
          return 1;
        }
        chunks.push_back(v);
      }
    } else if (arg.rfind("--profile=", 0) == 0) {
      profilePath = arg.substr(10);
    } else if (!path && arg[0] != '-') {
      path = argv[i];
    } else {
      std::fprintf(stderr, "sdma-predict: unexpected argument '%s'\n",
                   arg.c_str());
      return 1;
    }
  }
  if (!path || !executor) {
    std::fprintf(stderr, "usage: sdma-predict PLAN.json --executor=ldst|ce|"
                         "ce-batch|ce-graph [--devices=N] "
                         "[--chunk-bytes=N,...] [--profile=P]\n");
    return 1;
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
