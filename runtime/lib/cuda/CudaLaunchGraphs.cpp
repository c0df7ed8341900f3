//===- CudaLaunchGraphs.cpp - replayed launches as CUDA graphs ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaLaunchGraphs.h"
#include "cuda/CudaKernel.h"

#include <cstdlib>

using namespace sdma::rt::cuda;

namespace {
/// Keys counted or graphs kept per kernel before all are dropped (a job
/// that replays many shapes builds them again).
constexpr size_t kMaxEntries = 64;

uint64_t hashWords(const std::vector<uint64_t> &words) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t w : words) {
    h ^= w;
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}
} // namespace

bool sdma::rt::cuda::launchGraphsEnabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("SDMA_LAUNCH_GRAPHS");
    return v && std::string(v) == "1";
  }();
  return enabled;
}

LaunchGraphs::~LaunchGraphs() {
  clear();
  if (captureStream_)
    driver_.cuStreamDestroy_v2(captureStream_);
}

void LaunchGraphs::clear() {
  for (auto &[hash, entry] : entries_)
    if (entry.exec)
      driver_.cuGraphExecDestroy(entry.exec);
  entries_.clear();
}

bool LaunchGraphs::capture(rt::CudaKernel &kernel, unsigned blocks,
                           unsigned blocksY, void **args, CUgraphExec &exec,
                           std::string &error) {
  auto failed = [&](const char *call, CUresult r) {
    error = driver_.describe(call, r) + " (a replayed launch as a graph)";
    return false;
  };
  if (!captureStream_)
    if (CUresult r = driver_.cuStreamCreate(&captureStream_, 1u); r)
      return failed("cuStreamCreate", r); // CU_STREAM_NON_BLOCKING
  // Thread-local: other threads' calls (ranks as threads) are not
  // captured, nor made to fail by this capture.
  if (CUresult r = driver_.cuStreamBeginCapture(
          captureStream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      r)
    return failed("cuStreamBeginCapture", r);
  std::string why;
  bool launched = kernel.launch(blocks, blocksY, captureStream_, args, why);
  CUgraph graph = nullptr;
  CUresult ended = driver_.cuStreamEndCapture(captureStream_, &graph);
  if (!launched) {
    if (graph)
      driver_.cuGraphDestroy(graph);
    error = why + " (captured for a graph)";
    return false;
  }
  if (ended)
    return failed("cuStreamEndCapture", ended);
  CUresult made = driver_.cuGraphInstantiateWithFlags(&exec, graph, 0);
  driver_.cuGraphDestroy(graph);
  return made == 0 || failed("cuGraphInstantiateWithFlags", made);
}

LaunchGraphs::Result LaunchGraphs::launch(rt::CudaKernel &kernel,
                                          unsigned blocks, unsigned blocksY,
                                          void **args,
                                          const std::vector<uint64_t> &key,
                                          CUstream stream, std::string &error) {
  if (!launchGraphsEnabled() || !driver_.cuStreamBeginCapture ||
      !driver_.cuStreamEndCapture || !driver_.cuGraphInstantiateWithFlags ||
      !driver_.cuGraphLaunch || !driver_.cuGraphExecDestroy ||
      !driver_.cuGraphDestroy || !driver_.cuStreamIsCapturing)
    return Result::Plain;
  // A caller capturing its stream gets the launch itself in its graph.
  int capturing = 0;
  if (driver_.cuStreamIsCapturing(stream, &capturing) || capturing)
    return Result::Plain;
  const uint64_t hash = hashWords(key);
  std::lock_guard<std::mutex> lock(mutex_);
  Entry *entry = nullptr;
  for (auto [it, end] = entries_.equal_range(hash); it != end; ++it)
    if (it->second.key == key)
      entry = &it->second;
  if (!entry) {
    if (entries_.size() >= kMaxEntries)
      clear();
    entry = &entries_.emplace(hash, Entry{key, nullptr, 0})->second;
  }
  if (!entry->exec && ++entry->seen < 2)
    return Result::Plain;
  if (!entry->exec) {
    // A launch the driver will not capture goes plainly, now and after.
    std::string why;
    if (!capture(kernel, blocks, blocksY, args, entry->exec, why)) {
      entry->exec = nullptr;
      entry->seen = -(1 << 30);
      return Result::Plain;
    }
  }
  if (CUresult r = driver_.cuGraphLaunch(entry->exec, stream); r) {
    error = driver_.describe("cuGraphLaunch", r) +
            " (a replayed launch as a graph; SDMA_LAUNCH_GRAPHS=0 launches "
            "it plainly)";
    return Result::Failed;
  }
  return Result::Launched;
}
