//===- sdma-switch-points.cpp - DMA or load/store, by message size --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-switch-points --profile=P.json [--sizes=FROM:TO] PLAN.json...
//
// Groups the plans by the collective they implement and their rank count
// and prints, per group and message size (bytes per rank, powers of two),
// the predicted time of the best plan with GPU-initiated SDMA, of the best
// plan with host-submitted SDMA (where the profile has host parameters) and
// of a load/store copy kernel (DmaTimingModel.h), as CSV; then, as '#'
// lines, the switch points: the smallest size from which SDMA beats the
// load/store kernel at that size and every larger one of the sweep.
// Predictions of a model, not measurements.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/DmaTimingModel.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace sdma::rt;

static const char *kTool = "sdma-switch-points";

static const char *kUsage =
    "usage: sdma-switch-points --profile=P.json [--sizes=FROM:TO] "
    "PLAN.json...\n"
    "Groups the plans by collective and rank count and prints, per message\n"
    "size (bytes per rank), the predicted time of the best plan with\n"
    "GPU-initiated SDMA, with host-submitted SDMA (where the profile has\n"
    "host parameters) and of a load/store kernel, as CSV; then, as '#'\n"
    "lines, the smallest size from which SDMA beats load/store at every\n"
    "larger size of the sweep. Model predictions, not measurements.\n"
    "  --profile=P.json       a DMA timing profile with GPU-initiated\n"
    "                         submission parameters and an \"ldst\" section,\n"
    "                         e.g. runtime/profiles/mi355x-sdma-gpu.json\n"
    "  --sizes=FROM:TO        bytes per rank, powers of two from FROM to TO\n"
    "                         (K/M/G suffixes; default 1K:1G)\n";

namespace {

struct NamedPlan {
  std::string name;
  Plan plan;
};

/// The plans of one collective at one rank count.
struct Group {
  std::string collective;
  int ranks = 0;
  std::vector<const NamedPlan *> plans;
};

/// The fastest of the group's plans by `time`, with its name.
struct Best {
  double us = 0;
  std::string plan;
};

/// One row of the sweep.
struct Row {
  uint64_t bytes = 0, chunk = 0;
  Best gpu, host, ldst;
};

/// "512 KiB", "32 MiB", "100 bytes".
std::string humanBytes(uint64_t bytes) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0)
    bytes /= 1024, ++unit;
  return std::to_string(bytes) + " " + units[unit];
}

/// A file's name without its folder and its ".plan.json" or ".json".
std::string stem(const std::string &path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  for (const char *suffix : {".plan.json", ".json"}) {
    std::string s(suffix);
    if (name.size() > s.size() &&
        name.compare(name.size() - s.size(), s.size(), s) == 0)
      return name.substr(0, name.size() - s.size());
  }
  return name;
}

/// The best of `group`'s plans under `predict`, or std::nullopt with
/// `error`.
template <typename Predict>
std::optional<Best> best(const Group &group, Predict predict,
                         std::string &error) {
  std::optional<Best> result;
  for (const NamedPlan *p : group.plans) {
    std::optional<double> us = predict(p->plan);
    if (!us) {
      error = p->name + ": " + error;
      return std::nullopt;
    }
    if (!result || *us < result->us)
      result = Best{*us, p->name};
  }
  return result;
}

/// The smallest size of `rows` from which `sdma` beats load/store at every
/// larger size, or 0 if it does not win at the largest.
uint64_t switchPoint(const std::vector<Row> &rows, Best Row::*sdma) {
  uint64_t from = 0;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (!(((*it).*sdma).us < it->ldst.us))
      break;
    from = it->bytes;
  }
  return from;
}

/// The sizes of `rows` where `sdma` beats load/store, as ranges: "1 KiB-64
/// KiB, 128 MiB-1 GiB", or "none".
std::string winning(const std::vector<Row> &rows, Best Row::*sdma) {
  std::string ranges;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!((rows[i].*sdma).us < rows[i].ldst.us))
      continue;
    size_t j = i;
    while (j + 1 < rows.size() && (rows[j + 1].*sdma).us < rows[j + 1].ldst.us)
      ++j;
    ranges += (ranges.empty() ? "" : ", ") + humanBytes(rows[i].bytes);
    if (j > i)
      ranges += "-" + humanBytes(rows[j].bytes);
    i = j;
  }
  return ranges.empty() ? "none" : ranges;
}

void printSwitch(const Group &g, const std::vector<Row> &rows, Best Row::*sdma,
                 const char *mode, const char *what) {
  uint64_t from = switchPoint(rows, sdma);
  std::printf("# switch,%s,%d,%s,%s\n", g.collective.c_str(), g.ranks, mode,
              from ? std::to_string(from).c_str() : "none");
  std::string largest = humanBytes(rows.back().bytes);
  if (from)
    std::printf("# %s at %d ranks: %s beats load/store from %s per rank (%s "
                "per chunk) to %s, the end of the sweep",
                g.collective.c_str(), g.ranks, what, humanBytes(from).c_str(),
                humanBytes(from / g.ranks).c_str(), largest.c_str());
  else
    std::printf("# %s at %d ranks: %s does not beat load/store at %s per "
                "rank, the end of the sweep",
                g.collective.c_str(), g.ranks, what, largest.c_str());
  std::printf("; it wins at: %s (predicted)\n", winning(rows, sdma).c_str());
}

