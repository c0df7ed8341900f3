//===- FakeHsaKmt.cpp - a scripted libhsakmt for the queue path's tests ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Exports the libhsakmt entry points sdma's queue path uses, with the
// checks libhsakmt and KFD make that the path could trip (ROCR-Runtime
// libhsakmt/src/{queues,memory,topology,openclose}.c; KFD's
// kfd_ioctl_create_queue: an engine id past the node's engines, a ring size
// that is not a power of two, a full engine). Stricter than libhsakmt where
// order matters: a ring must be mapped when its queue is created and
// destroyed, and unmapped when freed. HsaNodeProperties is written in the
// real layouts, declared here field by field from hsakmttypes.h (not from
// the offsets HsaKmtQueue.cpp uses), so the test cross-checks them.
//
//===----------------------------------------------------------------------===//

#include "FakeHsaKmt.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum Status : int {
  kSuccess = 0,
  kError = 1,
  kInvalidParameter = 3,
  kInvalidNodeUnit = 5,
  kNoMemory = 6,
  kNotOpened = 20,
};

#pragma pack(push, 4)  // as hsakmttypes.h
struct NodeProps2024 { // ROCR-Runtime c7785a6 (2024-10-23)
  uint32_t NumCPUCores, NumFComputeCores, NumMemoryBanks, NumCaches, NumIOLinks,
      CComputeIdLo, FComputeIdLo, Capability, MaxWavesPerSIMD, LDSSizeInKB,
      GDSSizeInKB, WaveFrontSize, NumShaderBanks, NumArrays, NumCUPerArray,
      NumSIMDPerCU, MaxSlotsScratchCU, EngineId, OverrideEngineId;
  uint16_t VendorId, DeviceId;
  uint32_t LocationId;
  uint64_t LocalMemSize;
  uint32_t MaxEngineClockMhzFCompute, MaxEngineClockMhzCCompute;
  int32_t DrmRenderMinor;
  uint16_t MarketingName[64];
  uint8_t AMDName[64];
  uint32_t uCodeEngineVersions;
  uint64_t DebugProperties, HiveID;
  uint32_t NumSdmaEngines, NumSdmaXgmiEngines;
  uint8_t NumSdmaQueuesPerEngine, NumCpQueues, NumGws, Integrated;
  uint32_t Domain;
  uint64_t UniqueID;
  uint32_t VGPRSizePerCU, SGPRSizePerCU, NumXcc, KFDGpuID, FamilyID;
};
struct NodeProps2025 { // rocm-systems 1b1610f (2025-08-09)
  uint32_t NumCPUCores, NumFComputeCores, NumNeuralCores, NumMemoryBanks,
      NumCaches, NumIOLinks, CComputeIdLo, FComputeIdLo, Capability,
      Capability2, MaxWavesPerSIMD, LDSSizeInKB, GDSSizeInKB, WaveFrontSize,
      NumShaderBanks, NumArrays, NumCUPerArray, NumSIMDPerCU, MaxSlotsScratchCU,
      EngineId, OverrideEngineId;
  uint16_t VendorId, DeviceId;
  uint32_t LocationId;
  uint64_t LocalMemSize;
  uint32_t MaxEngineClockMhzFCompute, MaxEngineClockMhzCCompute;
  int32_t DrmRenderMinor;
  uint16_t MarketingName[64];
  uint8_t AMDName[64];
  uint32_t uCodeEngineVersions;
  uint64_t DebugProperties, HiveID;
  uint32_t NumSdmaEngines, NumSdmaXgmiEngines;
  uint8_t NumSdmaQueuesPerEngine, NumCpQueues, NumGws, Integrated;
  uint32_t Domain;
  uint64_t UniqueID;
  uint32_t VGPRSizePerCU, SGPRSizePerCU, NumXcc, KFDGpuID, FamilyID;
};
struct NodePropsCwsr : NodeProps2025 { // ROCR-Runtime 04743d9
  uint32_t CwsrSize, CtlStackSize;
};
struct NodePropsUnknown : NodeProps2024 {
  uint32_t Extra;
};
#pragma pack(pop)
// What compiling against the real headers gave.
static_assert(sizeof(NodeProps2024) == 360 &&
                  offsetof(NodeProps2024, NumIOLinks) == 16 &&
                  offsetof(NodeProps2024, LocationId) == 80 &&
                  offsetof(NodeProps2024, HiveID) == 308 &&
                  offsetof(NodeProps2024, NumSdmaEngines) == 316 &&
                  offsetof(NodeProps2024, NumSdmaXgmiEngines) == 320 &&
                  offsetof(NodeProps2024, KFDGpuID) == 352,
              "hsakmttypes.h at c7785a6");
