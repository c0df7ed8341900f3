//===- HipDeviceSet.h - ranks on AMD GPUs and their memory ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The memory of the AMD vendor, CudaDeviceSet's twin with the same shape,
// for the HIP executors and the communicator's HIP device: ranks placed on
// GPUs in contiguous groups (each GPU's gfx architecture and compute units
// read once), peer access between every pair, zeroed allocations, pinned
// host memory mapped into the GPUs, every rank's buffers (re)allocated per
// chunk size, uploads that return with the bytes in place on every GPU, and
// memory shared with other processes by HIP IPC handles; everything freed,
// unmapped or closed with the set. Built against Debian's HIP 5.2 headers;
// there is no AMD GPU in this project's reach, so it has been compiled,
// never run.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPDEVICESET_H
#define SDMA_RUNTIME_LIB_HIP_HIPDEVICESET_H

#include "exec/IpcImports.h"
#include "hip/HipApi.h"
#include "sdma/runtime/HostMemory.h"

#include <vector>

namespace sdma::rt {

class HipDeviceSet {
public:
  struct Device {
    int firstRank = 0, numRanks = 0;
    int ordinal = 0;
    std::string arch; // "gfx90a" (gcnArchName without its features)
    int computeUnits = 0;
  };

  explicit HipDeviceSet(const hip::HipApi &api) : api_(api) {}
  HipDeviceSet(const HipDeviceSet &) = delete;
  HipDeviceSet &operator=(const HipDeviceSet &) = delete;
  ~HipDeviceSet();

  /// Places `ranks` ranks on `ordinals` (empty: all on `fallback`), reads
  /// each GPU's properties and enables peer access between all pairs.
  bool init(int ranks, std::vector<int> ordinals, int fallback,
            std::string &error);

  const std::vector<Device> &devices() const { return devices_; }
  const Device &of(int rank) const { return devices_[rank / ranksPerDevice_]; }
  int indexOf(int rank) const { return rank / ranksPerDevice_; }
  /// Makes `rank`'s (or device `index`'s) GPU current.
  bool use(int rank, std::string &error) const;
  bool useDevice(size_t index, std::string &error) const;
  /// Waits for every GPU.
  bool synchronize(std::string &error) const;

  /// Zeroed device memory on `rank`'s GPU, freed with the set.
  bool alloc(int rank, void *&ptr, size_t bytes, std::string &error);
  /// Frees memory from alloc() now.
  bool release(void *ptr, std::string &error);
  /// Zeroed pinned host memory, mapped into the GPUs: its host address and
  /// its device address. Freed with the set.
  bool allocMapped(size_t bytes, void *&host, void *&device,
                   std::string &error);
  /// Forgets every allocation and import without freeing them (after a run
  /// that left streams blocked, freeing could block too).
  void abandon() {
    owned_.clear();
    mapped_.clear();
    for (IpcImports &imports : imports_)
      imports.forget();
  }
  /// (Re)allocates every rank's buffers for `chunkBytes`: buffer b of rank
  /// r is chunks[b] x chunkBytes bytes. Only grows; waits for each GPU first.
  bool allocateBuffers(const std::vector<int64_t> &chunks, size_t chunkBytes,
                       std::string &error);
  void *buffer(int rank, size_t b) const {
    return buffers_[rank * numBuffers_ + b];
  }
  const std::vector<void *> &buffers() const { return buffers_; }

  /// Host <-> device copies of every rank's buffers; upload returns with
  /// the bytes in place on every GPU.
  bool upload(const HostMemory &memory, std::string &error);
  bool download(HostMemory &memory, std::string &error);

  /// A blob (IpcExport) another process passes to importMemory to map the
  /// allocation of GPU `index` that holds [ptr, ptr + bytes): device
  /// memory of this process, from this set or not.
  bool exportMemory(size_t index, char *ptr, size_t bytes, std::string &blob,
                    std::string &error);
  /// Maps rank `peer`'s blob on GPU `index`: the address of its pointer
  /// here. Each block is opened once; closed with the set.
  bool importMemory(size_t index, int peer, const std::string &blob, char *&ptr,
                    std::string &error);

private:
  bool check(hipError_t result, const char *call, std::string &error) const;

  const hip::HipApi &api_;
  std::vector<Device> devices_;
  int ranks_ = 0, ranksPerDevice_ = 1;
  size_t numBuffers_ = 0, capacity_ = 0;
  std::vector<void *> buffers_;
  std::vector<std::pair<int, void *>> owned_; // (rank, pointer)
  std::vector<void *> mapped_;                // allocMapped
  std::vector<IpcImports> imports_;           // [device]
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HIP_HIPDEVICESET_H
