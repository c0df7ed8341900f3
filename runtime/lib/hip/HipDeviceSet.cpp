//===- HipDeviceSet.cpp - ranks on AMD GPUs and their memory --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#define __HIP_PLATFORM_AMD__ 1
#include "hip/HipDeviceSet.h"

#include <algorithm>
#include <cstring>

using namespace sdma::rt;

#define SDMA_HIP(call, ...)                                                    \
  if (!check(api_.call(__VA_ARGS__), #call, error))                            \
  return false

bool HipDeviceSet::check(hipError_t result, const char *call,
                         std::string &error) const {
  if (result == hipSuccess)
    return true;
  error = api_.describe(call, result);
  return false;
}

bool HipDeviceSet::init(int ranks, std::vector<int> ordinals, int fallback,
                        std::string &error) {
  if (ordinals.empty())
    ordinals.push_back(fallback);
  ranks_ = ranks;
  int count = 0;
  SDMA_HIP(hipGetDeviceCount, &count);
  for (int ordinal : ordinals)
    if (ordinal < 0 || ordinal >= count) {
      error = "GPU " + std::to_string(ordinal) + " does not exist (" +
              std::to_string(count) + " visible)";
      return false;
    }
  int numDevices = std::min<int>(ordinals.size(), ranks);
  ranksPerDevice_ = (ranks + numDevices - 1) / numDevices;
  for (int first = 0; first < ranks; first += ranksPerDevice_) {
    Device d;
    d.firstRank = first;
    d.numRanks = std::min(ranksPerDevice_, ranks - first);
    d.ordinal = ordinals[first / ranksPerDevice_];
    SDMA_HIP(hipSetDevice, d.ordinal);
    hipDeviceProp_t properties;
    SDMA_HIP(hipGetDeviceProperties, &properties, d.ordinal);
    d.arch = properties.gcnArchName;
    d.arch = d.arch.substr(0, d.arch.find(':'));
    d.computeUnits = properties.multiProcessorCount;
    devices_.push_back(d);
  }
  imports_.resize(devices_.size());
  // Every GPU reaches every other (copies, stores, flag writes).
  for (const Device &a : devices_)
    for (const Device &b : devices_) {
      if (a.ordinal == b.ordinal)
        continue;
      int can = 0;
      SDMA_HIP(hipDeviceCanAccessPeer, &can, a.ordinal, b.ordinal);
      if (!can) {
        error = "GPU " + std::to_string(a.ordinal) + " cannot access GPU " +
                std::to_string(b.ordinal) + " (no peer access)";
        return false;
      }
      SDMA_HIP(hipSetDevice, a.ordinal);
      hipError_t r = api_.hipDeviceEnablePeerAccess(b.ordinal, 0);
      if (r != hipSuccess && r != hipErrorPeerAccessAlreadyEnabled)
        return check(r, "hipDeviceEnablePeerAccess", error);
    }
  return true;
}

HipDeviceSet::~HipDeviceSet() {
  for (size_t d = 0; d < imports_.size() && d < devices_.size(); ++d)
    if (api_.hipSetDevice(devices_[d].ordinal) == hipSuccess)
      imports_[d].closeAll(
          [&](char *base) { (void)api_.hipIpcCloseMemHandle(base); });
  for (auto [rank, ptr] : owned_)
    if (api_.hipSetDevice(of(rank).ordinal) == hipSuccess)
      (void)api_.hipFree(ptr);
  for (void *host : mapped_)
    (void)api_.hipHostFree(host);
}

bool HipDeviceSet::use(int rank, std::string &error) const {
  SDMA_HIP(hipSetDevice, of(rank).ordinal);
  return true;
}

bool HipDeviceSet::useDevice(size_t index, std::string &error) const {
  SDMA_HIP(hipSetDevice, devices_[index].ordinal);
  return true;
}

bool HipDeviceSet::synchronize(std::string &error) const {
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (!useDevice(d, error))
      return false;
    SDMA_HIP(hipDeviceSynchronize);
  }
  return true;
}

bool HipDeviceSet::alloc(int rank, void *&ptr, size_t bytes,
                         std::string &error) {
  if (!use(rank, error))
    return false;
  SDMA_HIP(hipMalloc, &ptr, std::max<size_t>(bytes, 1));
  owned_.emplace_back(rank, ptr);
  // Zeroed before anyone learns the address (hipMemset on device memory
  // may return before it runs; a peer's first kernel must not write a flag
  // here that the zeroing then wipes).
  SDMA_HIP(hipMemset, ptr, 0, bytes);
  SDMA_HIP(hipStreamSynchronize, nullptr);
  return true;
}

bool HipDeviceSet::allocMapped(size_t bytes, void *&host, void *&device,
                               std::string &error) {
  if (!useDevice(0, error))
    return false;
  SDMA_HIP(hipHostMalloc, &host, bytes, hipHostMallocMapped);
  mapped_.push_back(host);
  std::memset(host, 0, bytes);
  SDMA_HIP(hipHostGetDevicePointer, &device, host, 0);
  return true;
}

bool HipDeviceSet::release(void *ptr, std::string &error) {
  auto it = std::find_if(owned_.begin(), owned_.end(),
                         [&](auto &o) { return o.second == ptr; });
  if (it == owned_.end())
    return true;
  if (!use(it->first, error))
    return false;
  owned_.erase(it);
  SDMA_HIP(hipFree, ptr);
  return true;
}

bool HipDeviceSet::allocateBuffers(const std::vector<int64_t> &chunks,
                                   size_t chunkBytes, std::string &error) {
  if (chunkBytes <= capacity_ && numBuffers_ == chunks.size())
    return true;
  if (!synchronize(error))
    return false;
  for (void *old : buffers_)
    if (!release(old, error))
      return false;
  numBuffers_ = chunks.size();
  buffers_.assign(ranks_ * numBuffers_, nullptr);
  for (int r = 0; r < ranks_; ++r)
    for (size_t b = 0; b < numBuffers_; ++b)
      if (!alloc(r, buffers_[r * numBuffers_ + b], chunks[b] * chunkBytes,
                 error))
        return false;
  capacity_ = chunkBytes;
  return true;
}

bool HipDeviceSet::upload(const HostMemory &memory, std::string &error) {
  for (int r = 0; r < ranks_; ++r) {
    if (!use(r, error))
      return false;
    for (size_t b = 0; b < numBuffers_; ++b)
      SDMA_HIP(hipMemcpy, buffer(r, b), memory.buffer(r, b),
               memory.bufferBytes(r, b), hipMemcpyHostToDevice);
  }
  // As for CUDA: return with the bytes in place on every GPU.
  return synchronize(error);
}

bool HipDeviceSet::download(HostMemory &memory, std::string &error) {
  for (int r = 0; r < ranks_; ++r) {
    if (!use(r, error))
      return false;
    for (size_t b = 0; b < numBuffers_; ++b)
      SDMA_HIP(hipMemcpy, memory.buffer(r, b), buffer(r, b),
               memory.bufferBytes(r, b), hipMemcpyDeviceToHost);
  }
  return true;
}

bool HipDeviceSet::exportMemory(size_t index, char *ptr, size_t bytes,
                                std::string &blob, std::string &error) {
  if (!useDevice(index, error))
    return false;
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
  SDMA_HIP(hipIpcGetMemHandle, &handle, base);
  blob = IpcExport::make(handle, reinterpret_cast<uint64_t>(base), size,
                         reinterpret_cast<uint64_t>(ptr));
  return true;
}

bool HipDeviceSet::importMemory(size_t index, int peer, const std::string &blob,
                                char *&ptr, std::string &error) {
  int ordinal = devices_[index].ordinal;
  return imports_[index].import(
      peer, blob, ptr, error,
      [&](const IpcExport &e, char *&base, std::string &why) {
        hipIpcMemHandle_t handle;
        std::memcpy(&handle, e.handle, sizeof(handle));
        void *mapped = nullptr;
        hipError_t r = api_.hipSetDevice(ordinal);
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
