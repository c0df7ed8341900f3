//===- HipCommDevice.cpp - the communicator's HIP (AMD) device ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// CudaCommDevice's twin on the AMD vendor layer: a HipDeviceSet of one
// rank holds the hipMalloc'd heap, the error mirror in mapped pinned host
// memory and the IPC sharing of heap and registered memory (each peer
// block opened once per process; threads of one process use the pointer);
// its programs are HipKernels (hipRTC through the kernel cache), launched
// on the caller's hipStream_t; the DMA path is HipDmaKernel.h's. No AMD
// GPU was available: this is compiled and its failure path ("no GPU")
// tested, never run on a device.
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "comm/PointToPoint.h"
#include "hip/HipApi.h"
#include "hip/HipDeviceSet.h"
#include "hip/HipDmaKernel.h"
#include "hip/HipKernel.h"
#include "hip/HipRingKernel.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

using namespace sdma::rt;
using namespace sdma::rt::hip;

#define SDMA_TRY(call, ...)                                                    \
  if (hipError_t r_ = api_.call(__VA_ARGS__); r_ != hipSuccess) {              \
    error = api_.describe(#call, r_);                                          \
    return false;                                                              \
  }

namespace {

class HipCommDevice;

/// One program on the device, launched for this process's rank.
class HipCommKernel : public CommKernel {
public:
  HipCommKernel(HipCommDevice &device, const LdstProgram &program);
  bool load(std::string &error);
  bool launch(const KernelLaunch &launch, std::string &error) override;

private:
  HipCommDevice &device_;
  LdstProgram program_;
  HipKernel kernel_;
  /// A low-latency program's sdma_ldst_ll (LdstPhases.hip).
  HipKernel lowLatency_;
  int64_t largest_ = 1;
};

/// The point-to-point kernel, launched for this process's rank.
class HipP2pKernel : public CommKernel {
public:
  explicit HipP2pKernel(HipCommDevice &device);
  bool load(std::string &error);
  bool launch(const KernelLaunch &launch, std::string &error) override;

private:
  HipCommDevice &device_;
  HipKernel kernel_;
};

class HipCommDevice : public CommDevice {
public:
  HipCommDevice(const HipApi &api, const CommOptions &options)
      : api_(api), options_(options), devices_(api) {}
  ~HipCommDevice() override {
    // Imports, memory and the error record go with devices_.
    if (devices_.devices().empty())
      return;
    (void)api_.hipSetDevice(ordinal());
    (void)api_.hipDeviceSynchronize();
  }

  bool init(int count, std::string &error) {
    int ordinal = options_.deviceOrdinal;
    if (ordinal < 0) {
      if (api_.hipGetDevice(&ordinal) != hipSuccess)
        ordinal = 0;
      if (const char *local = std::getenv("LOCAL_RANK"))
        ordinal = std::atoi(local) % count;
    }
    if (ordinal >= count) {
      error = "HIP device " + std::to_string(ordinal) + " does not exist (" +
              std::to_string(count) + " devices)";
      return false;
    }
    if (!devices_.init(1, {ordinal}, ordinal, error))
      return false;
    char bus[64] = {0};
    SDMA_TRY(hipDeviceGetPCIBusId, bus, sizeof(bus) - 1, ordinal);
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    identity_ = std::string(host) + "/" + bus;
    void *record = nullptr, *device = nullptr;
    if (!devices_.allocMapped(kRecords * kRecordWords * 8, record, device,
                              error))
      return false;
    record_ = static_cast<unsigned long long *>(record);
    recordDevice_ = reinterpret_cast<uint64_t>(device);
    return true;
  }

  std::string name() const override { return "hip"; }
  std::string identity() const override { return identity_; }
  void setSharing(int ranksOnDevice) override {
    sharing_ = std::max(1, ranksOnDevice);
  }

  bool allocate(size_t bytes, char *&ptr, std::string &error) override {
    void *p = nullptr;
    if (!devices_.alloc(0, p, bytes, error))
      return false;
    ptr = static_cast<char *>(p);
    return true;
  }
  bool copy(void *dst, const void *src, size_t bytes, void *stream,
            std::string &error) override {
    SDMA_TRY(hipMemcpyAsync, dst, src, bytes, hipMemcpyDefault,
             static_cast<hipStream_t>(stream));
    return true;
  }
  bool synchronize(void *stream, std::string &error) override {
    SDMA_TRY(hipSetDevice, ordinal());
    SDMA_TRY(hipStreamSynchronize, static_cast<hipStream_t>(stream));
    return true;
  }
  bool exportMemory(char *ptr, size_t bytes, std::string &blob,
                    std::string &error) override {
    return devices_.exportMemory(0, ptr, bytes, blob, error);
  }
  bool importMemory(int peer, const std::string &blob, char *&ptr,
                    std::string &error) override {
    return devices_.importMemory(0, peer, blob, ptr, error);
  }

  unsigned long long *errorRecord() override { return record_; }
  uint64_t errorRecordDevice() override { return recordDevice_; }
  bool errorMirrored() const override { return true; }

  std::unique_ptr<CommKernel> load(const LdstProgram &program,
                                   std::string &error) override {
    auto kernel = std::make_unique<HipCommKernel>(*this, program);
    if (!kernel->load(error))
      return nullptr;
    return kernel;
  }

  bool markAborted(char *ptr, size_t bytes, std::string &error) override {
    std::lock_guard<std::mutex> lock(abortMutex_);
    SDMA_TRY(hipSetDevice, ordinal());
    if (!abortStream_)
      SDMA_TRY(hipStreamCreateWithFlags, &abortStream_,
               1u); // hipStreamNonBlocking
    SDMA_TRY(hipMemsetAsync, ptr, 0xAB, bytes, abortStream_);
    SDMA_TRY(hipStreamSynchronize, abortStream_);
    return true;
  }

  std::unique_ptr<CommKernel> loadPointToPoint(std::string &error) override {
    auto kernel = std::make_unique<HipP2pKernel>(*this);
    if (!kernel->load(error))
      return nullptr;
    return kernel;
  }

  /// Streams share GPU_MAX_HW_QUEUES hardware queues (4).
  bool launchesShareQueues() const override { return true; }
  bool hasDmaPath() const override { return true; }
  bool dmaByCostModel(std::string &why) const override {
    why = "the hip device's DMA path has not run on an AMD GPU and has no "
          "cost model";
    return false;
  }
  std::string dmaPacketTarget(std::string &why) const override {
    return sdmaPacketTargetOf(arch(), why);
  }
  std::unique_ptr<CommKernel> loadDma(std::shared_ptr<const DmaProgram> program,
                                      std::string &error) override {
    if (program->packets)
      return createHipRingKernel(api_, ordinal(), arch(), std::move(program),
                                 options_.cacheDirectory, error);
    return createHipDmaKernel(api_, ordinal(), arch(), std::move(program),
                              options_.cacheDirectory, error);
  }

  const HipApi &api() const { return api_; }
  const CommOptions &options() const { return options_; }
  int ordinal() const { return devices_.devices()[0].ordinal; }
  const std::string &arch() const { return devices_.devices()[0].arch; }
  int computeUnits() const {
    return std::max(1, devices_.devices()[0].computeUnits);
  }
  int sharing() const { return sharing_; }

private:
  const HipApi &api_;
  CommOptions options_;
  HipDeviceSet devices_;
  int sharing_ = 1;
  std::string identity_;
  unsigned long long *record_ = nullptr;
  uint64_t recordDevice_ = 0;
  /// An abort's own stream (markAborted), made on first use.
  std::mutex abortMutex_;
  hipStream_t abortStream_ = nullptr;
};

HipCommKernel::HipCommKernel(HipCommDevice &device, const LdstProgram &program)
    : device_(device), program_(program), kernel_(device.api()),
      lowLatency_(device.api()) {}

bool HipCommKernel::load(std::string &error) {
  CompileInfo info;
  info.arch = device_.arch();
  std::string code;
  // Every rank of the job on this GPU: device-scope fences suffice.
  const bool oneGpu = device_.sharing() >= program_.ranks;
  if (!HipKernel::build((oneGpu ? kOneGpuDefine : "") + program_.source,
                        program_.schedule + ".hip",
                        device_.options().cacheDirectory, info, code, error))
    return false;
  if (!kernel_.load(device_.ordinal(), code, program_.entry, kLdstThreads,
                    error)) {
    error = device_.api().describe("loading the kernel", kernel_.failure());
    return false;
  }
  if (program_.lowLatencyPairChunks >= 0 &&
      !lowLatency_.load(device_.ordinal(), code, "sdma_ldst_ll", kLdstThreads,
                        error)) {
    error = device_.api().describe("loading the low-latency kernel",
                                   lowLatency_.failure());
    return false;
  }
  for (const Buffer &buffer : program_.buffers)
    largest_ = std::max<int64_t>(largest_, buffer.chunks);
  return true;
}

bool HipCommKernel::launch(const KernelLaunch &launch, std::string &error) {
  const HipApi &api = device_.api();
  // As the HIP executor: at most one resident block per CU for all the
  // ranks that share the GPU (a rank's blocks wait for each other).
  int blocks = ldstBlocks(device_.computeUnits() / device_.sharing(),
                          largest_ * launch.chunkBytes);
  unsigned long long chunk = launch.chunkBytes, epoch = 0;
  int rankBase = launch.programRank;
  void *args[] = {const_cast<uint64_t *>(launch.table.data()), &chunk, &epoch,
                  &rankBase};
  if (hipError_t r = api.hipSetDevice(device_.ordinal()); r != hipSuccess) {
    error = api.describe("hipModuleLaunchKernel", r);
    return false;
  }
  if (launch.lowLatency && program_.lowLatencyPairChunks < 0) {
    error = "internal: a low-latency launch of " + program_.schedule +
            ", which has no low-latency entry";
    return false;
  }
  HipKernel &kernel = launch.lowLatency ? lowLatency_ : kernel_;
  return kernel.launch(blocks, 1, static_cast<hipStream_t>(launch.stream), args,
                       error);
}

HipP2pKernel::HipP2pKernel(HipCommDevice &device)
    : device_(device), kernel_(device.api()) {}

bool HipP2pKernel::load(std::string &error) {
  CompileInfo info;
  info.arch = device_.arch();
  std::string code;
  if (!HipKernel::build(p2pKernelSource(), "sdma_p2p.hip",
                        device_.options().cacheDirectory, info, code, error))
    return false;
  if (!kernel_.load(device_.ordinal(), code, "sdma_p2p", kLdstThreads, error)) {
    error = device_.api().describe("loading the point-to-point kernel",
                                   kernel_.failure());
    return false;
  }
  return true;
}

bool HipP2pKernel::launch(const KernelLaunch &launch, std::string &error) {
  if (!checkP2pLaunch(launch, error))
    return false;
  const HipApi &api = device_.api();
  if (hipError_t r = api.hipSetDevice(device_.ordinal()); r != hipSuccess) {
    error = api.describe("hipSetDevice", r);
    return false;
  }
  void *args[] = {const_cast<uint64_t *>(launch.table.data())};
  return kernel_.launch(launch.blocks, 1,
                        static_cast<hipStream_t>(launch.stream), args, error);
}

} // namespace

std::unique_ptr<CommDevice>
sdma::rt::createHipDevice(const CommOptions &options, std::string &error) {
  int count = 0;
  const HipApi *api = HipApi::withDevices(count, error);
  if (!api)
    return nullptr;
  auto device = std::make_unique<HipCommDevice>(*api, options);
  if (!device->init(count, error))
    return nullptr;
  return device;
}
