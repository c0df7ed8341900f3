//===- sdma-packet-sim.cpp - decode, patch and simulate SDMA packets ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-packet-sim PACKETS.json [--list] [--chunk-bytes=N,...]
//                        [--seeds=N] [--reference=PLAN.json]
//                        [--dma-profile=PROFILE.json]
//
// Loads a packet plan (sdma-translate --sdma-to-packets). --list prints the
// listing decoded from the images by the runtime's own decoder. Otherwise,
// for each chunk size: fills the collective's input with the pattern,
// patches the relocations and runs the queues on the packet simulator
// (round robin, then --seeds - 1 random interleavings), and checks every
// output byte against the collective and, with --reference, every byte of
// every buffer against the reference simulator running the plan the same
// schedule compiled to. With --dma-profile, each chunk size's line also
// gives the time the DMA timing model predicts for the packets. Exit status: 0
// all correct, 1 a bad plan, a stuck or faulting run or one beyond the memory
// budget, 2 wrong bytes or a command-line mistake.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/DmaTimingModel.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Simulator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

using namespace sdma::rt;

static bool parseUnsigned(const std::string &text, uint64_t &value) {
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || text[0] == '-')
    return false;
  value = v;
  return true;
}

static const char *kUsage =
    "usage: sdma-packet-sim PACKETS.json [options]\n"
    "Loads an SDMA packet plan (sdma-translate --sdma-to-packets), patches\n"
    "it for each chunk size, runs it on the packet simulator and checks\n"
    "every output byte.\n"
    "  --list                 print the packet listing decoded from the "
    "images\n"
    "                         and exit (default: off)\n"
    "  --chunk-bytes=N,...    chunk sizes, 1..2^30 each (default 64,4096)\n"
    "  --seeds=N              interleavings per chunk size: round robin, "
    "then\n"
    "                         N - 1 random ones (default 1)\n"
    "  --reference=PLAN.json  also compare every byte with the reference\n"
    "                         simulator running this plan (default: none)\n"
    "  --dma-profile=P.json   also print the DMA timing model's time for "
    "the\n"
    "                         packets (default: none)\n";

