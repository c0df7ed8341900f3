//===- CudaDeviceSet.cpp - ranks spread over GPUs, and their buffers ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDeviceSet.h"

#include <algorithm>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

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
  }
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
  for (auto [rank, ptr] : owned_) {
    driver_.cuCtxSetCurrent(of(rank).context);
    driver_.cuMemFree_v2(ptr);
  }
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
  SDMA_CU(cuMemsetD8_v2, ptr, 0, bytes);
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
