//===- HipCommDevice.cpp - the communicator's HIP (AMD) device ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// CudaCommDevice's twin on HIP: hipMalloc'd heap and registered memory
// shared by HIP IPC handles (hipMemGetAddressRange finds a pointer's block;
// each peer block opened once per process; threads of one process use the
// pointer), the error mirror in mapped pinned host memory, the kernel from
// hipRTC through the kernel cache, launched on the caller's hipStream_t.
// No AMD GPU was available: this is compiled and its failure path ("no
// GPU") tested, never run on a device.
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "comm/CommIpc.h"
#include "hip/HipApi.h"
#include "hip/HipLdstExecutor.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unistd.h>

using namespace sdma::rt;
using namespace sdma::rt::hip;

#define SDMA_TRY(call, ...)                                                    \
  if (hipError_t r_ = api_.call(__VA_ARGS__); r_ != hipSuccess) {              \
    error = api_.describe(#call, r_);                                          \
    return false;                                                              \
  }

namespace {

class HipDevice;

class HipKernel : public CommKernel {
public:
  HipKernel(HipDevice &device, const LdstProgram &program)
      : device_(device), program_(program) {}
  ~HipKernel() override;
  bool load(std::string &error);
  bool launch(const KernelLaunch &launch, std::string &error) override;

private:
  HipDevice &device_;
  LdstProgram program_;
  hipModule_t module_ = nullptr;
  hipFunction_t function_ = nullptr;
  int64_t largest_ = 1;
};

class HipDevice : public CommDevice {
public:
  HipDevice(const HipApi &api, const CommOptions &options)
      : api_(api), options_(options) {}
  ~HipDevice() override {
    (void)api_.hipSetDevice(ordinal_);
    (void)api_.hipDeviceSynchronize();
    imports_.closeAll(
        [&](char *base) { (void)api_.hipIpcCloseMemHandle(base); });
    for (void *ptr : owned_)
      (void)api_.hipFree(ptr);
    if (record_)
      (void)api_.hipHostFree(record_);
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
    ordinal_ = ordinal;
    SDMA_TRY(hipSetDevice, ordinal_);
    hipDeviceProp_t properties;
    SDMA_TRY(hipGetDeviceProperties, &properties, ordinal_);
    smCount_ = std::max(1, properties.multiProcessorCount);
    arch_ = properties.gcnArchName;
    arch_ = arch_.substr(0, arch_.find(':'));
    char bus[64] = {0};
    SDMA_TRY(hipDeviceGetPCIBusId, bus, sizeof(bus) - 1, ordinal_);
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    identity_ = std::string(host) + "/" + bus;
    size_t recordBytes = kMaxInstances * kRecordWords * 8;
    void *record = nullptr;
    SDMA_TRY(hipHostMalloc, &record, recordBytes, hipHostMallocMapped);
    record_ = static_cast<unsigned long long *>(record);
    std::memset(record_, 0, recordBytes);
    void *device = nullptr;
    SDMA_TRY(hipHostGetDevicePointer, &device, record, 0);
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
    SDMA_TRY(hipSetDevice, ordinal_);
    SDMA_TRY(hipMalloc, &p, bytes);
    owned_.push_back(p);
    SDMA_TRY(hipMemset, p, 0, bytes);
    ptr = static_cast<char *>(p);
    return true;
  }

  bool exportMemory(char *ptr, size_t bytes, std::string &blob,
                    std::string &error) override {
    SDMA_TRY(hipSetDevice, ordinal_);
    hipDeviceptr_t base = nullptr;
    size_t size = 0;
    if (hipError_t r = api_.hipMemGetAddressRange(&base, &size, ptr);
        r != hipSuccess) {
      error = "the buffer (" + std::to_string(bytes) +
              " bytes) is not device memory of this process (" +
              api_.describe("hipMemGetAddressRange", r) + ")";
      return false;
    }
    char *start = static_cast<char *>(base);
    if (ptr + bytes > start + size) {
      error = "the buffer (" + std::to_string(bytes) +
              " bytes) runs past the end of its " + std::to_string(size) +
              "-byte allocation";
      return false;
    }
    hipIpcMemHandle_t handle;
    SDMA_TRY(hipIpcGetMemHandle, &handle, base);
    blob = IpcExport::make(handle, reinterpret_cast<uint64_t>(base), size,
                           reinterpret_cast<uint64_t>(ptr));
    return true;
  }

  bool importMemory(int peer, const std::string &blob, char *&ptr,
                    std::string &error) override {
    return imports_.import(
        peer, blob, ptr, error,
        [&](const IpcExport &e, char *&base, std::string &why) {
          hipIpcMemHandle_t handle;
          std::memcpy(&handle, e.handle, sizeof(handle));
          void *mapped = nullptr;
          hipError_t r = api_.hipSetDevice(ordinal_);
          if (r == hipSuccess)
            r = api_.hipIpcOpenMemHandle(&mapped, handle,
                                         hipIpcMemLazyEnablePeerAccess);
          if (r != hipSuccess) {
            why = api_.describe("hipIpcOpenMemHandle", r);
            return false;
          }
          base = static_cast<char *>(mapped);
          return true;
        });
  }

  unsigned long long *errorRecord() override { return record_; }
  uint64_t errorRecordDevice() override { return recordDevice_; }
  bool errorMirrored() const override { return true; }

  std::unique_ptr<CommKernel> load(const LdstProgram &program,
                                   std::string &error) override {
    auto kernel = std::make_unique<HipKernel>(*this, program);
    if (!kernel->load(error))
      return nullptr;
    return kernel;
  }

  const HipApi &api_;
  CommOptions options_;
  int ordinal_ = 0, smCount_ = 1, sharing_ = 1;
  std::string arch_, identity_;
  std::vector<void *> owned_;
  IpcImports imports_;
  unsigned long long *record_ = nullptr;
  uint64_t recordDevice_ = 0;
};

HipKernel::~HipKernel() {
  if (module_) {
    (void)device_.api_.hipSetDevice(device_.ordinal_);
    (void)device_.api_.hipModuleUnload(module_);
  }
}

bool HipKernel::load(std::string &error) {
  const HipApi &api = device_.api_;
  CompileInfo info;
  info.arch = device_.arch_;
  std::string code;
  if (!buildLdstCodeObject(program_, device_.options_.cacheDirectory, info,
                           code, error))
    return false;
  hipError_t r = api.hipSetDevice(device_.ordinal_);
  if (r == hipSuccess)
    r = api.hipModuleLoadData(&module_, code.data());
  if (r == hipSuccess)
    r = api.hipModuleGetFunction(&function_, module_, program_.entry.c_str());
  if (r != hipSuccess) {
    error = api.describe("loading the kernel", r);
    return false;
  }
  for (const Buffer &buffer : program_.buffers)
    largest_ = std::max<int64_t>(largest_, buffer.chunks);
  return true;
}

bool HipKernel::launch(const KernelLaunch &launch, std::string &error) {
  const HipApi &api = device_.api_;
  // As the HIP executor: at most one resident block per CU for all the
  // ranks that share the GPU (a rank's blocks wait for each other).
  int blocks = ldstBlocks(device_.smCount_ / device_.sharing_,
                          largest_ * launch.chunkBytes);
  unsigned long long chunk = launch.chunkBytes, epoch = 0;
  int rankBase = launch.programRank;
  void *args[] = {const_cast<uint64_t *>(launch.table.data()), &chunk, &epoch,
                  &rankBase};
  hipError_t r = api.hipSetDevice(device_.ordinal_);
  if (r == hipSuccess)
    r = api.hipModuleLaunchKernel(function_, blocks, 1, 1, kLdstThreads, 1, 1,
                                  0, static_cast<hipStream_t>(launch.stream),
                                  args, nullptr);
  if (r != hipSuccess) {
    error = api.describe("hipModuleLaunchKernel", r);
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<CommDevice>
sdma::rt::createHipDevice(const CommOptions &options, std::string &error) {
  int count = 0;
  const HipApi *api = HipApi::withDevices(count, error);
  if (!api)
    return nullptr;
  auto device = std::make_unique<HipDevice>(*api, options);
  if (!device->init(count, error))
    return nullptr;
  return device;
}