int main(int argc, char **argv) {
  const char *path = nullptr;
  std::string referencePath, profilePath;
  std::vector<uint64_t> chunkSizes;
  uint64_t seeds = 1;
  bool list = false;
  MemoryBudget budget;
  if (int status =
          tool::handleCommon(argc, argv, "sdma-packet-sim", kUsage, budget);
      status >= 0)
    return status;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int status = 0;
    if (tool::memoryBudgetOption("sdma-packet-sim", arg, budget, status)) {
      if (status)
        return status;
    } else if (arg.rfind("--chunk-bytes=", 0) == 0) {
      std::stringstream items(arg.substr(14));
      std::string item;
      while (std::getline(items, item, ',')) {
        uint64_t v;
        if (!parseUnsigned(item, v) || v == 0 || v > (uint64_t(1) << 30)) {
          std::fprintf(stderr, "sdma-packet-sim: bad chunk size '%.64s'\n",
                       item.c_str());
          return tool::kUsageError;
        }
        chunkSizes.push_back(v);
      }
    } else if (arg.rfind("--seeds=", 0) == 0) {
      if (!parseUnsigned(arg.substr(8), seeds) || seeds == 0) {
        std::fprintf(stderr, "sdma-packet-sim: bad --seeds '%.64s'\n",
                     arg.c_str() + 8);
        return tool::kUsageError;
      }
    } else if (arg.rfind("--reference=", 0) == 0) {
      referencePath = arg.substr(12);
    } else if (arg.rfind("--dma-profile=", 0) == 0) {
      profilePath = arg.substr(14);
    } else if (arg == "--list") {
      list = true;
    } else if (arg[0] == '-' && arg.size() > 1) {
      return tool::unknownOption("sdma-packet-sim", arg);
    } else if (!path) {
      path = argv[i];
    } else {
      std::fprintf(stderr, "sdma-packet-sim: more than one packet plan\n");
      return tool::kUsageError;
    }
  }
  if (!path) {
    std::fprintf(stderr,
                 "usage: sdma-packet-sim PACKETS.json [--list] "
                 "[--chunk-bytes=N,...] [--seeds=N] [--reference=PLAN.json] "
                 "(sdma-packet-sim --help for more)\n");
    return tool::kUsageError;
  }
  std::string error;
  std::optional<PacketPlan> plan = PacketPlan::load(path, error);
  if (!plan) {
    std::fprintf(stderr, "sdma-packet-sim: error: %s\n", error.c_str());
    return 1;
  }
  if (list) {
    std::string listing;
    if (!packetListing(*plan, listing, error)) {
      std::fprintf(stderr, "sdma-packet-sim: error: %s\n", error.c_str());
      return 1;
    }
    std::fputs(listing.c_str(), stdout);
    return 0;
  }
  std::optional<DmaTimingProfile> profile;
  if (!profilePath.empty()) {
    profile = DmaTimingProfile::load(profilePath, error);
    if (!profile) {
      std::fprintf(stderr, "sdma-packet-sim: error: %s\n", error.c_str());
      return 1;
    }
  }
  std::optional<Plan> reference;
  if (!referencePath.empty()) {
    reference = Plan::load(referencePath, error);
    if (!reference) {
      std::fprintf(stderr, "sdma-packet-sim: error: %s\n", error.c_str());
      return 1;
    }
    bool same = reference->ranks == plan->ranks &&
                reference->buffers.size() == plan->buffers.size();
    for (size_t b = 0; same && b < plan->buffers.size(); ++b)
      same = reference->buffers[b].name == plan->buffers[b].name &&
             reference->buffers[b].chunks == plan->buffers[b].chunks;
    if (!same) {
      std::fprintf(stderr,
                   "sdma-packet-sim: error: %s and %s differ in ranks or "
                   "buffers\n",
                   referencePath.c_str(), path);
      return 1;
    }
  }
  if (chunkSizes.empty())
    chunkSizes = {64, 4096};
  size_t words = 0;
  for (const PacketQueue &q : plan->queues)
    words += q.image.size();
  std::printf("packets %s: %d ranks, %zu queues, %zu dwords, target %s\n",
              plan->program.c_str(), plan->ranks, plan->queues.size(), words,
              plan->target.name.c_str());
  Plan layout = plan->layout();
  int status = 0;
  for (uint64_t chunk : chunkSizes) {
    std::optional<HostMemory> expected;
    if (reference) {
      expected = HostMemory::create(*reference, chunk, error, budget);
      if (!expected) {
        std::fprintf(stderr, "sdma-packet-sim: error: reference: %s\n",
                     error.c_str());
        return 1;
      }
      fillInputs(*reference, *expected);
      SimulatorOptions referenceOptions;
      referenceOptions.budget = budget;
      if (!simulate(*reference, *expected, referenceOptions, error)) {
        std::fprintf(stderr, "sdma-packet-sim: error: reference: %s\n",
                     error.c_str());
        return 1;
      }
    }
    if (profile) {
      std::optional<Plan> lifted = liftPackets(*plan, chunk, error);
      std::optional<double> us =
          lifted ? predictDmaTime(*lifted, chunk, *profile, error)
                 : std::nullopt;
      if (!us) {
        std::fprintf(stderr, "sdma-packet-sim: error: chunk %llu: %s\n",
                     (unsigned long long)chunk, error.c_str());
        return 1;
      }
      std::printf("chunk %llu: predicted %.2f us on %s\n",
                  (unsigned long long)chunk, *us, profile->target.c_str());
    }
    for (uint64_t seed = 0; seed < seeds; ++seed) {
      // The reference's memory counts against the budget too.
      MemoryBudget left = budget;
      left.bytes -=
          expected ? std::min(budget.bytes, expected->totalBytes()) : 0;
      std::optional<HostMemory> created =
          HostMemory::create(layout, chunk, error, left);
      if (!created) {
        std::fprintf(stderr, "sdma-packet-sim: error: chunk %llu: %s\n",
                     (unsigned long long)chunk, error.c_str());
        return 1;
      }
      HostMemory &memory = *created;
      fillInputs(layout, memory);
      PacketSimOptions options;
      options.seed = seed;
      options.budget = left;
      PacketSimStats stats;
      if (!simulatePackets(*plan, memory, options, error, &stats)) {
        std::fprintf(
            stderr, "sdma-packet-sim: error: chunk %llu seed %llu: %s\n",
            (unsigned long long)chunk, (unsigned long long)seed, error.c_str());
        return 1;
      }
      uint64_t differ =
          expected ? differingBytes(layout, memory, *expected) : 0;
      CheckResult check = checkOutputs(layout, memory);
      bool ok = differ == 0 && check.wrongBytes == 0;
      if (!ok)
        status = 2;
      if (seed == 0 || !ok)
        std::printf("%s chunk %llu seed %llu: %llu packets, %llu polls "
                    "(%llu unsatisfied), %llu bytes moved; %s; collective: "
                    "%llu of %llu bytes wrong%s%s\n",
                    ok ? "ok  " : "FAIL", (unsigned long long)chunk,
                    (unsigned long long)seed, (unsigned long long)stats.packets,
                    (unsigned long long)stats.polls,
                    (unsigned long long)stats.pollRetries,
                    (unsigned long long)stats.bytesMoved,
                    expected ? (differ ? ("differs from the reference in " +
                                          std::to_string(differ) + " bytes")
                                             .c_str()
                                       : "every byte equals the reference")
                             : "no reference",
                    (unsigned long long)check.wrongBytes,
                    (unsigned long long)check.checkedBytes,
                    check.firstWrong.empty() ? "" : "; first: ",
                    check.firstWrong.c_str());
    }
  }
  if (seeds > 1)
    std::printf("%llu interleavings per chunk size\n",
                (unsigned long long)seeds);
  return status;
}
