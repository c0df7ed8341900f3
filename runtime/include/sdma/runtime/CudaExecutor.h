//===- CudaExecutor.h - load/store kernels on NVIDIA GPUs --------*- C++
//-*-===//
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

#ifndef SDMA_RUNTIME_CUDAEXECUTOR_H
#define SDMA_RUNTIME_CUDAEXECUTOR_H

#include "sdma/runtime/CudaDriver.h"
#include "sdma/runtime/DeviceSet.h"
#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LaunchPool.h"
#include "sdma/runtime/LdstProgram.h"

#include <memory>

namespace sdma::rt {

struct CudaOptions {
  int device = 0;
  /// Several GPUs: rank r runs on devices[r / ceil(R / devices.size())].
  /// Empty: every rank on `device`.
  std::vector<int> devices;
  /// "" : the default cache directory (see KernelCache).
  std::string cacheDirectory;
  /// A wait (or rank barrier) that takes longer fails the run.
  uint64_t timeoutNs = 5'000'000'000ull;
  /// Blocks per rank; 0: from the size, capped so that every block of every
  /// rank is resident at once (ranks wait on each other).
  int blocksPerRank = 0;
  /// Several GPUs: launch on every GPU at once, one host thread each
  /// (LaunchPool), instead of one cuLaunchKernel after another from the
  /// calling thread. Cuts the host time of a launch over four H200s from
  /// 18.6 to 6.7 us, but not the collective's latency (measured: 1 KiB
  /// all-gather 10.0 us pooled vs 9.0 us one thread; bench/results/
  /// collectives-h200x4.csv), and its workers spin for 2 ms after each run:
  /// off by default.
  bool parallelLaunch = false;
  /// Compile the kernel with SDMA_STAGED_OPS: each phase's ops are first
  /// resolved into shared memory by one thread each, instead of by every
  /// thread in turn (an experiment against the small-message gap to the
  /// fused kernel; bench/results/ncu-ldst-small-h200.md).
  bool stagedOps = false;
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

  int blocksPerRank() const { return groups_.empty() ? 1 : groups_[0].blocks; }
  /// How many GPUs the ranks are spread over.
  int deviceCount() const { return static_cast<int>(groups_.size()); }

private:
  /// What one device holds to run its ranks (devices_.devices()[i]).
  struct Group {
    int firstRank = 0, numRanks = 0;
    cuda::CUdevice device = 0;
    cuda::CUcontext context = nullptr;
    cuda::CUmodule module = nullptr;
    cuda::CUfunction function = nullptr;
    cuda::CUstream stream = nullptr;
    int smCount = 0, blocksPerSM = 0, blocks = 1;
    cuda::CUdeviceptr error = 0; // its kernel's error record
    std::vector<uint64_t> table; // its kernel's SdmaTable, by value
  };
  CudaLdstExecutor(const cuda::Driver &driver, const LdstProgram &program,
                   const CudaOptions &options)
      : driver_(driver), program_(program), options_(options),
        devices_(driver) {}
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
  DeviceSet devices_;
  std::vector<Group> groups_; // one per device of devices_
  size_t chunkBytes_ = 0;
  uint64_t epoch_ = 0;
  std::vector<cuda::CUdeviceptr> flags_, syncs_; // per rank
  std::unique_ptr<LaunchPool> pool_; // several GPUs and parallelLaunch
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_CUDAEXECUTOR_H
