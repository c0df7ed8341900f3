//===- CudaSizeClasses.h - a kernel built for one chunk size ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A specialised load/store kernel takes its chunk size as an argument, so
// one build serves every size. For small chunks, where the kernel's fixed
// cost is what a collective costs, a build with the chunk size compiled in
// (SDMA_CHUNK_BYTES: every offset, count and unit index a constant) is
// faster: on one H200, median 1% over 36-42 points in two A/B runs, 7% at
// the 8-rank all-gathers of 4 and 64 KiB (bench/results/size-classes-h200.md).
// A size class is such a build, compiled when an executor is first
// prepared for its chunk size (from the kernel cache when there) and
// loaded into each context that launches it. It traps if launched with
// another chunk: never other bytes moved.
//
// The in-process executor only (CudaLdstExecutor: one launch per run, its
// previous run finished before prepare()). The communicator launches while
// the rank's previous kernel may still spin waiting for its peers, and with
// size classes its 8-process collectives timed out on one H200 (4 processes
// passed) -- likely CUDA's lazy module loading, which synchronises the
// context; not used there.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDASIZECLASSES_H
#define SDMA_RUNTIME_LIB_CUDA_CUDASIZECLASSES_H

#include "cuda/CudaKernel.h"
#include "sdma/runtime/LdstProgram.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sdma::rt {

/// Chunks up to this size get a size class (above, bandwidth dominates and
/// the generic build is as fast).
constexpr uint64_t kSizeClassMaxChunk = 64 * 1024;
/// Distinct chunk sizes one program compiles a class for; later sizes run
/// the generic build (a job that varies its sizes compiles at most this
/// many times).
constexpr int kSizeClassMax = 8;

class CudaSizeClasses {
public:
  /// Classes of `program` (none unless `enabled` and the program is
  /// specialised), compiled through `cacheDirectory`.
  CudaSizeClasses(const cuda::Driver &driver, const LdstProgram &program,
                  std::string cacheDirectory, bool enabled)
      : driver_(driver), program_(program),
        cacheDirectory_(std::move(cacheDirectory)),
        enabled_(enabled && program.specialised) {}
  CudaSizeClasses(const CudaSizeClasses &) = delete;
  CudaSizeClasses &operator=(const CudaSizeClasses &) = delete;

  /// The class of `chunk` in `context` (on `device`), loaded for
  /// kLdstThreads threads per block, or null when the chunk gets none (too
  /// large, disabled, kSizeClassMax sizes taken, or the build failed: then
  /// no more are tried, and disabledBecause() says why). False with
  /// `error` when loading a built class fails.
  bool get(cuda::CUdevice device, cuda::CUcontext context, uint64_t chunk,
           CudaKernel *&kernel, std::string &error);
  /// Why classes stopped being built ("" while they are not).
  const std::string &disabledBecause() const { return disabledBecause_; }

private:
  struct Loaded {
    cuda::CUcontext context;
    uint64_t chunk;
    std::unique_ptr<CudaKernel> kernel; // where get() pointed
  };
  const cuda::Driver &driver_;
  const LdstProgram &program_;
  std::string cacheDirectory_;
  bool enabled_;
  std::string disabledBecause_;
  std::vector<uint64_t> chunks_; // the sizes that have a class
  std::vector<Loaded> loaded_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDASIZECLASSES_H
