//===- HsaKmtQueue.h - SDMA queues per engine via libhsakmt ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The host side of GPU-initiated SDMA on AMD: a running kernel writes SDMA
// packets into an engine's ring and rings its doorbell (as mori's "anvil"
// and rocSHMEM do). Here: libhsakmt (ROCm's thunk to the KFD driver) is
// dlopen'ed, an SDMA engine is picked per peer GPU from the IO links'
// recommended-engine masks, one user-mode SDMA queue is created per engine
// used, and the kernel gets a plain descriptor per queue (SdmaRingDesc).
//
// NEVER RAN ON AN AMD GPU: verified against a fake libhsakmt only
// (runtime/test/amd/FakeHsaKmt.cpp, runtime/test/amd/HsaKmtQueueTest.cpp).
//
// The libhsakmt types below are our own declarations of the types and
// fields sdma uses, ABI-exact with libhsakmt/include/hsakmt/hsakmttypes.h of
// ROCm/ROCR-Runtime at c7785a6 (2024-10-23) and ROCm/rocm-systems
// projects/rocr-runtime at 1b1610f (2025-08-09): sizes and offsets were
// checked by compiling against both headers and are static_assert'ed here.
// HsaNodeProperties is not declared: its layout differs between those
// versions (HsaKmtQueue.cpp reads it by the size the library writes).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_AMD_HSAKMTQUEUE_H
#define SDMA_RUNTIME_LIB_AMD_HSAKMTQUEUE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sdma::rt {

/// One user-mode SDMA queue, as the ring-writer kernel sees it. Addresses
/// are plain 64-bit virtual addresses (valid on the host and the GPU), so
/// the kernel side needs no libhsakmt type. readPtr, writePtr and doorbell
/// are the addresses of the queue's 64-bit read pointer (advanced by the
/// engine), write pointer and doorbell; the pointers count bytes into the
/// ring. engine is the SDMA engine id on `node`, or -1 for a generic queue
/// whose engine KFD chose.
struct SdmaRingDesc {
  uint64_t ring;
  uint64_t ringBytes;
  uint64_t readPtr;
  uint64_t writePtr;
  uint64_t doorbell;
  int engine;
  int node;
};
static_assert(sizeof(SdmaRingDesc) == 48, "two ints after five uint64s");

