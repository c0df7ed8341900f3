//===- CudaDeviceSet.cpp - ranks on NVIDIA GPUs and their memory ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDeviceSet.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {
std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", (unsigned long long)v);
  return text;
}
} // namespace

#define SDMA_CU(call, ...)                                                     \
  if (!check(driver_.call(__VA_ARGS__), #call, error))                         \
  return false

bool CudaDeviceSet::check(CUresult result, const char *call,
                          std::string &error) const {
  if (result == 0)
    return true;
  error = driver_.describe(call, result);
  return false;
}

bool CudaDeviceSet::init(int ranks, std::vector<int> ordinals, int fallback,
                         std::string &error) {
  if (ordinals.empty())
    ordinals.push_back(fallback);
  ranks_ = ranks;
  int count = 0;
  SDMA_CU(cuDeviceGetCount, &count);
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
    SDMA_CU(cuDeviceGet, &d.device, d.ordinal);
    SDMA_CU(cuDevicePrimaryCtxRetain, &d.context, d.device);
    devices_.push_back(d);
    SDMA_CU(cuDeviceGetAttribute, &devices_.back().smCount,
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.device);
  }
  imports_.resize(devices_.size());
  // Every GPU reaches every other (copies, stores, flag writes).
  for (Device &a : devices_)
    for (Device &b : devices_) {
      if (a.device == b.device)
        continue;
      int can = 0;
      SDMA_CU(cuDeviceCanAccessPeer, &can, a.device, b.device);
      if (!can) {
        error = "GPU " + std::to_string(a.ordinal) + " cannot access GPU " +
                std::to_string(b.ordinal) + " (no peer access)";
        return false;
      }
      SDMA_CU(cuCtxSetCurrent, a.context);
      CUresult r = driver_.cuCtxEnablePeerAccess(b.context, 0);
      if (r != 0 && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        error = driver_.describe("cuCtxEnablePeerAccess", r);
        return false;
      }
    }
  return true;
}

CudaDeviceSet::~CudaDeviceSet() {
  for (size_t d = 0; d < imports_.size() && d < devices_.size(); ++d) {
    driver_.cuCtxSetCurrent(devices_[d].context);
    imports_[d].closeAll([&](char *base) {
      driver_.cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(base));
    });
  }
  for (auto [rank, ptr] : owned_) {
    driver_.cuCtxSetCurrent(of(rank).context);
    driver_.cuMemFree_v2(ptr);
  }
  for (void *host : mapped_)
    driver_.cuMemFreeHost(host);
  for (Device &d : devices_)
    driver_.cuDevicePrimaryCtxRelease_v2(d.device);
}

bool CudaDeviceSet::use(int rank, std::string &error) const {
  SDMA_CU(cuCtxSetCurrent, of(rank).context);
  return true;
}

bool CudaDeviceSet::useDevice(size_t index, std::string &error) const {
  SDMA_CU(cuCtxSetCurrent, devices_[index].context);
  return true;
}

bool CudaDeviceSet::alloc(int rank, CUdeviceptr &ptr, size_t bytes,
                          std::string &error) {
  if (!use(rank, error))
    return false;
  SDMA_CU(cuMemAlloc_v2, &ptr, std::max<size_t>(bytes, 1));
  owned_.emplace_back(rank, ptr);
  // Zeroed before anyone learns the address: cuMemsetD8 on device memory
  // returns before it runs (on the legacy stream, which streams made
  // non-blocking do not wait for), so a peer's first kernel could write a
  // flag or a header here that the zeroing then wiped.
  SDMA_CU(cuMemsetD8_v2, ptr, 0, bytes);
  SDMA_CU(cuStreamSynchronize, nullptr);
  return true;
}

