//===- CudaLaunchGraphs.h - replayed launches as CUDA graphs ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A communicator's call that repeats an earlier one (CallReplay.h) launches
// the same kernel with the same parameters: its table holds no per-call
// value (the run number is on the device). On one H100 cuLaunchKernel
// costs the host 4.0 us and cudaGraphLaunch of a graph holding that one
// launch 1.9 us (bench/launch_cost.cu, bench/results/launch-cost/), so a
// parameter block seen twice becomes a one-node graph, captured on a
// stream of its own, and later launches of it launch the graph:
//
//   launch 1 (replayed)  cuLaunchKernel            the key is counted
//   launch 2 (replayed)  capture, instantiate, cuGraphLaunch
//   launch 3...          cuGraphLaunch             the parameters compared
//
// A graph is never launched into a stream being captured (the caller's
// graph gets the plain launch), and nothing is built where the driver
// lacks graphs. Off unless SDMA_LAUNCH_GRAPHS=1: on one H100 it took one
// rank's load/store call from 4.2 to 2.9 us, but 2 ranks as threads with
// graphs hung once in 3 runs (a rank's kernel never started; the
// 8-thread hang of docs/limitations.md has no graphs, so the cause is not
// known to be the graphs).
//
// Before and after, launch 3 of one parameter block:
//   off: cuLaunchKernel(entry, grid, params)        4.0 us of host time
//   on:  cuGraphLaunch(exec holding that launch)    1.9 us
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDALAUNCHGRAPHS_H
#define SDMA_RUNTIME_LIB_CUDA_CUDALAUNCHGRAPHS_H

#include "cuda/CudaDriver.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sdma::rt {
class CudaKernel;
} // namespace sdma::rt

namespace sdma::rt::cuda {

/// Whether SDMA_LAUNCH_GRAPHS=1 asks for graphs (default off; read once).
bool launchGraphsEnabled();

class LaunchGraphs {
public:
  explicit LaunchGraphs(const Driver &driver) : driver_(driver) {}
  ~LaunchGraphs();
  LaunchGraphs(const LaunchGraphs &) = delete;
  LaunchGraphs &operator=(const LaunchGraphs &) = delete;

  enum class Result { Launched, Plain, Failed };
  /// Launches `kernel` (blocks x blocksY x 1, `args`) on `stream` as a graph
  /// where `key` (every byte the launch passes, the grid included) was seen
  /// before: Launched. Plain: the caller launches it itself (seen once,
  /// no graphs, the stream capturing, a launch the driver would not
  /// capture). Failed: cuGraphLaunch failed (`error`). The kernel's context
  /// must be current.
  Result launch(rt::CudaKernel &kernel, unsigned blocks, unsigned blocksY,
                void **args, const std::vector<uint64_t> &key, CUstream stream,
                std::string &error);

private:
  struct Entry {
    std::vector<uint64_t> key;
    CUgraphExec exec = nullptr;
    int seen = 0;
  };
  bool capture(rt::CudaKernel &kernel, unsigned blocks, unsigned blocksY,
               void **args, CUgraphExec &exec, std::string &error);
  void clear();

  const Driver &driver_;
  std::mutex mutex_;
  /// By the key's hash; a hit compares the whole key.
  std::multimap<uint64_t, Entry> entries_;
  CUstream captureStream_ = nullptr;
};

} // namespace sdma::rt::cuda

#endif // SDMA_RUNTIME_LIB_CUDA_CUDALAUNCHGRAPHS_H
