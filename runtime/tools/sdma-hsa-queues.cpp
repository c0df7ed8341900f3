//===- sdma-hsa-queues.cpp - the SDMA queues sdma would create here -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-hsa-queues [--node=N] [--hsakmt=PATH]
//
// Lists, per GPU node, the user-mode SDMA queue each peer's copies would
// go to for GPU-initiated SDMA (runtime/lib/amd/HsaKmtQueue.h): the engine the
// IO link recommends, or a generic queue. Reads the topology through
// libhsakmt and creates nothing. Never ran on an AMD GPU.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "amd/HsaKmtQueue.h"

#include <cstdio>
#include <cstdlib>

using namespace sdma::rt;
using namespace sdma::rt::hsakmt;

static const char *kTool = "sdma-hsa-queues";

static const char *kUsage =
    "usage: sdma-hsa-queues [options]\n"
    "Lists the SDMA queues sdma would create for GPU-initiated SDMA on this\n"
    "machine: per GPU node, each peer's engine (from the IO link's\n"
    "recommended-engine mask) or a generic queue. Creates nothing; needs\n"
    "KFD >= 1.17 and a shared libhsakmt.\n"
    "  --node=N               only GPU node N (default: every GPU node)\n"
    "  --hsakmt=PATH          the libhsakmt to load (default: "
    "$SDMA_HSAKMT_LIB,\n"
    "                         else libhsakmt.so.1, then libhsakmt.so)\n";

static void printPlan(const SdmaQueuePlan &plan) {
  std::printf("node %u: %u PCIe + %u xGMI SDMA engines; %zu peers on %zu "
              "queues\n",
              plan.node, plan.info.numSdmaEngines, plan.info.numSdmaXgmiEngines,
              plan.routes.size(), plan.queueCount);
  for (size_t i = 0; i < plan.routes.size(); ++i) {
    const SdmaRoute &route = plan.routes[i];
    std::printf("  peer %u (%s link, mask 0x%x) -> ", route.peer,
                plan.links[i].xgmi ? "xGMI" : "PCIe",
                plan.links[i].recSdmaEngIdMask);
    if (route.engine >= 0)
      std::printf("engine %d", route.engine);
    else
      std::printf("generic %s queue (KFD picks the engine)",
                  route.queueType == kQueueTypeSdmaXgmi ? "SDMA_XGMI" : "SDMA");
    std::printf(", queue %zu\n", route.queue);
  }
}

int main(int argc, char **argv) {
  MemoryBudget budget;
  if (int status = tool::handleCommon(argc, argv, kTool, kUsage, budget);
      status >= 0)
    return status;
  std::string library;
  long node = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int status = 0;
    if (tool::memoryBudgetOption(kTool, arg, budget, status)) {
      if (status)
        return status;
    } else if (arg.rfind("--node=", 0) == 0) {
      char *end = nullptr;
      node = std::strtol(arg.c_str() + 7, &end, 10);
      if (arg.size() == 7 || *end || node < 0 || node > 0xFFFF) {
        std::fprintf(stderr, "%s: bad --node '%.64s' (a node number)\n", kTool,
                     arg.c_str() + 7);
        return tool::kUsageError;
      }
    } else if (arg.rfind("--hsakmt=", 0) == 0) {
      library = arg.substr(9);
    } else {
      return tool::unknownOption(kTool, arg);
    }
  }
  std::string error;
  std::unique_ptr<HsaKmtApi> api = HsaKmtApi::load(library, error);
  std::vector<uint32_t> nodes;
  if (api && node >= 0)
    nodes.push_back(uint32_t(node));
  else if (api && !listGpuNodes(*api, nodes, error))
    api.reset();
  if (!api) {
    std::fprintf(stderr, "%s: error: %s\n", kTool, error.c_str());
    return 1;
  }
  if (nodes.empty()) {
    std::fprintf(stderr, "%s: error: libhsakmt reports no GPU node\n", kTool);
    return 1;
  }
  std::printf("libhsakmt: %s\n", api->library.c_str());
  for (uint32_t gpu : nodes) {
    SdmaQueuePlan plan;
    if (!planSdmaQueues(*api, gpu, {}, plan, error)) {
      std::fprintf(stderr, "%s: error: %s\n", kTool, error.c_str());
      return 1;
    }
    printPlan(plan);
  }
  return 0;
}
