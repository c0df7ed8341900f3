//===- HipDeviceSet.cpp - ranks on AMD GPUs and their buffers -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#define __HIP_PLATFORM_AMD__ 1
#include "hip/HipDeviceSet.h"

#include <algorithm>

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
    devices_.push_back(d);
  }
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
  for (auto [rank, ptr] : owned_)
    if (api_.hipSetDevice(of(rank).ordinal) == hipSuccess)
      (void)api_.hipFree(ptr);
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
  SDMA_HIP(hipMemset, ptr, 0, bytes);
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
