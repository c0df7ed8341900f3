//===- CudaCommDevice.cpp - the communicator's CUDA device ----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's rank on one GPU, on the NVIDIA vendor layer: its
// memory, the error record and the IPC sharing are a CudaDeviceSet of one
// rank (the GPU's primary context, the one the CUDA runtime uses), its
// programs CudaKernels. Memory is cuMemAlloc'd (the heap) or the caller's
// (registered); a peer maps an allocation through its CUDA IPC handle, the
// blob naming the allocation and the pointer's offset in it (caching
// allocators, torch's, hand out pieces of larger cudaMalloc blocks). The
// kernels' error record is pinned host memory mapped into the device, so
// the host reads it without synchronising. Launches go on the caller's
// stream; the DMA path is CudaDmaKernel.h's copy-engine copies.
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "compile/KernelCache.h"
#include "cuda/CeCopyKernel.h"
#include "cuda/CudaCommKernel.h"
#include "cuda/CudaDeviceSet.h"
#include "cuda/CudaDmaKernel.h"
#include "cuda/CudaDriver.h"
#include "cuda/CudaKernel.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

#define SDMA_TRY(call, ...)                                                    \
  if (CUresult r_ = driver_.call(__VA_ARGS__); r_ != 0) {                      \
    error = driver_.describe(#call, r_);                                       \
    return false;                                                              \
  }

namespace {

class CudaCommDevice : public CommDevice, public CudaCommGpu {
public:
  CudaCommDevice(const Driver &driver, const CommOptions &options)
      : driver_(driver), options_(options), devices_(driver) {}
  ~CudaCommDevice() override {
    // Imports, memory, the error record and the context go with devices_.
    if (devices_.devices().empty())
      return;
    driver_.cuCtxSetCurrent(context());
    driver_.cuCtxSynchronize();
  }

  bool init(std::string &error) {
    int ordinal = options_.deviceOrdinal, count = 0;
    SDMA_TRY(cuDeviceGetCount, &count);
    if (count == 0) {
      error = "no GPU: the CUDA driver reports no device";
      return false;
    }
    if (ordinal < 0) {
      CUcontext current = nullptr;
      CUdevice dev = 0;
      if (driver_.cuCtxGetCurrent(&current) == 0 && current &&
          driver_.cuCtxGetDevice(&dev) == 0)
        ordinal = dev;
      else if (const char *local = std::getenv("LOCAL_RANK"))
        ordinal = std::atoi(local) % count;
      else
        ordinal = 0;
    }
    if (ordinal >= count) {
      error = "CUDA device " + std::to_string(ordinal) + " does not exist (" +
              std::to_string(count) + " devices)";
      return false;
    }
    // One rank on one GPU, in its primary context (the CUDA runtime's).
    if (!devices_.init(1, {ordinal}, ordinal, error))
      return false;
    SDMA_TRY(cuCtxSetCurrent, context());
    char bus[64] = {0};
    SDMA_TRY(cuDeviceGetPCIBusId, bus, sizeof(bus) - 1, device());
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    // The GPU's UUID too: ranks with equal identities are taken to share
    // one GPU, which sizes their grids and lets their kernels fence at
    // device scope (SDMA_ONE_GPU), so host names or bus ids that repeat
    // (containers, MIG instances) must not make two GPUs one.
    CUuuid uuid{};
    SDMA_TRY(cuDeviceGetUuid_v2, &uuid, device());
    static const char hex[] = "0123456789abcdef";
    identity_ = std::string(host) + "/" + bus + "/";
    for (char c : uuid.bytes)
      identity_ += {hex[(c >> 4) & 15], hex[c & 15]};
    void *record = nullptr;
    if (!devices_.allocMapped(kRecords * kRecordWords * 8, record,
                              recordDevice_, error))
      return false;
    record_ = static_cast<unsigned long long *>(record);
    return true;
  }

  std::string name() const override { return "cuda"; }
  std::string identity() const override { return identity_; }
  void setSharing(int ranksOnDevice) override {
    sharing_ = std::max(1, ranksOnDevice);
  }
  void bindThread() override { driver_.cuCtxSetCurrent(context()); }

  bool allocate(size_t bytes, char *&ptr, std::string &error) override {
    CUdeviceptr p = 0;
    if (!devices_.alloc(0, p, bytes, error))
      return false;
    ptr = reinterpret_cast<char *>(p);
    return true;
  }
  bool copy(void *dst, const void *src, size_t bytes, void *stream,
            std::string &error) override {
    SDMA_TRY(cuCtxSetCurrent, context());
    SDMA_TRY(cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(dst),
             reinterpret_cast<CUdeviceptr>(src), bytes,
             static_cast<CUstream>(stream));
    return true;
  }
  bool localCopy(void *dst, const void *src, size_t bytes, void *stream,
                 std::string *how, std::string &error) override {
    // A device copy is a kernel the driver launches with more work around
    // it than ours: below copyKernelBytes our copy kernel, where its
    // 16-byte path applies (it copies anything else a byte a thread).
    auto driverCopy = [&](const std::string &why) {
      if (how)
        *how = "cuMemcpyAsync (" + why + ")";
      return copy(dst, src, bytes, stream, error);
    };
    if (bytes >= uint64_t(options_.copyKernelBytes))
      return driverCopy("from SDMA_COPY_KERNEL_BYTES=" +
                        std::to_string(options_.copyKernelBytes));
    if ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) |
         bytes) &
        15)
      return driverCopy("not 16-byte aligned");
    SDMA_TRY(cuCtxSetCurrent, context());
    {
      // Built once: where it cannot be (no NVRTC), the driver copies.
      std::lock_guard<std::mutex> lock(copyMutex_);
      if (!copyKernel_ && copyKernelError_.empty()) {
        auto kernel = std::make_unique<CopyListKernel>(driver_);
        std::string why;
        if (kernel->load(devices_, options_.cacheDirectory, why))
          copyKernel_ = std::move(kernel);
        else
          copyKernelError_ = "the copy kernel does not build: " + why;
      }
    }
    if (!copyKernel_)
      return driverCopy(copyKernelError_);
    if (how)
      *how = "a copy kernel (below SDMA_COPY_KERNEL_BYTES=" +
             std::to_string(options_.copyKernelBytes) + ")";
    return copyKernel_->launchOne(0, static_cast<CUstream>(stream),
                                  {reinterpret_cast<uint64_t>(dst),
                                   reinterpret_cast<uint64_t>(src),
                                   uint64_t(bytes)},
                                  error);
  }
  bool synchronize(void *stream, std::string &error) override {
    SDMA_TRY(cuCtxSetCurrent, context());
    SDMA_TRY(cuStreamSynchronize, static_cast<CUstream>(stream));
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
    return loadCudaCommKernel(*this, program, error);
  }

  bool addressable(const void *ptr, std::string &why) override {
    if (!driver_.cuPointerGetAttribute || !ptr)
      return true;
    int type = 0;
    driver_.cuCtxSetCurrent(context());
    // Device, managed or pinned host memory is known to the driver;
    // pageable host memory is not, and a kernel reading it faults.
    if (driver_.cuPointerGetAttribute(&type, 2,
                                      reinterpret_cast<CUdeviceptr>(ptr)) == 0)
      return true;
    why = "is not memory the GPU can address (pageable host memory?): "
          "point-to-point reads and writes the caller's buffer in place, "
          "so it must be device memory (cudaMalloc, torch's allocator)";
    return false;
  }

  bool markAborted(char *ptr, size_t bytes, std::string &error) override {
    std::lock_guard<std::mutex> lock(abortMutex_);
    SDMA_TRY(cuCtxSetCurrent, context());
    if (!abortStream_)
      SDMA_TRY(cuStreamCreate, &abortStream_, 1u); // CU_STREAM_NON_BLOCKING
    SDMA_TRY(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(ptr), 0xAB, bytes,
             abortStream_);
    SDMA_TRY(cuStreamSynchronize, abortStream_);
    return true;
  }

  bool streamCapturing(void *stream, bool &capturing,
                       std::string &error) override {
    int status = 0;
    capturing = false;
    if (!driver_.cuStreamIsCapturing)
      return true; // a driver without graphs captures nothing
    SDMA_TRY(cuCtxSetCurrent, context());
    SDMA_TRY(cuStreamIsCapturing, static_cast<CUstream>(stream), &status);
    capturing = status != 0;
    return true;
  }

  std::unique_ptr<CommKernel> loadPointToPoint(std::string &error) override {
    return loadCudaP2pKernel(*this, error);
  }

  /// Streams share CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8).
  bool launchesShareQueues() const override { return true; }
  bool hasDmaPath() const override { return true; }
  /// The cost model (the H200 profile: the executors measured on 1, 2 and
  /// 4 GPUs) decides on Hopper GPUs (H100, H200), where each rank has a
  /// GPU of its own (costModelPath).
  bool dmaByCostModel(std::string &why) const override {
    int major = 0;
    if (driver_.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device()) ||
        major != 9) {
      why = "the cost model was measured on H200s (sm_90); this GPU is sm_" +
            std::to_string(major) + "x";
      return false;
    }
    return true;
  }
  std::unique_ptr<CommKernel> loadDma(std::shared_ptr<const DmaProgram> program,
                                      std::string &error) override {
    return createCudaDmaKernel(driver_, device(), context(), std::move(program),
                               options_.cacheDirectory, options_.dmaBatch,
                               error);
  }
  std::string dmaBatching() const override {
    return options_.dmaBatch && driver_.cuMemcpyBatchAsync
               ? "a queue's unordered copies as one cuMemcpyBatchAsync "
                 "outside graph capture"
               : "";
  }

  const Driver &driver() const override { return driver_; }
  CUdevice device() const override { return devices_.devices()[0].device; }
  CUcontext context() const override { return devices_.devices()[0].context; }
  int smCount() const override { return devices_.devices()[0].smCount; }
  int sharing() const override { return sharing_; }
  const std::string &cacheDirectory() const override {
    return options_.cacheDirectory;
  }

private:
  const Driver &driver_;
  CommOptions options_;
  CudaDeviceSet devices_;
  int sharing_ = 1;
  std::string identity_;
  unsigned long long *record_ = nullptr;
  CUdeviceptr recordDevice_ = 0;
  /// One-rank copies below copyKernelBytes (localCopy), loaded on first
  /// use.
  std::mutex copyMutex_;
  std::unique_ptr<CopyListKernel> copyKernel_;
  std::string copyKernelError_; // why it did not build, once
  /// An abort's own stream (markAborted), made on first use.
  std::mutex abortMutex_;
  CUstream abortStream_ = nullptr;
};

} // namespace

std::unique_ptr<CommDevice>
sdma::rt::createCudaDevice(const CommOptions &options, std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver)
    return nullptr;
  auto device = std::make_unique<CudaCommDevice>(*driver, options);
  if (!device->init(error))
    return nullptr;
  return device;
}
