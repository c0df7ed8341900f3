//===- CudaLdstExecutor.h - load/store kernels on NVIDIA GPUs ---*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Runs a load/store program (sdma-translate --sdma-to-hip) with the CUDA
// driver API: the source, with the CUDA prelude, is compiled by NVRTC for the
// device's architecture (cached on disk), every rank's buffers, flags and
// barrier counters are bound into a device-side table, and one launch per
// device runs all the ranks it holds (blockIdx.y = rank - rankBase). Ranks
// share GPU `device` (a test setup) or, with `devices`, are spread over
// several GPUs in contiguous groups with peer access between all of them.
// Every wait in the kernel is bounded.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDALDSTEXECUTOR_H
#define SDMA_RUNTIME_LIB_CUDA_CUDALDSTEXECUTOR_H

#include "cuda/CudaDeviceSet.h"
#include "cuda/CudaDriver.h"
#include "cuda/CudaKernel.h"
#include "cuda/CudaSizeClasses.h"
#include "exec/LaunchPool.h"
#include "sdma/runtime/Executor.h"

#include <memory>

namespace sdma::rt {

class CudaLdstExecutor : public Executor {
public:
  /// Loads the driver, compiles (or fetches) the kernel and loads it.
  /// Returns nullptr with `error` ("no GPU: ..." where there is none).
  static std::unique_ptr<CudaLdstExecutor> create(const LdstProgram &program,
                                                  const CudaOptions &options,
                                                  std::string &error);
  ~CudaLdstExecutor() override;

  std::string name() const override { return "cuda-ldst"; }
  std::string description() const override;
  const CompileInfo *compileInfo() const override { return &compile_; }

  bool prepare(size_t chunkBytes, std::string &error) override;
  bool upload(const HostMemory &memory, std::string &error) override;
  bool download(HostMemory &memory, std::string &error) override;
  /// Launches one run on the executor's stream (no wait).
  bool launch(std::string &error) override;
  /// Waits for the launched runs; a timed-out wait in the kernel is
  /// reported with the rank, flag slot and values.
  bool wait(std::string &error) override;
  /// Each run between two CUDA events, waited for before the next.
  bool time(int runs, std::vector<double> &microseconds,
            std::string &error) override;

  int blocksPerRank() const { return groups_.empty() ? 1 : groups_[0].blocks; }
  int deviceCount() const override { return static_cast<int>(groups_.size()); }

private:
  /// What one device holds to run its ranks (devices_.devices()[i]).
  struct Group {
    explicit Group(const cuda::Driver &driver) : kernel(driver) {}
    int firstRank = 0, numRanks = 0;
    cuda::CUdevice device = 0;
    cuda::CUcontext context = nullptr;
    CudaKernel kernel;                 // the program, loaded here
    CudaKernel *classKernel = nullptr; // the chunk's size class
    cuda::CUstream stream = nullptr;
    int smCount = 0, blocks = 1;
    cuda::CUdeviceptr error = 0; // its kernel's error record
    std::vector<uint64_t> table; // its kernel's SdmaTable, by value
  };
  CudaLdstExecutor(const cuda::Driver &driver, const LdstProgram &program,
                   const CudaOptions &options)
      : driver_(driver), program_(program), options_(options), devices_(driver),
        classes_(driver, program_, options.cacheDirectory,
                 options.sizeClasses && !options.stagedOps) {}
  bool check(cuda::CUresult result, const char *call, std::string &error);
  /// Group g's launch, bracketed by events when `start`/`stop` are given.
  bool launchGroup(size_t g, unsigned long long chunk, unsigned long long epoch,
                   cuda::CUevent start, cuda::CUevent stop, std::string &error);
  /// launchGroup for every group: on the pool, or one after another.
  bool launchAll(const std::vector<cuda::CUevent> *starts,
                 const std::vector<cuda::CUevent> *stops, std::string &error);

  const cuda::Driver &driver_;
  LdstProgram program_;
  CudaOptions options_;
  CompileInfo compile_;
  CudaDeviceSet devices_;
  CudaSizeClasses classes_;
  std::vector<Group> groups_; // one per device of devices_
  size_t chunkBytes_ = 0;
  uint64_t epoch_ = 0;
  std::vector<cuda::CUdeviceptr> flags_, syncs_; // per rank
  std::unique_ptr<LaunchPool> pool_; // several GPUs and parallelLaunch
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDALDSTEXECUTOR_H
