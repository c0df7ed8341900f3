//===- CudaDeviceSet.h - ranks on NVIDIA GPUs and their memory --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The memory of the NVIDIA vendor, for the executors (ranks of one process
// spread over GPUs) and the communicator's CUDA device (one rank, one GPU)
// alike: ranks placed on GPUs in contiguous groups (all on one GPU for
// tests, one GPU per rank on a multi-GPU host), each GPU's primary context,
// peer access between every pair, zeroed device allocations, pinned host
// memory mapped into the GPUs, every rank's symmetric buffers with host
// upload/download, and memory shared with other processes by CUDA IPC
// handles. Everything allocated, mapped or imported is freed, unmapped or
// closed with the set.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDADEVICESET_H
#define SDMA_RUNTIME_LIB_CUDA_CUDADEVICESET_H

#include "cuda/CudaDriver.h"
#include "exec/IpcImports.h"
#include "sdma/runtime/HostMemory.h"

#include <vector>

namespace sdma::rt {

class CudaDeviceSet {
public:
  struct Device {
    int firstRank = 0, numRanks = 0;
    int ordinal = 0;
    cuda::CUdevice device = 0;
    cuda::CUcontext context = nullptr;
    int smCount = 0; // its multiprocessors
  };

  explicit CudaDeviceSet(const cuda::Driver &driver) : driver_(driver) {}
  CudaDeviceSet(const CudaDeviceSet &) = delete;
  CudaDeviceSet &operator=(const CudaDeviceSet &) = delete;
  ~CudaDeviceSet();

  /// Places `ranks` ranks on `ordinals` (empty: all on `fallback`), retains
  /// each GPU's primary context, reads its multiprocessor count and enables
  /// peer access between all pairs.
  bool init(int ranks, std::vector<int> ordinals, int fallback,
            std::string &error);

  const std::vector<Device> &devices() const { return devices_; }
  const Device &of(int rank) const { return devices_[rank / ranksPerDevice_]; }
  int indexOf(int rank) const { return rank / ranksPerDevice_; }
  /// Makes `rank`'s (or device `index`'s) context current.
  bool use(int rank, std::string &error) const;
  bool useDevice(size_t index, std::string &error) const;

  /// Zeroed device memory on `rank`'s GPU, freed with the set.
  bool alloc(int rank, cuda::CUdeviceptr &ptr, size_t bytes,
             std::string &error);
  /// Zeroed pinned host memory, mapped into every GPU: its host address
  /// and its device address. Freed with the set.
  bool allocMapped(size_t bytes, void *&host, cuda::CUdeviceptr &device,
                   std::string &error);
  /// Forgets every allocation, import and context without freeing them
  /// (after a run that left streams blocked, freeing could block too).
  void abandon() {
    owned_.clear();
    mapped_.clear();
    for (IpcImports &imports : imports_)
      imports.forget();
    devices_.clear();
  }
  /// Frees memory from alloc() now.
  bool release(cuda::CUdeviceptr ptr, std::string &error);
  /// (Re)allocates every rank's buffers for `chunkBytes`: buffer b of rank
  /// r is chunks[b] x chunkBytes bytes. Only grows; waits for each GPU first.
  bool allocateBuffers(const std::vector<int64_t> &chunks, size_t chunkBytes,
                       std::string &error);
  cuda::CUdeviceptr buffer(int rank, size_t b) const {
    return buffers_[rank * numBuffers_ + b];
  }
  const std::vector<cuda::CUdeviceptr> &buffers() const { return buffers_; }

  /// Host <-> device copies of every rank's buffers; upload returns with
  /// the bytes in place on every GPU.
  bool upload(const HostMemory &memory, std::string &error);
  bool download(HostMemory &memory, std::string &error);

  /// A blob (IpcExport) another process passes to importMemory to map the
  /// allocation of GPU `index` that holds [ptr, ptr + bytes): device
  /// memory of this process, from this set or not (a caching allocator's
  /// block).
  bool exportMemory(size_t index, char *ptr, size_t bytes, std::string &blob,
                    std::string &error);
  /// Maps rank `peer`'s blob on GPU `index`: the address of its pointer
  /// here. Each block is opened once; closed with the set.
  bool importMemory(size_t index, int peer, const std::string &blob, char *&ptr,
                    std::string &error);

private:
  bool check(cuda::CUresult result, const char *call, std::string &error) const;

  const cuda::Driver &driver_;
  std::vector<Device> devices_;
  int ranks_ = 0, ranksPerDevice_ = 1;
  size_t numBuffers_ = 0, capacity_ = 0;
  std::vector<cuda::CUdeviceptr> buffers_;
  std::vector<std::pair<int, cuda::CUdeviceptr>> owned_; // (rank, pointer)
  std::vector<void *> mapped_;                           // allocMapped
  std::vector<IpcImports> imports_;                      // [device]
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDADEVICESET_H
