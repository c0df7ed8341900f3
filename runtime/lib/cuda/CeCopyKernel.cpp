//===- CeCopyKernel.cpp - a queue run's device-local copies, one kernel ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CeCopyKernel.h"
#include "cuda/CudaDeviceSet.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {
constexpr uint64_t kBytesPerBlock = 16 * 1024;

// Vector loads and stores when the copy is 16-byte aligned (every chunk
// size the benches and collectives use), bytes otherwise; four loads in
// flight per thread before their stores.
constexpr const char *kSource = R"SDMA(
struct SdmaCopyEntry { unsigned long long dst, src, bytes; };
struct SdmaCopyList { SdmaCopyEntry e[64]; };

__device__ __forceinline__ void sdma_copy_blocks(const SdmaCopyEntry &c) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x +
                         threadIdx.x;
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  if (((c.dst | c.src | c.bytes) & 15) == 0) {
    const uint4 *s = (const uint4 *)c.src;
    uint4 *d = (uint4 *)c.dst;
    unsigned long long n = c.bytes / 16;
    for (; i + 3 * stride < n; i += 4 * stride) {
      uint4 a = s[i], b = s[i + stride], x = s[i + 2 * stride],
            y = s[i + 3 * stride];
      d[i] = a;
      d[i + stride] = b;
      d[i + 2 * stride] = x;
      d[i + 3 * stride] = y;
    }
    for (; i < n; i += stride)
      d[i] = s[i];
    return;
  }
  const unsigned char *s = (const unsigned char *)c.src;
  unsigned char *d = (unsigned char *)c.dst;
  for (; i < c.bytes; i += stride)
    d[i] = s[i];
}

extern "C" __global__ void __launch_bounds__(256)
sdma_copy_list(const __grid_constant__ SdmaCopyList list) {
  sdma_copy_blocks(list.e[blockIdx.y]);
}

// One copy, its 24 bytes of parameters (a launch's cost grows with them).
extern "C" __global__ void __launch_bounds__(256)
sdma_copy_one(const __grid_constant__ SdmaCopyEntry copy) {
  sdma_copy_blocks(copy);
}
)SDMA";

/// The kernel's parameter block, as the kernel declares it.
struct ListParams {
  CopyListEntry e[kCopyListMax];
};
static_assert(sizeof(ListParams) == kCopyListMax * 24,
              "the kernel reads 24-byte entries");
} // namespace

const char *sdma::rt::copyListKernelSource() { return kSource; }

unsigned sdma::rt::copyListBlocks(const std::vector<CopyListEntry> &entries,
                                  int smCount) {
  uint64_t largest = 0;
  for (const CopyListEntry &e : entries)
    largest = std::max(largest, e.bytes);
  uint64_t wanted =
      std::max<uint64_t>(1, (largest + kBytesPerBlock - 1) / kBytesPerBlock);
  uint64_t cap = std::max<uint64_t>(1, 4 * uint64_t(std::max(smCount, 1)) /
                                           std::max<size_t>(1, entries.size()));
  return static_cast<unsigned>(std::min(wanted, cap));
}

bool CopyListKernel::load(const CudaDeviceSet &devices,
                          const std::string &cacheDirectory,
                          std::string &error) {
  // Built as a table load/store program is (the CUDA prelude first), so
  // that it shares their cache.
  CudaKernelSource source{std::string(kCudaPrelude) + kSource,
                          "sdma_copy_list.cu", /*specialised=*/false};
  std::string cubin;
  CompileInfo compile;
  const std::vector<CudaDeviceSet::Device> &all = devices.devices();
  if (!devices.useDevice(0, error) ||
      !CudaKernel::build(driver_, all.front().device, source, cacheDirectory,
                         compile, cubin, error)) {
    error = "the copy-list kernel: " + error;
    return false;
  }
  kernels_.clear();
  singles_.clear();
  smCounts_.clear();
  for (const CudaDeviceSet::Device &d : all) {
    kernels_.emplace_back(driver_);
    singles_.emplace_back(driver_);
    if (!kernels_.back().load(d.context, cubin, "sdma_copy_list",
                              kCopyListThreads, error) ||
        !singles_.back().loadEntry(kernels_.back(), "sdma_copy_one",
                                   kCopyListThreads, error)) {
      error = "the copy-list kernel on GPU " + std::to_string(d.ordinal) +
              ": " + error;
      return false;
    }
    smCounts_.push_back(d.smCount);
  }
  return true;
}

bool CopyListKernel::launch(size_t device, CUstream stream,
                            const std::vector<CopyListEntry> &entries,
                            std::string &error) {
  if (entries.empty() || entries.size() > kCopyListMax ||
      device >= kernels_.size() || !kernels_[device].loaded()) {
    error = "copy-list launch of " + std::to_string(entries.size()) +
            " copies on GPU index " + std::to_string(device) + " (1 to " +
            std::to_string(kCopyListMax) + " copies, on a loaded GPU)";
    return false;
  }
  ListParams params{};
  std::copy(entries.begin(), entries.end(), params.e);
  void *args[] = {&params};
  unsigned blocks = copyListBlocks(entries, smCounts_[device]);
  CudaKernel &kernel = kernels_[device];
  if (!kernel.launch(blocks, static_cast<unsigned>(entries.size()), stream,
                     args, error)) {
    error = driver_.describe("cuLaunchKernel (copy list)", kernel.failure());
    return false;
  }
  return true;
}

bool CopyListKernel::launchOne(size_t device, CUstream stream,
                               const CopyListEntry &copy, std::string &error) {
  if (device >= singles_.size() || !singles_[device].loaded()) {
    error = "copy launch on GPU index " + std::to_string(device) +
            ", which has no loaded copy kernel";
    return false;
  }
  CopyListEntry params = copy;
  void *args[] = {&params};
  unsigned blocks = copyListBlocks({copy}, smCounts_[device]);
  CudaKernel &kernel = singles_[device];
  if (!kernel.launch(blocks, 1, stream, args, error)) {
    error = driver_.describe("cuLaunchKernel (copy)", kernel.failure());
    return false;
  }
  return true;
}