bool CudaDeviceSet::allocMapped(size_t bytes, void *&host, CUdeviceptr &device,
                                std::string &error) {
  if (!useDevice(0, error))
    return false;
  SDMA_CU(cuMemHostAlloc, &host, bytes,
          CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  mapped_.push_back(host);
  std::memset(host, 0, bytes);
  SDMA_CU(cuMemHostGetDevicePointer_v2, &device, host, 0);
  return true;
}

bool CudaDeviceSet::release(CUdeviceptr ptr, std::string &error) {
  auto it = std::find_if(owned_.begin(), owned_.end(),
                         [&](auto &o) { return o.second == ptr; });
  if (it == owned_.end())
    return true;
  if (!use(it->first, error))
    return false;
  owned_.erase(it);
  SDMA_CU(cuMemFree_v2, ptr);
  return true;
}

bool CudaDeviceSet::allocateBuffers(const std::vector<int64_t> &chunks,
                                    size_t chunkBytes, std::string &error) {
  if (chunkBytes <= capacity_ && numBuffers_ == chunks.size())
    return true;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (!useDevice(d, error))
      return false;
    SDMA_CU(cuCtxSynchronize);
  }
  for (CUdeviceptr old : buffers_)
    if (!release(old, error))
      return false;
  numBuffers_ = chunks.size();
  buffers_.assign(ranks_ * numBuffers_, 0);
  for (int r = 0; r < ranks_; ++r)
    for (size_t b = 0; b < numBuffers_; ++b)
      if (!alloc(r, buffers_[r * numBuffers_ + b], chunks[b] * chunkBytes,
                 error))
        return false;
  capacity_ = chunkBytes;
  return true;
}

bool CudaDeviceSet::upload(const HostMemory &memory, std::string &error) {
  for (int r = 0; r < ranks_; ++r) {
    if (!use(r, error))
      return false;
    for (size_t b = 0; b < numBuffers_; ++b)
      SDMA_CU(cuMemcpyHtoD_v2, buffer(r, b), memory.buffer(r, b),
              memory.bufferBytes(r, b));
  }
  // A copy from pageable memory may return before its DMA has landed, and
  // work on one GPU does not wait for another GPU's default stream (where
  // these copies run): wait for every GPU, so that upload() returns with
  // the bytes in place. (Seen on two H200s: a peer's kernel wrote a buffer
  // before its upload landed and was overwritten.)
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (!useDevice(d, error))
      return false;
    SDMA_CU(cuCtxSynchronize);
  }
  return true;
}

bool CudaDeviceSet::download(HostMemory &memory, std::string &error) {
  for (int r = 0; r < ranks_; ++r) {
    if (!use(r, error))
      return false;
    for (size_t b = 0; b < numBuffers_; ++b)
      SDMA_CU(cuMemcpyDtoH_v2, memory.buffer(r, b), buffer(r, b),
              memory.bufferBytes(r, b));
  }
  return true;
}

bool CudaDeviceSet::exportMemory(size_t index, char *ptr, size_t bytes,
                                 std::string &blob, std::string &error) {
  if (!useDevice(index, error))
    return false;
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
  SDMA_CU(cuIpcGetMemHandle, &handle, base);
  blob = IpcExport::make(handle, base, size, p);
  return true;
}

bool CudaDeviceSet::importMemory(size_t index, int peer,
                                 const std::string &blob, char *&ptr,
                                 std::string &error) {
  CUcontext context = devices_[index].context;
  return imports_[index].import(
      peer, blob, ptr, error,
      [&](const IpcExport &e, char *&base, std::string &why) {
        CUipcMemHandle handle;
        std::memcpy(&handle, e.handle, sizeof(handle));
        CUdeviceptr mapped = 0;
        CUresult r = driver_.cuCtxSetCurrent(context);
        if (r == 0)
          r = driver_.cuIpcOpenMemHandle_v2(&mapped, handle,
                                            CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        if (r) {
          why = driver_.describe("cuIpcOpenMemHandle", r);
          return false;
        }
        base = reinterpret_cast<char *>(mapped);
        return true;
      });
}