static_assert(sizeof(NodeProps2025) == 368 &&
                  offsetof(NodeProps2025, NumIOLinks) == 20 &&
                  offsetof(NodeProps2025, LocationId) == 88 &&
                  offsetof(NodeProps2025, NumSdmaEngines) == 324 &&
                  offsetof(NodeProps2025, NumSdmaXgmiEngines) == 328 &&
                  offsetof(NodeProps2025, KFDGpuID) == 360,
              "hsakmttypes.h at 1b1610f");
static_assert(sizeof(NodePropsCwsr) == 376 && sizeof(NodePropsUnknown) == 364,
              "appended fields");

struct Allocation {
  uint64_t bytes;
  uint32_t node;
  bool mapped = false;
};

struct Queue {
  uint64_t readPtr = 0, writePtr = 0;
  uint32_t doorbell[2] = {};
  void *ring;
  int engine;
};

struct Fake {
  std::mutex mutex;
  FakeHsaKmtConfig config;
  std::vector<FakeHsaKmtNode> nodes;
  std::vector<FakeHsaKmtLink> links;
  std::vector<FakeHsaKmtCall> calls;
  int open = 0;
  bool acquired = false;
  int allocs = 0, maps = 0, creates = 0, destroys = 0, generic = 0;
  std::map<void *, Allocation> memory;
  std::map<uint64_t, std::unique_ptr<Queue>> queues;
};

/// The machine $SDMA_FAKE_HSAKMT_MACHINE names (FakeHsaKmt.h).
void scriptFromEnvironment(Fake &f) {
  const char *name = std::getenv("SDMA_FAKE_HSAKMT_MACHINE");
  if (!name || std::strncmp(name, "mi300x", 6) != 0)
    return;
  if (std::strcmp(name, "mi300x-kfd-1.16") == 0)
    f.config.kfdMinor = 16;
  f.nodes.push_back({96, 0, 0, 0});
  for (uint32_t g = 1; g <= 8; ++g) {
    f.nodes.push_back({0, 1216, 2, 14});
    f.links.push_back({g, 0, 2, 20, 0x3});
    for (uint32_t peer = 1; peer <= 8; ++peer)
      if (peer != g)
        f.links.push_back(
            {g, peer, 11, 15, 1u << kFakeMi300xEngine[g - 1][peer - 1]});
  }
}

Fake &fake() {
  static Fake *instance = [] {
    auto *f = new Fake;
    scriptFromEnvironment(*f);
    return f;
  }();
  return *instance;
}

/// Records a call; `status` is what it returns.
int record(const char *name, std::initializer_list<uint64_t> args, int status,
           std::initializer_list<uint64_t> out = {}) {
  FakeHsaKmtCall call{};
  std::strncpy(call.name, name, sizeof(call.name) - 1);
  size_t i = 0;
  for (uint64_t arg : args)
    call.args[i++] = arg;
  i = 0;
  for (uint64_t value : out)
    call.out[i++] = value;
  call.status = status;
  fake().calls.push_back(call);
  return status;
}

uint64_t addr(const void *pointer) { return uint64_t(uintptr_t(pointer)); }

uint32_t linksFrom(uint32_t node) {
  uint32_t count = 0;
  for (const FakeHsaKmtLink &link : fake().links)
    count += link.from == node;
  return count;
}

template <class Props> void fillNode(Props &props, uint32_t node) {
  const FakeHsaKmtNode &n = fake().nodes[node];
  props.NumCPUCores = n.cpuCores;
  props.NumFComputeCores = n.computeCores;
  props.NumMemoryBanks = 1;
  props.NumCaches = n.computeCores ? 200 : 3;
  props.NumIOLinks = linksFrom(node);
  props.LocationId = 0x100 * node;
  props.NumSdmaEngines = n.sdmaEngines;
  props.NumSdmaXgmiEngines = n.sdmaXgmiEngines;
  props.NumSdmaQueuesPerEngine = uint8_t(n.queuesPerEngine);
  props.KFDGpuID = n.computeCores ? 0x1000 + node : 0;
}

