//===- Executor.h - one interface for every way to run a plan -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every backend that runs a compiled schedule -- the CPU reference
// simulator, the DMA timing model, the AMD packet simulator, the load/store
// kernel on the CPU, CUDA (load/store kernel, copy engines) and HIP
// (load/store kernel, SDMA engines) -- is an Executor:
//
//   CompiledSchedule compiled = ...;            // plan (+ kernel, packets)
//   auto executor = createExecutor("cuda-ldst", compiled, options, error);
//   executor->prepare(chunkBytes, error);       // buffers for this size
//   executor->upload(memory, error);            // every rank's inputs
//   executor->launch(error);                    // enqueue one run
//   executor->wait(error);                      // ... and wait for it
//   executor->download(memory, error);          // every rank's buffers
//   executor->time(runs, microseconds, error);  // timed runs
//
// Backends are named in one table (BackendRegistry.h); tools and the APIs
// pick from it by name. runAndCheck (RunCheck.h) is the one fill / run / check
// / time chain every tool uses. Driver details (CUDA driver API, HIP) stay
// inside the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_EXECUTOR_H
#define SDMA_RUNTIME_EXECUTOR_H

#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Plan.h"
#include "sdma/runtime/Simulator.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdma::rt {

/// What the compiler produced for one schedule and DMA variant, loaded:
/// the plan always; the load/store kernel and the AMD SDMA packet plan where
/// a backend needs them.
struct CompiledSchedule {
  Plan plan;
  std::optional<LdstProgram> ldst;
  std::optional<PacketPlan> packets;

  /// Parses compiler output; `ldstSource` and `packetsText` may be empty.
  static std::optional<CompiledSchedule> parse(std::string_view planText,
                                               std::string ldstSource,
                                               std::string_view packetsText,
                                               std::string &error);
};

/// Where GPU executors run, for both vendors.
struct DeviceOptions {
  int device = 0;
  /// Several GPUs: rank r runs on devices[r / ceil(R / devices.size())].
  /// Empty: every rank on `device`.
  std::vector<int> devices;
  /// "" : the default kernel cache ($SDMA_CACHE_DIR, else
  /// $XDG_CACHE_HOME/sdma, else ~/.cache/sdma).
  std::string cacheDirectory;
  /// A wait (or rank barrier) that takes longer fails the run.
  uint64_t timeoutNs = 5'000'000'000ull;
};

/// The CUDA load/store executor (cuda-ldst).
struct CudaOptions : DeviceOptions {
  /// Blocks per rank; 0: from the size, capped so that every block of every
  /// rank is resident at once (ranks wait on each other).
  int blocksPerRank = 0;
  /// With blocksPerRank 0: the 16-byte units per thread the grid is sized
  /// for (blocks = largest buffer / (512 threads x 16 B x this), capped as
  /// above); 0: kLdstUnitsPerThread (1).
  int unitsPerThread = 0;
  /// Several GPUs: launch on every GPU at once, one host thread each,
  /// instead of one cuLaunchKernel after another from the calling thread.
  /// Cuts the host time of a launch over four H200s from 18.6 to 6.7 us,
  /// but not the collective's latency (measured: 1 KiB all-gather 10.0 us
  /// pooled vs 9.0 us one thread; bench/results/collectives-h200x4.csv),
  /// and its workers spin for 2 ms after each run: off by default.
  bool parallelLaunch = false;
  /// Compile the kernel with SDMA_STAGED_OPS: each phase's ops are first
  /// resolved into shared memory by one thread each, instead of by every
  /// thread in turn (bench/results/ncu-ldst-small-h200.md).
  bool stagedOps = false;
  /// Small chunks (<= 64 KiB) run a build of the kernel with the chunk
  /// size compiled in, built when prepare() first sees that size and
  /// cached (size classes: runtime/lib/cuda/CudaSizeClasses.h); at most 8 sizes
  /// per executor. Specialised kernels only.
  bool sizeClasses = true;
};

/// The CUDA copy-engine executor (cuda-ce): the plan's queues as streams.
struct CeOptions {
  /// cuMemcpyBatchAsync per run of copies.
  bool batch = false;
  /// Capture one run into a CUDA graph and replay it.
  bool graph = false;
  /// With batch: CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (a hint).
  bool preferCopyEngines = false;
  /// Every poll a cuStreamWaitValue64 on its flag, as for a notifier in
  /// another process, instead of an event. Streams then spin-wait on each
  /// other: with more streams than hardware queues a run can deadlock and
  /// time out. For testing that path on one GPU.
  bool valueWaits = false;
  /// Kernel-triggered copies: every queue of a launched run first waits
  /// (cuStreamWaitValue64) on its rank's launch flag, which a kernel writes
  /// (kernelTrigger gives where and what): the copies sit prelaunched and
  /// no host call stands between the kernel and them. Not with graph.
  bool kernelTrigger = false;
  /// The copies of a queue run that stay on one GPU (source, destination
  /// and queue on the same device: NVIDIA moves them with kernels, not copy
  /// engines) issued as one copy-list kernel launch per run instead of one
  /// cuMemcpy (a kernel node each, in a graph) per copy; copies to or from
  /// a peer GPU stay copy-engine copies. Loads the kernel (NVRTC, cached).
  bool localCopyKernel = false;
};

