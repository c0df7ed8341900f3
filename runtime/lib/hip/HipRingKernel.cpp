//===- HipRingKernel.cpp - kernel-submitted DMA on AMD GPUs ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "hip/HipRingKernel.h"

#include "amd/HsaKmtQueue.h"
#include "amd/RingDevice.h"
#include "comm/DmaSyncKernel.h"
#include "comm/GpuDmaKernel.h"
#include "hip/HipDmaKernel.h"
#include "hip/HipKernel.h"
#include "sdma/runtime/Ring.h"

#include <cstdlib>
#include <cstring>

using namespace sdma::rt;
using namespace sdma::rt::hip;
using namespace sdma::rt::hsakmt;

namespace {

/// Wavefronts writing each queue, and each ring's size.
constexpr int kWriters = 2;
constexpr uint64_t kRingBytes = 64 * 1024;
/// The writer's table (SdmaRingTable) with SdmaRingArgs within HIP's 4 KiB
/// of kernel arguments.
constexpr size_t kMaxTableWords = 500;

/// SdmaRingQueue and SdmaRingArgs (RingDevice.h) as the host fills them.
struct DeviceQueue {
  uint64_t ring, bytes, rptr, wptr, doorbell;
  uint64_t reserve, committed, id, fullWaits, arrive;
};
struct DeviceArgs {
  uint64_t buf, flags, ts, chunkBytes, queues, error, timeoutNs;
  int rank, pad;
};
static_assert(sizeof(DeviceQueue) == 80 && sizeof(DeviceArgs) == 64,
              "RingDevice.h's SdmaRingQueue and SdmaRingArgs");

class HipRingKernel : public CommKernel {
public:
  HipRingKernel(const HipApi &api, int ordinal,
                std::shared_ptr<const DmaProgram> program)
      : api_(api), ordinal_(ordinal), P_(std::move(program)), sync_(api),
        writer_(api) {}
  ~HipRingKernel() override {
    std::string ignored;
    if (queues_)
      (void)api_.hipFree(queues_);
    if (writerError_)
      (void)api_.hipFree(writerError_);
    if (set_)
      set_->release(ignored);
  }

  bool load(const std::string &arch, const std::string &cacheDirectory,
            std::string &error) {
    const PacketPlan &p = *P_->packets;
    // The sync kernel's arrays, and the writer's argument (its table of
    // the call's addresses within HIP's 4 KiB of kernel arguments).
    size_t tableWords = size_t(p.ranks) * (p.buffers.size() + 1) + 3;
    if (p.ranks > kDmaSyncMaxRanks || tableWords > kMaxTableWords) {
      error = "kernel-submitted DMA takes at most " +
              std::to_string(kDmaSyncMaxRanks) + " ranks and " +
              std::to_string(kMaxTableWords) + " table words; " +
              std::to_string(p.ranks) + " ranks of " +
              std::to_string(p.buffers.size()) + " buffers need " +
              std::to_string(tableWords);
      return false;
    }
    // HIP's ordinal is the KFD node's rank among GPU nodes only where no
    // visibility mask renumbers the devices.
    for (const char *mask : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                             "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"})
      if (const char *v = std::getenv(mask); v && *v) {
        error = std::string("kernel-submitted DMA finds its GPU's KFD node by "
                            "HIP's device order, which ") +
                mask + "=" + v +
                " changes: unset it (bind ranks with "
                "sdmaConfig_t::deviceOrdinal)";
        return false;
      }
    if (!check("hipSetDevice", api_.hipSetDevice(ordinal_), error) ||
        !openQueues(error))
      return false;
    std::optional<std::string> writer =
        emitCommunicatorRingWriter(*P_->packets, error);
    if (!writer)
      return false;
    CompileInfo info;
    info.arch = arch;
    std::string code;
    if (!loadHipDmaSync(api_, sync_, ordinal_, arch, cacheDirectory, error))
      return false;
    if (!HipKernel::build(std::string("#define SDMA_RING_WAVE 64\n") +
                              kRingHipPrelude + *writer,
                          "sdma_ring_write.hip", cacheDirectory, info, code,
                          error) ||
        !writer_.load(ordinal_, code, "sdma_ring_write_table", kWriters * 64,
                      error))
      return false;
    return true;
  }