template <class Props> void writeNode(void *out, uint32_t node) {
  Props props{};
  fillNode(props, node);
  std::memcpy(out, &props, sizeof(props));
}

int queueCreateError(uint32_t node, uint32_t type, uint32_t percent,
                     uint32_t engine, void *ring, uint64_t bytes, int &used) {
  Fake &f = fake();
  const FakeHsaKmtNode &n = f.nodes[node];
  uint32_t engines = n.sdmaEngines + n.sdmaXgmiEngines;
  auto it = f.memory.find(ring);
  if (type == 6 && (f.config.kfdMajor == 1 && f.config.kfdMinor < 17))
    return kError; // KFD: -ENOTSUPP
  if (percent > 100 || !bytes || (bytes & (bytes - 1)))
    return kError; // -EINVAL
  if (it == f.memory.end() || !it->second.mapped || it->second.bytes < bytes ||
      it->second.node != node)
    return kError; // kfd_queue_acquire_buffers: ring not mapped on the GPU
  if (type == 6) {
    if (engine >= engines)
      return kError; // "sdma_engine_id exceeds maximum id"
    used = int(engine);
  } else if (type == 2 && n.sdmaEngines) {
    used = int(f.generic++ % n.sdmaEngines);
  } else if (type == 5 && n.sdmaXgmiEngines) {
    used = int(n.sdmaEngines + f.generic++ % n.sdmaXgmiEngines);
  } else {
    return kError; // no engine of that kind
  }
  uint32_t onEngine = 0;
  for (const auto &[id, queue] : f.queues)
    onEngine += queue->engine == used;
  if (onEngine >= n.queuesPerEngine)
    return kError; // "No more SDMA queue to allocate"
  return kSuccess;
}

} // namespace

FAKE_EXPORT void fakeHsaKmtSetup(const FakeHsaKmtConfig *config,
                                 const FakeHsaKmtNode *nodes, uint32_t numNodes,
                                 const FakeHsaKmtLink *links,
                                 uint32_t numLinks) {
  Fake &f = fake();
  std::lock_guard<std::mutex> lock(f.mutex);
  for (auto &[pointer, allocation] : f.memory)
    std::free(pointer);
  f.memory.clear();
  f.queues.clear();
  f.calls.clear();
  f.config = *config;
  f.nodes.assign(nodes, nodes + numNodes);
  f.links.assign(links, links + numLinks);
  f.open = 0;
  f.acquired = false;
  f.allocs = f.maps = f.creates = f.destroys = f.generic = 0;
}

FAKE_EXPORT const FakeHsaKmtCall *fakeHsaKmtCalls(size_t *count) {
  *count = fake().calls.size();
  return fake().calls.data();
}

FAKE_EXPORT void fakeHsaKmtLive(FakeHsaKmtLive *live) {
  Fake &f = fake();
  *live = FakeHsaKmtLive{};
  live->kfdOpen = f.open;
  live->allocations = int(f.memory.size());
  for (const auto &[pointer, allocation] : f.memory)
    live->mappings += allocation.mapped;
  live->queues = int(f.queues.size());
  for (const auto &[id, queue] : f.queues)
    ++live->engine[queue->engine];
}

FAKE_EXPORT bool fakeHsaKmtQueue(uint64_t queueId, uint64_t *readPtr,
                                 uint64_t *writePtr, uint64_t *doorbell) {
  auto it = fake().queues.find(queueId);
  if (it == fake().queues.end())
    return false;
  *readPtr = addr(&it->second->readPtr);
  *writePtr = addr(&it->second->writePtr);
  *doorbell = addr(it->second->doorbell);
  return true;
}

#define FAKE_CHECK_OPEN(name, ...)                                             \
  if (!fake().open)                                                            \
    return record(name, {__VA_ARGS__}, kNotOpened);

FAKE_EXPORT int hsaKmtOpenKFD() {
  if (fake().config.openStatus == kSuccess)
    ++fake().open;
  return record("hsaKmtOpenKFD", {}, fake().config.openStatus);
}