/// The HIP executors (hip-ldst, hip-dma).
struct HipOptions : DeviceOptions {};

/// Everything a backend may need; each reads its own part.
struct ExecutorOptions {
  CudaOptions cuda;
  CeOptions ce;
  HipOptions hip;
  LdstCpuOptions cpu;
  /// The DMA timing profile of sdma-sim and sdma-packets (JSON path).
  std::string dmaProfile;
  SimulatorOptions simulator;
};

/// How a kernel was made ready (JIT executors).
struct CompileInfo {
  bool cacheHit = false;
  bool cacheWasCorrupt = false;
  double compileMs = 0; // NVRTC or hipRTC, 0 on a hit
  double loadMs = 0;    // cache read + module load
  std::string arch;
  /// The kernel's registers per thread and resident blocks per SM (GPU
  /// load/store executors; 0 where unknown).
  int registers = 0;
  int blocksPerSM = 0;
};

/// One way to run a compiled schedule. Not thread-safe; one run at a time.
class Executor {
public:
  virtual ~Executor();

  /// The backend's name in backends() ("cuda-ldst").
  virtual std::string name() const = 0;
  /// One line: what runs where and what time() measures.
  virtual std::string description() const = 0;
  /// Chunk sizes must be multiples of this (1 but for packet programs).
  virtual size_t chunkAlign() const { return 1; }

  /// Allocates every rank's buffers for this chunk size (again only if it
  /// grew) and binds them.
  virtual bool prepare(size_t chunkBytes, std::string &error) = 0;
  /// Host -> executor copies of every rank's buffers (flags excepted: they
  /// are the executor's own). `memory` has the compiled plan's layout.
  virtual bool upload(const HostMemory &memory, std::string &error) = 0;
  /// Executor -> host copies of every rank's buffers.
  virtual bool download(HostMemory &memory, std::string &error) = 0;
  /// Starts one run (GPU executors: enqueues it and returns; host
  /// executors: runs it).
  virtual bool launch(std::string &error) = 0;
  /// Waits for the launched runs, at most the timeout; a wait that never
  /// completes is reported with where it was blocked.
  virtual bool wait(std::string &error) = 0;
  /// launch() then wait().
  bool run(std::string &error) { return launch(error) && wait(error); }
  /// Times `runs` runs (each waited for before the next), microseconds each.
  /// Model-timed backends give one value: the prediction.
  virtual bool time(int runs, std::vector<double> &microseconds,
                    std::string &error) = 0;

  /// Host executors: one run directly over `memory` (made for the compiled
  /// plan at the prepared chunk size), with no copies in or out; what
  /// runAndCheck uses for their checked runs. False with an error elsewhere.
  virtual bool runInPlace(HostMemory &memory, std::string &error) {
    (void)memory;
    error = name() + " runs on its own memory (upload, run, download)";
    return false;
  }
  virtual bool runsInPlace() const { return false; }
  /// time() is a model's prediction: it runs nothing.
  virtual bool modelTimed() const { return false; }

  /// GPUs the ranks are spread over (0 for host executors).
  virtual int deviceCount() const { return 0; }
  /// JIT executors: how the kernel was made ready; else null.
  virtual const CompileInfo *compileInfo() const { return nullptr; }
  /// True once a run did not finish within the timeout and the executor
  /// cannot be used again (its GPU streams stay blocked): report and exit.
  virtual bool stuck() const { return false; }

  /// Kernel-triggered runs (cuda-ce with CeOptions::kernelTrigger): the
  /// last launched run's queues of `rank` start once a kernel stores the
  /// 64-bit `value` at device address `flag` (system scope). False with
  /// `error` elsewhere.
  virtual bool kernelTrigger(int rank, uint64_t &flag, uint64_t &value,
                             std::string &error) const {
    (void)rank, (void)flag, (void)value;
    error = name() + " has no kernel trigger";
    return false;
  }
  /// GPU executors: the device address of `rank`'s `buffer` (prepared).
  virtual bool deviceBuffer(int rank, int buffer, uint64_t &address,
                            std::string &error) const {
    (void)rank, (void)buffer, (void)address;
    error = name() + " exposes no device buffers";
    return false;
  }
};

/// The median of `values` (0 if empty).
double median(std::vector<double> values);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_EXECUTOR_H