namespace hsakmt {

/// HSAKMT_STATUS (a 4-byte enum); 0 is success.
using HsaStatus = int;
constexpr HsaStatus kHsaSuccess = 0;

#pragma pack(push, 4) // hsakmttypes.h packs all its types to 4 bytes

struct HsaVersionInfo {
  uint32_t KernelInterfaceMajorVersion;
  uint32_t KernelInterfaceMinorVersion;
};

struct HsaSystemProperties {
  uint32_t NumNodes;
  uint32_t PlatformOem;
  uint32_t PlatformId;
  uint32_t PlatformRev;
};

struct HsaIoLinkProperties {
  uint32_t IoLinkType; // HSA_IOLINKTYPE
  uint32_t VersionMajor;
  uint32_t VersionMinor;
  uint32_t NodeFrom;
  uint32_t NodeTo;
  uint32_t Weight;
  uint32_t MinimumLatency;
  uint32_t MaximumLatency;
  uint32_t MinimumBandwidth;
  uint32_t MaximumBandwidth;
  uint32_t RecTransferSize;
  uint32_t RecSdmaEngIdMask; // KFD >= 1.17; 0 on older drivers
  uint32_t Flags;            // HSA_LINKPROPERTY
};

/// The header's unions (HSAuint32* / HSAuint64* / HSAuint64) as their
/// 64-bit value. ErrorReason is also read by hsaKmtCreateQueueExt (an
/// optional event payload): callers zero the whole struct first.
struct HsaQueueResource {
  uint64_t QueueId;
  uint64_t QueueDoorBell;
  uint64_t QueueWptrValue;
  uint64_t QueueRptrValue;
  uint64_t ErrorReason;
};

/// HsaMemFlags: a union of a 32-bit bit-field and its Value; passed by value
/// like a uint32_t.
struct HsaMemFlags {
  uint32_t Value;
};

#pragma pack(pop)

static_assert(sizeof(HsaVersionInfo) == 8, "hsakmttypes.h: HsaVersionInfo");
static_assert(sizeof(HsaSystemProperties) == 16,
              "hsakmttypes.h: HsaSystemProperties");
static_assert(sizeof(HsaIoLinkProperties) == 52 &&
                  offsetof(HsaIoLinkProperties, NodeTo) == 16 &&
                  offsetof(HsaIoLinkProperties, Weight) == 20 &&
                  offsetof(HsaIoLinkProperties, RecSdmaEngIdMask) == 44,
              "hsakmttypes.h: HsaIoLinkProperties");
static_assert(sizeof(HsaQueueResource) == 40 &&
                  offsetof(HsaQueueResource, QueueDoorBell) == 8 &&
                  offsetof(HsaQueueResource, QueueWptrValue) == 16 &&
                  offsetof(HsaQueueResource, QueueRptrValue) == 24 &&
                  offsetof(HsaQueueResource, ErrorReason) == 32,
              "hsakmttypes.h: HsaQueueResource");
static_assert(sizeof(HsaMemFlags) == 4, "hsakmttypes.h: HsaMemFlags");

/// HsaMemFlags bits (the header's bit-field order; PageSize 0 = 4 KiB).
namespace memflag {
constexpr uint32_t kNonPaged = 1u << 0;
constexpr uint32_t kHostAccess = 1u << 6;
constexpr uint32_t kExecuteAccess = 1u << 12;
constexpr uint32_t kCoarseGrain = 1u << 13;
constexpr uint32_t kNoNUMABind = 1u << 16;
constexpr uint32_t kUncached = 1u << 17;
} // namespace memflag

/// The flags of an SDMA ring, as mori's anvil allocates it: pinned, host
/// visible, executable queue memory, uncached, 4 KiB pages.
constexpr uint32_t kRingMemFlags = memflag::kNonPaged | memflag::kHostAccess |
                                   memflag::kNoNUMABind |
                                   memflag::kExecuteAccess | memflag::kUncached;

/// HSA_IOLINKTYPE's xGMI value.
constexpr uint32_t kIoLinkTypeXgmi = 11;

/// HSA_QUEUE_TYPE values (a 4-byte enum).
constexpr uint32_t kQueueTypeSdma = 2;
constexpr uint32_t kQueueTypeSdmaXgmi = 5;
constexpr uint32_t kQueueTypeSdmaByEngId = 6;

/// HSA_QUEUE_PRIORITY: its enumerators span -3..0xFFFFFFFF, so GCC and Clang
/// give it 8 bytes (checked against the header): passed as int64_t.
using HsaQueuePriority = int64_t;
constexpr HsaQueuePriority kQueuePriorityMaximum = 3;

/// KFD's interface version that added HSA_QUEUE_SDMA_BY_ENG_ID and
/// RecSdmaEngIdMask (kfd_ioctl.h "1.17 - Add SDMA queue creation with
/// target SDMA engine ID").
constexpr uint32_t kMinKfdMinor = 17;

#define SDMA_HSAKMT_FUNCTIONS(X)                                               \
  X(hsaKmtOpenKFD, ())                                                         \
  X(hsaKmtCloseKFD, ())                                                        \
  X(hsaKmtGetVersion, (HsaVersionInfo *))                                      \
  X(hsaKmtAcquireSystemProperties, (HsaSystemProperties *))                    \
  X(hsaKmtGetNodeProperties, (uint32_t, void *))                               \
  X(hsaKmtGetNodeIoLinkProperties,                                             \
    (uint32_t, uint32_t, HsaIoLinkProperties *))                               \
  X(hsaKmtAllocMemory, (uint32_t, uint64_t, HsaMemFlags, void **))             \
  X(hsaKmtFreeMemory, (void *, uint64_t))                                      \
  X(hsaKmtMapMemoryToGPU, (void *, uint64_t, uint64_t *))                      \
  X(hsaKmtUnmapMemoryToGPU, (void *))                                          \
  X(hsaKmtCreateQueueExt,                                                      \
    (uint32_t, uint32_t, uint32_t, HsaQueuePriority, uint32_t, void *,         \
     uint64_t, void *, HsaQueueResource *))                                    \
  X(hsaKmtDestroyQueue, (uint64_t))

/// "HSAKMT_STATUS_NO_MEMORY", or null for a value the header does not name.
const char *statusName(HsaStatus status);

/// The HsaNodeProperties fields sdma reads.
struct HsaNodeInfo {
  uint32_t numFComputeCores = 0; // 0 on a CPU-only node
  uint32_t numIoLinks = 0;
  uint32_t numSdmaEngines = 0;     // PCIe-optimised engines: ids 0..n-1
  uint32_t numSdmaXgmiEngines = 0; // xGMI engines: the ids after those
  uint32_t layoutBytes = 0;        // sizeof(HsaNodeProperties) in the library
};

/// libhsakmt's entry points, once loaded. The library is never unloaded
/// (libhsakmt itself links with -z nodelete).
struct HsaKmtApi {
#define SDMA_DECLARE(name, args) HsaStatus(*name) args = nullptr;
  SDMA_HSAKMT_FUNCTIONS(SDMA_DECLARE)
#undef SDMA_DECLARE
  /// The name or path it was loaded from.
  std::string library;

  /// Loads `path`, else $SDMA_HSAKMT_LIB, else libhsakmt.so.1 then
  /// libhsakmt.so. Null with `error` where the library or one of its entry
  /// points is missing.
  static std::unique_ptr<HsaKmtApi> load(const std::string &path,
                                         std::string &error);

  /// "hsaKmtX failed: HSAKMT_STATUS_NO_MEMORY (6) (node 1, engine 2)".
  static std::string describe(const char *call, HsaStatus status,
                              const std::string &where);

