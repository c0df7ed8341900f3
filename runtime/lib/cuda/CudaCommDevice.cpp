//===- CudaCommDevice.cpp - the communicator's CUDA device ----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Memory: cuMemAlloc'd (the heap) or the caller's (registered). A peer maps
// an allocation through its CUDA IPC handle; the blob names the allocation
// (its IPC handle, the exporting process and base address) and the offset
// of the pointer in it, because caching allocators (torch's) hand out
// pieces of larger cudaMalloc blocks. Each allocation is opened once per
// process; a rank that is a thread of this process uses the pointer itself
// (a process cannot open its own handles). The kernel's error record is
// pinned host memory mapped into the device, so the host reads it without
// synchronising. Launches go on the caller's stream in the device's
// primary context (the one the CUDA runtime uses).
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "comm/CommIpc.h"
#include "cuda/CudaDriver.h"
#include "cuda/CudaLdstExecutor.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unistd.h>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

#define SDMA_TRY(call, ...)                                                    \
  if (CUresult r_ = driver_.call(__VA_ARGS__); r_ != 0) {                      \
    error = driver_.describe(#call, r_);                                       \
    return false;                                                              \
  }

namespace {

class CudaDevice;

class CudaKernel : public CommKernel {
public:
  CudaKernel(CudaDevice &device, const LdstProgram &program)
      : device_(device), program_(program) {}
  ~CudaKernel() override;
  bool load(std::string &error);
  bool launch(const KernelLaunch &launch, std::string &error) override;

private:
  CudaDevice &device_;
  LdstProgram program_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  int blocksPerSM_ = 1;
  int64_t largest_ = 1; // chunks of the largest buffer
};

class CudaDevice : public CommDevice {
public:
  CudaDevice(const Driver &driver, const CommOptions &options)
      : driver_(driver), options_(options) {}
  ~CudaDevice() override {
    if (!context_)
      return;
    driver_.cuCtxSetCurrent(context_);
    driver_.cuCtxSynchronize();
    imports_.closeAll([&](char *base) {
      driver_.cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(base));
    });
    for (CUdeviceptr ptr : owned_)
      driver_.cuMemFree_v2(ptr);
    if (record_)
      driver_.cuMemFreeHost(record_);
    driver_.cuDevicePrimaryCtxRelease_v2(device_);
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
    ordinal_ = ordinal;
    SDMA_TRY(cuDeviceGet, &device_, ordinal);
    SDMA_TRY(cuDevicePrimaryCtxRetain, &context_, device_);
    SDMA_TRY(cuCtxSetCurrent, context_);
    SDMA_TRY(cuDeviceGetAttribute, &smCount_,
             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_);
    char bus[64] = {0};
    SDMA_TRY(cuDeviceGetPCIBusId, bus, sizeof(bus) - 1, device_);
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    identity_ = std::string(host) + "/" + bus;
    void *record = nullptr;
    size_t recordBytes = kMaxInstances * kRecordWords * 8;
    SDMA_TRY(cuMemHostAlloc, &record, recordBytes,
             CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    record_ = static_cast<unsigned long long *>(record);
    std::memset(record_, 0, recordBytes);
    SDMA_TRY(cuMemHostGetDevicePointer_v2, &recordDevice_, record, 0);
    return true;
  }

  std::string name() const override { return "cuda"; }
  std::string identity() const override { return identity_; }
  void setSharing(int ranksOnDevice) override {
    sharing_ = std::max(1, ranksOnDevice);
  }

  bool allocate(size_t bytes, char *&ptr, std::string &error) override {
    CUdeviceptr p = 0;
    SDMA_TRY(cuCtxSetCurrent, context_);
    SDMA_TRY(cuMemAlloc_v2, &p, bytes);
    owned_.push_back(p);
    SDMA_TRY(cuMemsetD8_v2, p, 0, bytes);
    ptr = reinterpret_cast<char *>(p);
    return true;
  }

  bool exportMemory(char *ptr, size_t bytes, std::string &blob,
                    std::string &error) override {
    SDMA_TRY(cuCtxSetCurrent, context_);
    CUdeviceptr base = 0;
    size_t size = 0;
    CUdeviceptr p = reinterpret_cast<CUdeviceptr>(ptr);
    if (CUresult r = driver_.cuMemGetAddressRange_v2(&base, &size, p); r) {
      error = "[" + hex(p) + ", +" + std::to_string(bytes) +
              ") is not device memory of this process (" +
              driver_.describe("cuMemGetAddressRange", r) + ")";
      return false;
    }
    if (p + bytes > base + size) {
      error = "[" + hex(p) + ", +" + std::to_string(bytes) +
              ") runs past the end of its allocation (" + std::to_string(size) +
              " bytes at " + hex(base) + ")";
      return false;
    }
    CUipcMemHandle handle;
    SDMA_TRY(cuIpcGetMemHandle, &handle, base);
    blob = IpcExport::make(handle, base, size, p);
    return true;
  }

  bool importMemory(int peer, const std::string &blob, char *&ptr,
                    std::string &error) override {
    return imports_.import(
        peer, blob, ptr, error,
        [&](const IpcExport &e, char *&base, std::string &why) {
          CUipcMemHandle handle;
          std::memcpy(&handle, e.handle, sizeof(handle));
          CUdeviceptr mapped = 0;
          CUresult r = driver_.cuCtxSetCurrent(context_);
          if (r == 0)
            r = driver_.cuIpcOpenMemHandle_v2(
                &mapped, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
          if (r) {
            why = driver_.describe("cuIpcOpenMemHandle", r);
            return false;
          }
          base = reinterpret_cast<char *>(mapped);
          return true;
        });
  }

  unsigned long long *errorRecord() override { return record_; }
  uint64_t errorRecordDevice() override { return recordDevice_; }
  bool errorMirrored() const override { return true; }

  std::unique_ptr<CommKernel> load(const LdstProgram &program,
                                   std::string &error) override {
    auto kernel = std::make_unique<CudaKernel>(*this, program);
    if (!kernel->load(error))
      return nullptr;
    return kernel;
  }

  const Driver &driver_;
  CommOptions options_;
  int ordinal_ = 0, smCount_ = 1, sharing_ = 1;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string identity_;
  std::vector<CUdeviceptr> owned_;
  IpcImports imports_;
  unsigned long long *record_ = nullptr;
  CUdeviceptr recordDevice_ = 0;

private:
  static std::string hex(uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof(text), "0x%llx", (unsigned long long)v);
    return text;
  }
};

CudaKernel::~CudaKernel() {
  if (module_) {
    device_.driver_.cuCtxSetCurrent(device_.context_);
    device_.driver_.cuModuleUnload(module_);
  }
}

bool CudaKernel::load(std::string &error) {
  const Driver &driver = device_.driver_;
  if (CUresult r = driver.cuCtxSetCurrent(device_.context_); r) {
    error = driver.describe("cuCtxSetCurrent", r);
    return false;
  }
  CompileInfo compile;
  std::string cubin;
  if (!buildLdstCubin(driver, device_.device_, program_, false,
                      device_.options_.cacheDirectory, compile, cubin, error))
    return false;
  CUresult r = driver.cuModuleLoadData(&module_, cubin.data());
  if (r == 0)
    r = driver.cuModuleGetFunction(&function_, module_, program_.entry.c_str());
  if (r == 0)
    r = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocksPerSM_, function_, kLdstThreads, 0);
  if (r) {
    error = driver.describe("loading the kernel", r);
    return false;
  }
  for (const Buffer &buffer : program_.buffers)
    largest_ = std::max<int64_t>(largest_, buffer.chunks);
  return true;
}

bool CudaKernel::launch(const KernelLaunch &launch, std::string &error) {
  const Driver &driver = device_.driver_;
  // As the in-process executor: never more blocks than can be resident at
  // once for all the ranks that share the GPU (a rank's blocks wait for
  // each other).
  int blocks = ldstBlocks(device_.smCount_ * std::max(1, blocksPerSM_) /
                              device_.sharing_,
                          largest_ * launch.chunkBytes);
  unsigned long long chunk = launch.chunkBytes, epoch = 0;
  int rankBase = launch.programRank;
  void *args[] = {const_cast<uint64_t *>(launch.table.data()), &chunk, &epoch,
                  &rankBase};
  CUresult r = driver.cuCtxSetCurrent(device_.context_);
  if (r == 0)
    r = driver.cuLaunchKernel(function_, blocks, 1, 1, kLdstThreads, 1, 1, 0,
                              static_cast<CUstream>(launch.stream), args,
                              nullptr);
  if (r) {
    error = driver.describe("cuLaunchKernel", r);
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<CommDevice>
sdma::rt::createCudaDevice(const CommOptions &options, std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver)
    return nullptr;
  auto device = std::make_unique<CudaDevice>(*driver, options);
  if (!device->init(error))
    return nullptr;
  return device;
}