FAKE_EXPORT int hsaKmtCloseKFD() {
  FAKE_CHECK_OPEN("hsaKmtCloseKFD");
  if (--fake().open == 0)
    fake().acquired = false;
  return record("hsaKmtCloseKFD", {}, kSuccess);
}

FAKE_EXPORT int hsaKmtGetVersion(uint32_t *version) {
  FAKE_CHECK_OPEN("hsaKmtGetVersion");
  version[0] = fake().config.kfdMajor;
  version[1] = fake().config.kfdMinor;
  return record("hsaKmtGetVersion", {}, kSuccess, {version[0], version[1]});
}

FAKE_EXPORT int hsaKmtAcquireSystemProperties(uint32_t *system) {
  FAKE_CHECK_OPEN("hsaKmtAcquireSystemProperties");
  std::memset(system, 0, 16);
  system[0] = uint32_t(fake().nodes.size());
  fake().acquired = true;
  return record("hsaKmtAcquireSystemProperties", {}, kSuccess, {system[0]});
}

FAKE_EXPORT int hsaKmtGetNodeProperties(uint32_t node, void *props) {
  FAKE_CHECK_OPEN("hsaKmtGetNodeProperties", node);
  if (!fake().acquired || node >= fake().nodes.size())
    return record("hsaKmtGetNodeProperties", {node}, kInvalidNodeUnit);
  switch (fake().config.nodePropertiesBytes) {
  case 360:
    writeNode<NodeProps2024>(props, node);
    break;
  case 368:
    writeNode<NodeProps2025>(props, node);
    break;
  case 376:
    writeNode<NodePropsCwsr>(props, node);
    break;
  default:
    writeNode<NodePropsUnknown>(props, node);
    break;
  }
  return record("hsaKmtGetNodeProperties", {node}, kSuccess);
}

FAKE_EXPORT int hsaKmtGetNodeIoLinkProperties(uint32_t node, uint32_t count,
                                              void *out) {
  FAKE_CHECK_OPEN("hsaKmtGetNodeIoLinkProperties", node, count);
  if (!fake().acquired || node >= fake().nodes.size())
    return record("hsaKmtGetNodeIoLinkProperties", {node, count},
                  kInvalidNodeUnit);
  if (count > linksFrom(node))
    return record("hsaKmtGetNodeIoLinkProperties", {node, count},
                  kInvalidParameter);
  auto *link = static_cast<uint32_t *>(out); // 13 uint32_t each
  uint32_t written = 0;
  for (const FakeHsaKmtLink &l : fake().links) {
    if (l.from != node || written == count)
      continue;
    uint32_t props[13] = {l.type, 0, 0, l.from, l.to, l.weight,
                          0,      0, 0, 0,      0,    l.recSdmaEngIdMask,
                          0};
    std::memcpy(link + 13 * written++, props, sizeof(props));
  }
  return record("hsaKmtGetNodeIoLinkProperties", {node, count}, kSuccess);
}

FAKE_EXPORT int hsaKmtAllocMemory(uint32_t node, uint64_t bytes, uint32_t flags,
                                  void **address) {
  FAKE_CHECK_OPEN("hsaKmtAllocMemory", node, bytes, flags);
  Fake &f = fake();
  auto fail = [&](int status) {
    return record("hsaKmtAllocMemory", {node, bytes, flags}, status);
  };
  if (node >= f.nodes.size())
    return fail(kInvalidNodeUnit);
  bool coarseAndUncached = (flags >> 13 & 1) && (flags >> 17 & 1);
  if (!address || !bytes || bytes % 4096 || coarseAndUncached)
    return fail(kInvalidParameter);
  if (++f.allocs == f.config.failAllocAt)
    return fail(kNoMemory);
  *address = std::aligned_alloc(4096, bytes);
  std::memset(*address, 0xCC, bytes);
  f.memory[*address] = Allocation{bytes, node};
  return record("hsaKmtAllocMemory", {node, bytes, flags}, kSuccess,
                {addr(*address)});
}

