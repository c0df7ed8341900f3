//===- CudaExecutor.h - load/store kernels on NVIDIA GPUs --------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Runs a load/store program (sdma-translate --sdma-to-hip) with the CUDA
// driver API: the source, with the CUDA prelude, is compiled by NVRTC for the
// device's architecture (cached on disk), every rank's buffers, flags and
// barrier counters are bound into a device-side table, and one launch per
// device runs all the ranks it holds (blockIdx.y = rank). Here all ranks
// share one GPU (a test setup); every wait in the kernel is bounded.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_CUDAEXECUTOR_H
#define SDMA_RUNTIME_CUDAEXECUTOR_H

#include "sdma/runtime/CudaDriver.h"
#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LdstProgram.h"

#include <memory>

namespace sdma::rt {

struct CudaOptions {
  int device = 0;
  /// "" : the default cache directory (see KernelCache).
  std::string cacheDirectory;
  /// A wait (or rank barrier) that takes longer fails the run.
  uint64_t timeoutNs = 5'000'000'000ull;
  /// Blocks per rank; 0: from the size, capped so that every block of every
  /// rank is resident at once (ranks wait on each other).
  int blocksPerRank = 0;
};

/// What preparing a program cost.
struct CompileInfo {
  bool cacheHit = false;
  bool cacheWasCorrupt = false;
  double compileMs = 0; // NVRTC, 0 on a hit
  double loadMs = 0;    // cache read + cuModuleLoadData
  std::string arch;
};

class CudaLdstExecutor {
public:
  /// Loads the driver, compiles (or fetches) the kernel and loads it.
  /// Returns nullptr with `error` ("no GPU: ..." where there is none).
  static std::unique_ptr<CudaLdstExecutor> create(const LdstProgram &program,
                                                  const CudaOptions &options,
                                                  std::string &error);
  ~CudaLdstExecutor();

  const CompileInfo &compileInfo() const { return compile_; }

  /// Allocates every rank's buffers for this chunk size (again only if it
  /// grew) and binds them.
  bool prepare(size_t chunkBytes, std::string &error);
  /// Host <-> device copies of every rank's buffers.
  bool upload(const HostMemory &memory, std::string &error);
  bool download(HostMemory &memory, std::string &error);

  /// Launches one run on the executor's stream (no wait).
  bool launch(std::string &error);
  /// Waits for the launched runs; a timed-out wait in the kernel is
  /// reported with the rank, flag slot and values.
  bool wait(std::string &error);
  /// launch() then wait().
  bool run(std::string &error) { return launch(error) && wait(error); }
  /// Times `runs` runs, each between two CUDA events and waited for before
  /// the next; returns microseconds each.
  bool time(int runs, std::vector<double> &microseconds, std::string &error);

  int blocksPerRank() const { return blocks_; }

private:
  CudaLdstExecutor(const cuda::Driver &driver, const LdstProgram &program,
                   const CudaOptions &options)
      : driver_(driver), program_(program), options_(options) {}
  bool check(cuda::CUresult result, const char *call, std::string &error);
  bool alloc(cuda::CUdeviceptr &ptr, size_t bytes, std::string &error);

  const cuda::Driver &driver_;
  LdstProgram program_;
  CudaOptions options_;
  CompileInfo compile_;
  cuda::CUdevice device_ = 0;
  cuda::CUcontext context_ = nullptr;
  cuda::CUmodule module_ = nullptr;
  cuda::CUfunction function_ = nullptr;
  cuda::CUstream stream_ = nullptr;
  int smCount_ = 0, blocksPerSM_ = 0, blocks_ = 1;
  size_t chunkBytes_ = 0, capacityChunkBytes_ = 0;
  uint64_t epoch_ = 0;
  std::vector<cuda::CUdeviceptr> buffers_; // [rank * B + b]
  std::vector<cuda::CUdeviceptr> flags_, syncs_;
  std::vector<uint64_t> table_; // the kernel's SdmaTable, by value
  cuda::CUdeviceptr error_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_CUDAEXECUTOR_H
