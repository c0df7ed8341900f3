//===- HsaKmtQueue.cpp - user-mode SDMA queues per engine (libhsakmt) -----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Call order and memory flags follow mori's anvil (ROCm/mori
// src/application/transport/sdma/anvil.cpp) and libhsakmt's own checks
// (ROCR-Runtime libhsakmt/src/{queues,memory,topology}.c). Never ran on an
// AMD GPU: see HsaKmtQueue.h.
//
//===----------------------------------------------------------------------===//

#include "amd/HsaKmtQueue.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <utility>

using namespace sdma::rt;
using namespace sdma::rt::hsakmt;

namespace {

/// Where HsaNodeProperties keeps the fields sdma reads, per layout. Two
/// fields were inserted before them in 2025 (NumNeuralCores after
/// NumFComputeCores, Capability2 after Capability), so a library is read by
/// the size it writes. Offsets of the first two: compiled against the
/// headers; of the third: read from the header text (two fields appended).
struct NodeLayout {
  uint32_t bytes;
  const char *source;
  uint32_t numFComputeCores, numIoLinks, numSdmaEngines, numSdmaXgmiEngines;
};
constexpr NodeLayout kNodeLayouts[] = {
    {360, "ROCR-Runtime c7785a6, 2024-10", 4, 16, 316, 320},
    {368, "rocm-systems 1b1610f, 2025-08", 4, 20, 324, 328},
    {376, "ROCR-Runtime 04743d9, CwsrSize and CtlStackSize appended", 4, 20,
     324, 328},
};
/// Room for any HsaNodeProperties a library may write.
constexpr size_t kNodeBuffer = 4096;

uint32_t read32(const unsigned char *bytes, uint32_t offset) {
  uint32_t value;
  std::memcpy(&value, bytes + offset, sizeof(value));
  return value;
}

std::string nodeText(uint32_t node) { return "node " + std::to_string(node); }

/// "engine 3" or "generic SDMA_XGMI queue".
std::string queueText(int engine, uint32_t queueType) {
  if (engine >= 0)
    return "engine " + std::to_string(engine);
  return queueType == kQueueTypeSdmaXgmi ? "generic SDMA_XGMI queue"
                                         : "generic SDMA queue";
}

/// Opens KFD, checks its interface version and takes the topology
/// snapshot (hsaKmtAcquireSystemProperties). Leaves KFD closed on failure.
bool openKfd(const HsaKmtApi &api, uint32_t &numNodes, std::string &error) {
  HsaStatus status = api.hsaKmtOpenKFD();
  if (status != kHsaSuccess) {
    error = HsaKmtApi::describe("hsaKmtOpenKFD", status, "") +
            ": no usable KFD (/dev/kfd; is amdgpu loaded and this user in "
            "the render group?)";
    return false;
  }
  auto fail = [&](std::string message) {
    api.hsaKmtCloseKFD();
    error = std::move(message);
    return false;
  };
  HsaVersionInfo version{};
  status = api.hsaKmtGetVersion(&version);
  if (status != kHsaSuccess)
    return fail(HsaKmtApi::describe("hsaKmtGetVersion", status, ""));
  uint32_t major = version.KernelInterfaceMajorVersion;
  uint32_t minor = version.KernelInterfaceMinorVersion;
  if (major < 1 || (major == 1 && minor < kMinKfdMinor))
    return fail("GPU-initiated SDMA needs KFD interface >= 1.17 (SDMA queues "
                "on a chosen engine, RecSdmaEngIdMask); this driver reports " +
                std::to_string(major) + "." + std::to_string(minor));
  HsaSystemProperties system{};
  status = api.hsaKmtAcquireSystemProperties(&system);
  if (status != kHsaSuccess)
    return fail(
        HsaKmtApi::describe("hsaKmtAcquireSystemProperties", status, ""));
  numNodes = system.NumNodes;
  return true;
}

/// Closes KFD after a query: a failed close fails a query that succeeded.
bool closeKfd(const HsaKmtApi &api, bool ok, std::string &error) {
  HsaStatus status = api.hsaKmtCloseKFD();
  if (ok && status != kHsaSuccess) {
    error = HsaKmtApi::describe("hsaKmtCloseKFD", status, "");
    return false;
  }
  return ok;
}

/// The link to use per peer node: an xGMI link before any other, else the
/// first listed (libhsakmt lists io_links, then PCIe p2p_links).
std::map<uint32_t, HsaIoLinkProperties>
linksByPeer(const std::vector<HsaIoLinkProperties> &links, uint32_t node) {
  std::map<uint32_t, HsaIoLinkProperties> byPeer;
  for (const HsaIoLinkProperties &link : links) {
    if (link.NodeTo == node)
      continue;
    auto [it, inserted] = byPeer.emplace(link.NodeTo, link);
    if (!inserted && it->second.IoLinkType != kIoLinkTypeXgmi &&
        link.IoLinkType == kIoLinkTypeXgmi)
      it->second = link;
  }
  return byPeer;
}

/// The peers to plan for: `requested` (sorted, each linked to `node`), or
/// every GPU node `node` links to.
bool choosePeers(const HsaKmtApi &api, uint32_t node,
                 const std::map<uint32_t, HsaIoLinkProperties> &byPeer,
                 std::vector<uint32_t> requested, std::vector<uint32_t> &peers,
                 std::string &error) {
  if (requested.empty()) {
    for (const auto &[peer, link] : byPeer) {
      HsaNodeInfo info;
      if (!api.nodeInfo(peer, info, error))
        return false;
      if (info.numFComputeCores > 0)
        peers.push_back(peer);
    }
    return true;
  }
  std::sort(requested.begin(), requested.end());
  requested.erase(std::unique(requested.begin(), requested.end()),
                  requested.end());
  for (uint32_t peer : requested) {
    if (peer == node) {
      error = "peer " + std::to_string(peer) + " is " + nodeText(node) +
              " itself: SDMA queues here are per peer GPU";
      return false;
    }
    if (!byPeer.count(peer)) {
      error = nodeText(node) + " has no IO link to " + nodeText(peer);
      return false;
    }
    peers.push_back(peer);
  }
  return true;
}

/// planSdmaQueues with KFD already open.
bool planOpen(const HsaKmtApi &api, uint32_t node, uint32_t numNodes,
              const std::vector<uint32_t> &requested, SdmaQueuePlan &plan,
              std::string &error) {
  if (node >= numNodes) {
    error = nodeText(node) + " does not exist (libhsakmt reports " +
            std::to_string(numNodes) + " nodes)";
    return false;
  }
  plan = SdmaQueuePlan();
  plan.node = node;
  if (!api.nodeInfo(node, plan.info, error))
    return false;
  if (plan.info.numFComputeCores == 0) {
    error = nodeText(node) + " is not a GPU (no compute cores)";
    return false;
  }
  if (plan.info.numSdmaEngines + plan.info.numSdmaXgmiEngines == 0) {
    error = nodeText(node) + " reports no SDMA engine";
    return false;
  }
  std::vector<HsaIoLinkProperties> links(plan.info.numIoLinks);
  if (!links.empty()) {
    HsaStatus status = api.hsaKmtGetNodeIoLinkProperties(
        node, plan.info.numIoLinks, links.data());
    if (status != kHsaSuccess) {
      error = HsaKmtApi::describe("hsaKmtGetNodeIoLinkProperties", status,
                                  nodeText(node));
      return false;
    }
  }
  std::map<uint32_t, HsaIoLinkProperties> byPeer = linksByPeer(links, node);
  std::vector<uint32_t> peers;
  if (!choosePeers(api, node, byPeer, requested, peers, error))
    return false;
  for (uint32_t peer : peers) {
    const HsaIoLinkProperties &link = byPeer.at(peer);
    plan.links.push_back(
        {peer, link.RecSdmaEngIdMask, link.IoLinkType == kIoLinkTypeXgmi});
  }
  plan.routes = planSdmaRoutes(plan.links, plan.info.numSdmaEngines,
                               plan.info.numSdmaXgmiEngines);
  for (const SdmaRoute &route : plan.routes)
    plan.queueCount = std::max(plan.queueCount, route.queue + 1);
  return true;
}

bool validRingBytes(uint64_t bytes, std::string &error) {
  bool powerOfTwo = bytes && !(bytes & (bytes - 1));
  if (powerOfTwo && bytes >= 4096 && bytes <= (uint64_t(1) << 31))
    return true;
  error = "SDMA ring size " + std::to_string(bytes) +
          " bytes: must be a power of two from 4096 to 2147483648 (KFD's "
          "ring_size is 32-bit)";
  return false;
}

/// HSAKMT_STATUS as hsakmttypes.h names it.
constexpr std::pair<HsaStatus, const char *> kStatusNames[] = {
    {0, "HSAKMT_STATUS_SUCCESS"},
    {1, "HSAKMT_STATUS_ERROR"},
    {2, "HSAKMT_STATUS_DRIVER_MISMATCH"},
    {3, "HSAKMT_STATUS_INVALID_PARAMETER"},
    {4, "HSAKMT_STATUS_INVALID_HANDLE"},
    {5, "HSAKMT_STATUS_INVALID_NODE_UNIT"},
    {6, "HSAKMT_STATUS_NO_MEMORY"},
    {7, "HSAKMT_STATUS_BUFFER_TOO_SMALL"},
    {10, "HSAKMT_STATUS_NOT_IMPLEMENTED"},
    {11, "HSAKMT_STATUS_NOT_SUPPORTED"},
    {12, "HSAKMT_STATUS_UNAVAILABLE"},
    {13, "HSAKMT_STATUS_OUT_OF_RESOURCES"},
    {20, "HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED"},
    {21, "HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR"},
    {22, "HSAKMT_STATUS_KERNEL_ALREADY_OPENED"},
    {23, "HSAKMT_STATUS_HSAMMU_UNAVAILABLE"},
    {30, "HSAKMT_STATUS_WAIT_FAILURE"},
    {31, "HSAKMT_STATUS_WAIT_TIMEOUT"},
    {35, "HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED"},
    {36, "HSAKMT_STATUS_MEMORY_NOT_REGISTERED"},
    {37, "HSAKMT_STATUS_MEMORY_ALIGNMENT"},
};

} // namespace