/// Parses "FROM:TO" into `from` and `to`; false if malformed.
bool parseSizes(const std::string &text, uint64_t &from, uint64_t &to) {
  size_t colon = text.find(':');
  if (colon == std::string::npos)
    return false;
  std::optional<uint64_t> a = MemoryBudget::parseBytes(text.substr(0, colon));
  std::optional<uint64_t> b = MemoryBudget::parseBytes(text.substr(colon + 1));
  if (!a || !b || !*a || *a > *b || *b > (uint64_t(1) << 50))
    return false;
  from = *a, to = *b;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  MemoryBudget budget;
  if (int status = tool::handleCommon(argc, argv, kTool, kUsage, budget);
      status >= 0)
    return status;
  std::string profilePath;
  uint64_t from = 1024, to = uint64_t(1) << 30;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int status = 0;
    if (tool::memoryBudgetOption(kTool, arg, budget, status)) {
      if (status)
        return status;
    } else if (arg.rfind("--profile=", 0) == 0) {
      profilePath = arg.substr(10);
    } else if (arg.rfind("--sizes=", 0) == 0) {
      if (!parseSizes(arg.substr(8), from, to)) {
        std::fprintf(stderr,
                     "%s: bad --sizes '%.64s' (FROM:TO, byte counts with "
                     "K/M/G suffixes, 0 < FROM <= TO, e.g. 1K:1G)\n",
                     kTool, arg.c_str() + 8);
        return tool::kUsageError;
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return tool::unknownOption(kTool, arg);
    } else {
      paths.push_back(arg);
    }
  }
  if (profilePath.empty() || paths.empty()) {
    std::fprintf(stderr,
                 "usage: sdma-switch-points --profile=P.json "
                 "[--sizes=FROM:TO] PLAN.json... (%s --help for "
                 "more)\n",
                 kTool);
    return tool::kUsageError;
  }

  std::string error;
  std::optional<DmaTimingProfile> profile =
      DmaTimingProfile::load(profilePath, error);
  std::optional<DmaTimingProfile> gpu, host;
  if (profile)
    gpu = profile->withSubmission(DmaSubmission::Gpu, error);
  if (gpu && !profile->ldst)
    error = profilePath + ": the profile has no \"ldst\" section (the "
                          "load/store kernel to compare with)";
  if (!gpu || !profile->ldst) {
    std::fprintf(stderr, "%s: error: %s\n", kTool, error.c_str());
    return 1;
  }
  if (profile->hasHost)
    host = profile->withSubmission(DmaSubmission::Host, error);

  std::vector<NamedPlan> plans;
  plans.reserve(paths.size());
  for (const std::string &path : paths) {
    std::optional<Plan> plan = Plan::load(path, error);
    if (!plan) {
      std::fprintf(stderr, "%s: error: %s\n", kTool, error.c_str());
      return 1;
    }
    std::string name = stem(path) + (plan->prelaunch ? "+prelaunch" : "");
    plans.push_back({name, std::move(*plan)});
  }
  std::map<std::pair<std::string, int>, Group> groups;
  for (const NamedPlan &p : plans) {
    std::string collective =
        p.plan.collective ? p.plan.collective->kind : p.plan.schedule;
    Group &g = groups[{collective, p.plan.ranks}];
    g.collective = collective, g.ranks = p.plan.ranks;
    g.plans.push_back(&p);
  }

  std::printf("collective,ranks,bytes_per_rank,chunk_bytes,gpu_sdma_us,"
              "gpu_sdma_plan,host_sdma_us,host_sdma_plan,ldst_us,ldst_plan,"
              "fastest\n");
  for (auto &[key, g] : groups) {
    std::vector<Row> rows;
    for (uint64_t bytes = from; bytes <= to; bytes *= 2) {
      Row row{bytes, bytes / uint64_t(g.ranks), {}, {}, {}};
      if (!row.chunk)
        continue; // fewer bytes than ranks
      auto dma = [&](const DmaTimingProfile &mode) {
        return best(
            g,
            [&](const Plan &plan) {
              return predictDmaTime(plan, row.chunk, mode, error);
            },
            error);
      };
      std::optional<Best> g1 = dma(*gpu);
      std::optional<Best> h1 = g1 && host ? dma(*host) : Best{};
      std::optional<Best> l1 = best(
          g,
          [&](const Plan &plan) -> std::optional<double> {
            return predictLdstTime(plan, row.chunk, *profile->ldst,
                                   profile->linkGBps);
          },
          error);
      if (!g1 || !h1 || !l1) {
        std::fprintf(stderr, "%s: error: %s\n", kTool, error.c_str());
        return 1;
      }
      row.gpu = *g1, row.host = *h1, row.ldst = *l1;
      const char *fastest = "gpu-sdma";
      double fastestUs = row.gpu.us;
      if (host && row.host.us < fastestUs)
        fastest = "host-sdma", fastestUs = row.host.us;
      if (row.ldst.us < fastestUs)
        fastest = "ldst";
      std::printf("%s,%d,%llu,%llu,%.3f,%s,", g.collective.c_str(), g.ranks,
                  (unsigned long long)row.bytes, (unsigned long long)row.chunk,
                  row.gpu.us, row.gpu.plan.c_str());
      if (host)
        std::printf("%.3f,%s,", row.host.us, row.host.plan.c_str());
      else
        std::printf(",,");
      std::printf("%.3f,%s,%s\n", row.ldst.us, row.ldst.plan.c_str(), fastest);
      rows.push_back(std::move(row));
    }
    if (rows.empty())
      continue;
    printSwitch(g, rows, &Row::gpu, "gpu-sdma", "GPU-initiated SDMA");
    if (host)
      printSwitch(g, rows, &Row::host, "host-sdma", "host-submitted SDMA");
  }
  return 0;
}