  /// Reads node `node`'s properties (KFD open, system properties acquired).
  bool nodeInfo(uint32_t node, HsaNodeInfo &info, std::string &error) const;
};

/// A peer as the engine choice sees it: the IO link from the local node.
struct SdmaPeerLink {
  uint32_t peer = 0;
  uint32_t recSdmaEngIdMask = 0;
  bool xgmi = false;
};

/// Where a peer's copies go: a queue on `engine` (kQueueTypeSdmaByEngId),
/// or a generic queue (engine -1, kQueueTypeSdma or kQueueTypeSdmaXgmi).
/// `queue` indexes the queues in order of creation.
struct SdmaRoute {
  uint32_t peer = 0;
  int engine = -1;
  uint32_t queueType = kQueueTypeSdmaByEngId;
  size_t queue = 0;
};

/// The engine rule. Peers in the order given (SdmaQueueSet sorts them by
/// node id). A peer's candidates are the engines its link's
/// RecSdmaEngIdMask names that the local node owns (ids below
/// numSdmaEngines + numSdmaXgmiEngines: KFD rejects any other id). It gets
/// the candidate fewest earlier peers got, ties to the lowest id: a one-bit
/// mask (MI300X, 8 GPUs, SPX) is followed exactly, a wide mask is spread
/// over the peers. No candidate (no recommendation, or a CPX/DPX partition
/// whose mask names engines of the whole device) gives a generic queue:
/// SDMA_XGMI for an xGMI link where the node has xGMI engines, else SDMA,
/// one shared by all such peers, on an engine KFD picks among the node's
/// own. Queues are numbered in order of first use.
std::vector<SdmaRoute> planSdmaRoutes(const std::vector<SdmaPeerLink> &links,
                                      uint32_t numSdmaEngines,
                                      uint32_t numSdmaXgmiEngines);

/// What the set would create for `node`: its properties and the routes.
struct SdmaQueuePlan {
  uint32_t node = 0;
  HsaNodeInfo info;
  std::vector<SdmaPeerLink> links;
  std::vector<SdmaRoute> routes;
  size_t queueCount = 0;
};

/// Reads the topology and plans the routes from GPU node `node` to `peers`
/// (every GPU node it has an IO link to where empty). Opens and closes KFD;
/// creates nothing. Fails on KFD < 1.17.
bool planSdmaQueues(const HsaKmtApi &api, uint32_t node,
                    const std::vector<uint32_t> &peers, SdmaQueuePlan &plan,
                    std::string &error);

/// The GPU nodes libhsakmt reports. Opens and closes KFD; fails on KFD <
/// 1.17 like planSdmaQueues.
bool listGpuNodes(const HsaKmtApi &api, std::vector<uint32_t> &nodes,
                  std::string &error);

struct SdmaQueueOptions {
  /// Ring size: a power of two from 4 KiB to 2 GiB (KFD's ring_size is
  /// 32-bit).
  uint64_t ringBytes = 64 * 1024;
  /// The peer nodes; empty: every GPU node linked to the local node.
  std::vector<uint32_t> peers;
};

/// The SDMA queues of one GPU node, one per engine used. Holds KFD open
/// (hsaKmtOpenKFD is reference-counted) until released. Never calls
/// hsaKmtReleaseSystemProperties: it tears down the process's doorbell
/// mappings and apertures, which every queue of the process (ROCr's
/// included) depends on. `api` must outlive the set.
class SdmaQueueSet {
public:
  /// Plans (planSdmaQueues) and, per queue: allocates its ring
  /// (hsaKmtAllocMemory on `node`, kRingMemFlags), maps it to the GPU and
  /// creates the queue (priority maximum, 100 percent). Null with `error`
  /// on failure, after undoing everything done.
  static std::unique_ptr<SdmaQueueSet> create(const HsaKmtApi &api,
                                              uint32_t node,
                                              const SdmaQueueOptions &options,
                                              std::string &error);
  ~SdmaQueueSet();
  SdmaQueueSet(const SdmaQueueSet &) = delete;
  SdmaQueueSet &operator=(const SdmaQueueSet &) = delete;

  const std::vector<SdmaRingDesc> &rings() const { return rings_; }
  const std::vector<SdmaRoute> &routes() const { return routes_; }
  /// The ring `peer`'s copies go to, or null.
  const SdmaRingDesc *ringFor(uint32_t peer) const;

  /// Destroys the queues, unmaps and frees their rings (reverse order of
  /// creation) and closes KFD. Every step is tried; false with the first
  /// failure in `error`. The destructor calls it if not called.
  bool release(std::string &error);

private:
  struct Queue {
    void *ring = nullptr;
    int engine = -1;
    uint32_t queueType = kQueueTypeSdmaByEngId;
    bool mapped = false;
    bool created = false;
    uint64_t queueId = 0;
  };
  SdmaQueueSet(const HsaKmtApi &api, uint32_t node, uint64_t ringBytes)
      : api_(api), node_(node), ringBytes_(ringBytes) {}
  bool createQueue(const SdmaRoute &route, std::string &error);

  const HsaKmtApi &api_;
  uint32_t node_;
  uint64_t ringBytes_;
  bool kfdOpen_ = false;
  std::vector<Queue> queues_;
  std::vector<SdmaRingDesc> rings_;
  std::vector<SdmaRoute> routes_;
};

} // namespace hsakmt
} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_AMD_HSAKMTQUEUE_H