const char *sdma::rt::hsakmt::statusName(HsaStatus status) {
  for (const auto &[value, name] : kStatusNames)
    if (value == status)
      return name;
  return nullptr;
}

std::unique_ptr<HsaKmtApi> HsaKmtApi::load(const std::string &path,
                                           std::string &error) {
  std::vector<std::string> names;
  const char *env = std::getenv("SDMA_HSAKMT_LIB");
  if (!path.empty())
    names = {path};
  else if (env && *env)
    names = {env};
  else
    names = {"libhsakmt.so.1", "libhsakmt.so"};
  void *handle = nullptr;
  std::string tried;
  for (const std::string &name : names) {
    if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      tried = name;
      break;
    }
    const char *why = dlerror();
    tried += (tried.empty() ? "" : "; ") + (why ? std::string(why) : name);
  }
  if (!handle) {
    error = "no libhsakmt (" + tried +
            "): libhsakmt builds as a static archive by default since it "
            "moved into ROCR-Runtime (2024); build it shared "
            "(-DBUILD_SHARED_LIBS=ON) and point SDMA_HSAKMT_LIB at it";
    return nullptr;
  }
  auto api = std::make_unique<HsaKmtApi>();
  api->library = tried;
#define SDMA_LOAD(name, args)                                                  \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name));     \
  if (!api->name) {                                                            \
    error = api->library + " lacks " #name;                                    \
    if (std::strcmp(#name, "hsaKmtCreateQueueExt") == 0)                       \
      error += " (libhsakmt before August 2024 cannot create an SDMA queue "   \
               "on a chosen engine)";                                          \
    return nullptr;                                                            \
  }
  SDMA_HSAKMT_FUNCTIONS(SDMA_LOAD)
#undef SDMA_LOAD
  return api;
}

std::string HsaKmtApi::describe(const char *call, HsaStatus status,
                                const std::string &where) {
  const char *name = statusName(status);
  std::string text = std::string(call) +
                     " failed: " + (name ? name : "unknown HSAKMT_STATUS") +
                     " (" + std::to_string(status) + ")";
  return where.empty() ? text : text + " (" + where + ")";
}

bool HsaKmtApi::nodeInfo(uint32_t node, HsaNodeInfo &info,
                         std::string &error) const {
  // Filled with two patterns: a byte the library wrote differs from its
  // pattern in at least one of the two calls.
  alignas(8) unsigned char first[kNodeBuffer], second[kNodeBuffer];
  std::memset(first, 0xA5, sizeof(first));
  std::memset(second, 0x5A, sizeof(second));
  for (unsigned char *buffer : {first, second}) {
    HsaStatus status = hsaKmtGetNodeProperties(node, buffer);
    if (status != kHsaSuccess) {
      error = describe("hsaKmtGetNodeProperties", status, nodeText(node));
      return false;
    }
  }
  uint32_t written = kNodeBuffer;
  while (written > 0 && first[written - 1] == 0xA5 &&
         second[written - 1] == 0x5A)
    --written;
  for (const NodeLayout &layout : kNodeLayouts) {
    if (layout.bytes != written)
      continue;
    info.numFComputeCores = read32(first, layout.numFComputeCores);
    info.numIoLinks = read32(first, layout.numIoLinks);
    info.numSdmaEngines = read32(first, layout.numSdmaEngines);
    info.numSdmaXgmiEngines = read32(first, layout.numSdmaXgmiEngines);
    info.layoutBytes = written;
    return true;
  }
  error = library + " wrote a " + std::to_string(written) +
          "-byte HsaNodeProperties for " + nodeText(node) +
          "; sdma knows the layouts of";
  for (const NodeLayout &layout : kNodeLayouts)
    error += std::string(&layout == kNodeLayouts ? " " : ", ") +
             std::to_string(layout.bytes) + " bytes (" + layout.source + ")";
  error += " and will not guess where NumIOLinks and NumSdmaEngines are";
  return false;
}

std::vector<SdmaRoute>
sdma::rt::hsakmt::planSdmaRoutes(const std::vector<SdmaPeerLink> &links,
                                 uint32_t numSdmaEngines,
                                 uint32_t numSdmaXgmiEngines) {
  uint32_t engines = numSdmaEngines + numSdmaXgmiEngines;
  uint32_t owned = engines >= 32 ? ~0u : (1u << engines) - 1;
  unsigned peersOn[32] = {};
  std::map<std::pair<uint32_t, int>, size_t> queueOf;
  std::vector<SdmaRoute> routes;
  for (const SdmaPeerLink &link : links) {
    SdmaRoute route;
    route.peer = link.peer;
    uint32_t candidates = link.recSdmaEngIdMask & owned;
    for (int engine = 0; engine < 32; ++engine)
      if ((candidates >> engine & 1) &&
          (route.engine < 0 || peersOn[engine] < peersOn[route.engine]))
        route.engine = engine;
    if (route.engine >= 0) {
      ++peersOn[route.engine];
      route.queueType = kQueueTypeSdmaByEngId;
    } else {
      route.queueType =
          link.xgmi && numSdmaXgmiEngines ? kQueueTypeSdmaXgmi : kQueueTypeSdma;
    }
    auto key = std::make_pair(route.queueType, route.engine);
    route.queue = queueOf.emplace(key, queueOf.size()).first->second;
    routes.push_back(route);
  }
  return routes;
}

bool sdma::rt::hsakmt::planSdmaQueues(const HsaKmtApi &api, uint32_t node,
                                      const std::vector<uint32_t> &peers,
                                      SdmaQueuePlan &plan, std::string &error) {
  uint32_t numNodes = 0;
  if (!openKfd(api, numNodes, error))
    return false;
  bool ok = planOpen(api, node, numNodes, peers, plan, error);
  return closeKfd(api, ok, error);
}

bool sdma::rt::hsakmt::listGpuNodes(const HsaKmtApi &api,
                                    std::vector<uint32_t> &nodes,
                                    std::string &error) {
  uint32_t numNodes = 0;
  if (!openKfd(api, numNodes, error))
    return false;
  bool ok = true;
  nodes.clear();
  for (uint32_t node = 0; ok && node < numNodes; ++node) {
    HsaNodeInfo info;
    ok = api.nodeInfo(node, info, error);
    if (ok && info.numFComputeCores > 0)
      nodes.push_back(node);
  }
  return closeKfd(api, ok, error);
}

std::unique_ptr<SdmaQueueSet>
SdmaQueueSet::create(const HsaKmtApi &api, uint32_t node,
                     const SdmaQueueOptions &options, std::string &error) {
  if (!validRingBytes(options.ringBytes, error))
    return nullptr;
  std::unique_ptr<SdmaQueueSet> set(
      new SdmaQueueSet(api, node, options.ringBytes));
  uint32_t numNodes = 0;
  if (!openKfd(api, numNodes, error))
    return nullptr;
  set->kfdOpen_ = true;
  SdmaQueuePlan plan;
  bool ok = planOpen(api, node, numNodes, options.peers, plan, error);
  if (ok && plan.routes.empty()) {
    error = nodeText(node) + " has no peer GPU to create SDMA queues for";
    ok = false;
  }
  for (const SdmaRoute &route : plan.routes)
    if (ok && route.queue == set->queues_.size())
      ok = set->createQueue(route, error);
  if (!ok) {
    std::string cleanup;
    if (!set->release(cleanup))
      error += "; cleaning up: " + cleanup;
    return nullptr;
  }
  set->routes_ = plan.routes;
  return set;
}

bool SdmaQueueSet::createQueue(const SdmaRoute &route, std::string &error) {
  std::string where = nodeText(node_) + ", " +
                      queueText(route.engine, route.queueType) + ", " +
                      std::to_string(ringBytes_) + "-byte ring";
  void *ring = nullptr;
  HsaStatus status = api_.hsaKmtAllocMemory(node_, ringBytes_,
                                            HsaMemFlags{kRingMemFlags}, &ring);
  if (status != kHsaSuccess || !ring) {
    error = status != kHsaSuccess
                ? HsaKmtApi::describe("hsaKmtAllocMemory", status, where)
                : "hsaKmtAllocMemory returned no address (" + where + ")";
    return false;
  }
  queues_.push_back(Queue{ring, route.engine, route.queueType});
  Queue &queue = queues_.back();
  uint64_t alternateVa = 0;
  status = api_.hsaKmtMapMemoryToGPU(ring, ringBytes_, &alternateVa);
  if (status != kHsaSuccess) {
    error = HsaKmtApi::describe("hsaKmtMapMemoryToGPU", status, where);
    return false;
  }
  queue.mapped = true;
  HsaQueueResource resource{};
  status = api_.hsaKmtCreateQueueExt(
      node_, route.queueType, /*QueuePercentage=*/100, kQueuePriorityMaximum,
      route.engine < 0 ? 0 : uint32_t(route.engine), ring, ringBytes_,
      /*Event=*/nullptr, &resource);
  if (status != kHsaSuccess) {
    error = HsaKmtApi::describe("hsaKmtCreateQueueExt", status, where);
    return false;
  }
  queue.created = true;
  queue.queueId = resource.QueueId;
  if (!resource.QueueDoorBell || !resource.QueueWptrValue ||
      !resource.QueueRptrValue) {
    error = "hsaKmtCreateQueueExt returned a queue without a doorbell, read "
            "or write pointer (" +
            where + ")";
    return false;
  }
  rings_.push_back({uint64_t(uintptr_t(ring)), ringBytes_,
                    resource.QueueRptrValue, resource.QueueWptrValue,
                    resource.QueueDoorBell, route.engine, int(node_)});
  return true;
}

const SdmaRingDesc *SdmaQueueSet::ringFor(uint32_t peer) const {
  for (const SdmaRoute &route : routes_)
    if (route.peer == peer && route.queue < rings_.size())
      return &rings_[route.queue];
  return nullptr;
}

bool SdmaQueueSet::release(std::string &error) {
  bool ok = true;
  auto check = [&](const char *call, HsaStatus status,
                   const std::string &where) {
    if (status != kHsaSuccess && ok) {
      error = HsaKmtApi::describe(call, status, where);
      ok = false;
    }
  };
  for (auto it = queues_.rbegin(); it != queues_.rend(); ++it) {
    std::string where =
        nodeText(node_) + ", " + queueText(it->engine, it->queueType);
    if (it->created)
      check("hsaKmtDestroyQueue", api_.hsaKmtDestroyQueue(it->queueId), where);
    if (it->mapped)
      check("hsaKmtUnmapMemoryToGPU", api_.hsaKmtUnmapMemoryToGPU(it->ring),
            where);
    check("hsaKmtFreeMemory", api_.hsaKmtFreeMemory(it->ring, ringBytes_),
          where);
  }
  queues_.clear();
  rings_.clear();
  routes_.clear();
  if (kfdOpen_) {
    kfdOpen_ = false;
    check("hsaKmtCloseKFD", api_.hsaKmtCloseKFD(), "");
  }
  return ok;
}

SdmaQueueSet::~SdmaQueueSet() {
  std::string ignored;
  release(ignored);
}