FAKE_EXPORT int hsaKmtFreeMemory(void *address, uint64_t bytes) {
  FAKE_CHECK_OPEN("hsaKmtFreeMemory", addr(address), bytes);
  auto it = fake().memory.find(address);
  if (it == fake().memory.end() || it->second.mapped ||
      it->second.bytes != bytes)
    return record("hsaKmtFreeMemory", {addr(address), bytes}, kError);
  std::free(address);
  fake().memory.erase(it);
  return record("hsaKmtFreeMemory", {addr(address), bytes}, kSuccess);
}

FAKE_EXPORT int hsaKmtMapMemoryToGPU(void *address, uint64_t bytes,
                                     uint64_t *alternateVa) {
  FAKE_CHECK_OPEN("hsaKmtMapMemoryToGPU", addr(address), bytes);
  if (alternateVa)
    *alternateVa = 0;
  auto it = fake().memory.find(address);
  if (it == fake().memory.end() || it->second.mapped ||
      bytes > it->second.bytes || ++fake().maps == fake().config.failMapAt)
    return record("hsaKmtMapMemoryToGPU", {addr(address), bytes}, kError);
  it->second.mapped = true;
  return record("hsaKmtMapMemoryToGPU", {addr(address), bytes}, kSuccess);
}

FAKE_EXPORT int hsaKmtUnmapMemoryToGPU(void *address) {
  FAKE_CHECK_OPEN("hsaKmtUnmapMemoryToGPU", addr(address));
  auto it = fake().memory.find(address);
  if (it == fake().memory.end() || !it->second.mapped)
    return record("hsaKmtUnmapMemoryToGPU", {addr(address)}, kError);
  for (const auto &[id, queue] : fake().queues)
    if (queue->ring == address) // a live queue still reads this ring
      return record("hsaKmtUnmapMemoryToGPU", {addr(address)}, kError);
  it->second.mapped = false;
  return record("hsaKmtUnmapMemoryToGPU", {addr(address)}, kSuccess);
}

#ifndef FAKE_HSAKMT_WITHOUT_CREATE_QUEUE_EXT
FAKE_EXPORT int hsaKmtCreateQueueExt(uint32_t node, uint32_t type,
                                     uint32_t percent, int64_t priority,
                                     uint32_t engine, void *ring,
                                     uint64_t bytes, void *event,
                                     uint64_t *resource) {
  FAKE_CHECK_OPEN("hsaKmtCreateQueueExt", node, type, percent,
                  uint64_t(priority), engine, addr(ring), bytes, addr(event),
                  resource ? resource[4] : ~0ull);
  std::initializer_list<uint64_t> args = {
      node,       type,  percent,     uint64_t(priority), engine,
      addr(ring), bytes, addr(event), resource[4]};
  Fake &f = fake();
  bool scripted = ++f.creates == f.config.failCreateQueueAt;
  if (priority < -3 || priority > 3 || node >= f.nodes.size() ||
      (type != 1 && type != 2 && type != 5 && type != 6 && type != 21))
    return record("hsaKmtCreateQueueExt", args,
                  node >= f.nodes.size() ? kInvalidNodeUnit
                                         : kInvalidParameter);
  int used = -1;
  int status = queueCreateError(node, type, percent, engine, ring, bytes, used);
  if (scripted)
    status = kError;
  if (status != kSuccess)
    return record("hsaKmtCreateQueueExt", args, status);
  auto queue = std::make_unique<Queue>();
  queue->ring = ring;
  queue->engine = used;
  uint64_t id = addr(queue.get());
  resource[0] = id;
  resource[1] = addr(queue->doorbell);
  resource[2] = addr(&queue->writePtr);
  resource[3] = addr(&queue->readPtr);
  f.queues[id] = std::move(queue);
  return record("hsaKmtCreateQueueExt", args, kSuccess, {id, uint64_t(used)});
}
#endif

FAKE_EXPORT int hsaKmtDestroyQueue(uint64_t id) {
  FAKE_CHECK_OPEN("hsaKmtDestroyQueue", id);
  Fake &f = fake();
  auto it = f.queues.find(id);
  if (it == f.queues.end() || !f.memory.count(it->second->ring) ||
      !f.memory[it->second->ring].mapped ||
      ++f.destroys == f.config.failDestroyQueueAt)
    return record("hsaKmtDestroyQueue", {id}, kError);
  f.queues.erase(it);
  return record("hsaKmtDestroyQueue", {id}, kSuccess);
}