  bool launch(const KernelLaunch &launch, std::string &error) override {
    const DmaProgram &P = *P_;
    LaunchTable T;
    if (!P.decode(launch, T, error))
      return false;
    if (!check("hipSetDevice", api_.hipSetDevice(ordinal_), error))
      return false;
    hipStream_t stream = static_cast<hipStream_t>(launch.stream);
    DmaSyncArgs sync = dmaSyncArgs(P, T);
    const int done = int(P.packets->done[size_t(P.rank)]);
    // A rank without queues (a push broadcast's leaves) only meets the
    // others at the barriers.
    return this->sync(stream, sync, DmaSyncOp::Enter, 0, 0, error) &&
           (P.packetQueues.empty() ||
            write(stream, T, launch.chunkBytes, error)) &&
           this->sync(stream, sync, DmaSyncOp::Poll, kDoneFlag, uint64_t(done),
                      error) &&
           this->sync(stream, sync, DmaSyncOp::Exit, 0, 0, error);
  }

private:
  /// One SDMA queue per engine queue of the rank, and their descriptors in
  /// device memory.
  bool openQueues(std::string &error) {
    api_hsakmt_ = HsaKmtApi::load("", error);
    if (!api_hsakmt_)
      return false;
    std::vector<uint32_t> nodes;
    if (!listGpuNodes(*api_hsakmt_, nodes, error))
      return false;
    if (ordinal_ < 0 || size_t(ordinal_) >= nodes.size()) {
      error = "HIP device " + std::to_string(ordinal_) + " has no KFD node (" +
              std::to_string(nodes.size()) + " GPU nodes)";
      return false;
    }
    SdmaQueueOptions options;
    options.ringBytes = kRingBytes;
    set_ = SdmaQueueSet::create(*api_hsakmt_, nodes[size_t(ordinal_)], options,
                                error);
    if (!set_)
      return false;
    const std::vector<SdmaRingDesc> &rings = set_->rings();
    const std::vector<size_t> &mine = P_->packetQueues;
    if (rings.size() < mine.size()) {
      error = "rank " + std::to_string(P_->rank) + "'s packets use " +
              std::to_string(mine.size()) + " engine queues, and KFD node " +
              std::to_string(nodes[size_t(ordinal_)]) + " gave " +
              std::to_string(rings.size()) +
              " SDMA queues (compile with fewer engines)";
      return false;
    }
    std::vector<DeviceQueue> queues(P_->packets->queues.size(), DeviceQueue{});
    for (size_t k = 0; k < mine.size(); ++k) {
      const SdmaRingDesc &d = rings[k];
      queues[mine[k]] =
          DeviceQueue{d.ring, d.ringBytes, d.readPtr, d.writePtr, d.doorbell,
                      0,      0,           mine[k],   0,          0};
    }
    void *q = nullptr, *e = nullptr;
    size_t bytes = queues.size() * sizeof(DeviceQueue);
    if (!check("hipMalloc (the ring queues)", api_.hipMalloc(&q, bytes), error))
      return false;
    queues_ = q;
    if (!check("hipMemcpy (the ring queues)",
               api_.hipMemcpy(q, queues.data(), bytes, hipMemcpyHostToDevice),
               error) ||
        !check("hipMalloc (the ring writer's record)",
               api_.hipMalloc(&e, 4 * sizeof(uint64_t)), error))
      return false;
    writerError_ = e;
    return check("hipMemset (the ring writer's record)",
                 api_.hipMemset(e, 0, 4 * sizeof(uint64_t)), error);
  }

  /// The ring writer over the rank's queues, the call's addresses in its
  /// argument (SdmaRingTable: buf[R*B], flags[R], the call's records, the
  /// rank).
  bool write(hipStream_t stream, const LaunchTable &T, size_t chunk,
             std::string &error) {
    const DmaProgram &P = *P_;
    DeviceArgs args{0,
                    0,
                    0,
                    chunk,
                    reinterpret_cast<uint64_t>(queues_),
                    reinterpret_cast<uint64_t>(writerError_),
                    T.timeoutNs,
                    P.rank,
                    0};
    std::vector<uint64_t> table;
    for (char *b : T.buffers)
      table.push_back(reinterpret_cast<uint64_t>(b));
    for (unsigned long long *f : T.flags)
      table.push_back(reinterpret_cast<uint64_t>(f));
    table.push_back(reinterpret_cast<uint64_t>(T.error));
    table.push_back(reinterpret_cast<uint64_t>(T.errorMirror));
    table.push_back(uint64_t(P.rank));
    void *params[] = {&args, table.data()};
    // The writer's own record starts clean in every call (a memset node in
    // a captured graph).
    return check("hipMemsetAsync (the ring writer's record)",
                 api_.hipMemsetAsync(writerError_, 0, 4 * sizeof(uint64_t),
                                     stream),
                 error) &&
           writer_.launch(unsigned(P.packetQueues.size()), 1, stream, params,
                          error);
  }

  bool sync(hipStream_t stream, const DmaSyncArgs &args, DmaSyncOp op, int flag,
            uint64_t value, std::string &error) {
    return launchHipDmaSync(sync_, stream, args, op, flag, value, error);
  }

  bool check(const char *what, hipError_t result, std::string &error) const {
    return api_.check(result, what, error);
  }

  const HipApi &api_;
  int ordinal_;
  std::shared_ptr<const DmaProgram> P_;
  HipKernel sync_, writer_;
  std::unique_ptr<HsaKmtApi> api_hsakmt_;
  std::unique_ptr<SdmaQueueSet> set_;
  void *queues_ = nullptr, *writerError_ = nullptr;
};

} // namespace

std::string sdma::rt::sdmaPacketTargetOf(const std::string &arch,
                                         std::string &why) {
  std::string base = arch.substr(0, arch.find(':'));
  if (base == "gfx942" || base == "gfx950")
    return base;
  if (base.rfind("gfx9", 0) == 0)
    return "gfx9";
  why = "the GPU's architecture " + arch +
        " has no SDMA packet profile in sdma (gfx9, gfx942, gfx950)";
  return "";
}

std::unique_ptr<CommKernel> sdma::rt::createHipRingKernel(
    const HipApi &api, int ordinal, const std::string &arch,
    std::shared_ptr<const DmaProgram> program,
    const std::string &cacheDirectory, std::string &error) {
  if (!program || !program->packets) {
    error = "internal: kernel-submitted DMA without packets";
    return nullptr;
  }
  auto kernel = std::make_unique<HipRingKernel>(api, ordinal, program);
  if (!kernel->load(arch, cacheDirectory, error))
    return nullptr;
  return kernel;
}
