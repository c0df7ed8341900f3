//===- CeCopyKernel.h - a queue run's local copies, one kernel --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// NVIDIA moves a copy within one GPU with a kernel, not a copy engine
// (MEASUREMENTS.md): each cuMemcpyDtoDAsync of a device-local copy is a
// kernel launch, and in a captured CUDA graph a kernel node with its own
// scheduling cost. The copy-engine executor (CeOptions::localCopyKernel)
// instead gathers the device-local copies of one queue run that may run
// unordered (DmaQueueSchedule.h's batch rule) and issues them as one launch
// of this copy-list kernel: one node per run instead of one per copy.
// Copies to or from a peer GPU stay copy-engine copies.
//
// The list travels by value in the kernel's parameters (__grid_constant__,
// at most kCopyListMax copies, 24 bytes each): nothing to allocate or
// upload, and a captured graph keeps it. Grid: y = the copy, x = blocks
// per copy (copyListBlocks). Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CECOPYKERNEL_H
#define SDMA_RUNTIME_LIB_CUDA_CECOPYKERNEL_H

#include "cuda/CudaDriver.h"
#include "cuda/CudaKernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sdma::rt {

class CudaDeviceSet;

/// One copy of a list: `bytes` bytes from `src` to `dst` (device pointers).
struct CopyListEntry {
  uint64_t dst = 0, src = 0, bytes = 0;
};

/// The most copies one launch carries (its parameters: 64 x 24 bytes).
constexpr size_t kCopyListMax = 64;
constexpr unsigned kCopyListThreads = 256;

/// Blocks per copy for a launch of `entries` copies on a GPU with
/// `smCount` SMs: enough for the largest copy at 16 KiB per block, and at
/// most 4 x SMs blocks in all (at least one per copy).
unsigned copyListBlocks(const std::vector<CopyListEntry> &entries, int smCount);

/// The kernel's CUDA source (without the load/store prelude).
const char *copyListKernelSource();

/// The copy-list kernel loaded on every GPU of a CudaDeviceSet.
class CopyListKernel {
public:
  explicit CopyListKernel(const cuda::Driver &driver) : driver_(driver) {}
  CopyListKernel(const CopyListKernel &) = delete;
  CopyListKernel &operator=(const CopyListKernel &) = delete;

  /// Compiles (NVRTC, cached in `cacheDirectory` as the load/store kernels
  /// are) and loads the kernel on each GPU of `devices`.
  bool load(const CudaDeviceSet &devices, const std::string &cacheDirectory,
            std::string &error);
  /// Enqueues the copies on `stream` of GPU `device` (an index into
  /// devices()), whose context must be current. 1 to kCopyListMax copies.
  bool launch(size_t device, cuda::CUstream stream,
              const std::vector<CopyListEntry> &entries, std::string &error);
  /// Enqueues one copy (the same kernel body with 24 bytes of parameters
  /// rather than a list's 1536: a cheaper launch).
  bool launchOne(size_t device, cuda::CUstream stream,
                 const CopyListEntry &copy, std::string &error);
  /// Forgets the modules without unloading them (a stuck executor).
  void abandon() {
    for (CudaKernel &kernel : kernels_)
      kernel.abandon();
    for (CudaKernel &kernel : singles_)
      kernel.abandon();
  }

private:
  const cuda::Driver &driver_;
  std::vector<CudaKernel> kernels_; // [device]
  std::vector<CudaKernel> singles_; // [device]: sdma_copy_one
  std::vector<int> smCounts_;       // [device]
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CECOPYKERNEL_H
