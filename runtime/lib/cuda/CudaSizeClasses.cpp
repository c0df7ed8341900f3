//===- CudaSizeClasses.cpp - a kernel built for one chunk size ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaSizeClasses.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

bool CudaSizeClasses::get(CUdevice device, CUcontext context, uint64_t chunk,
                          CudaKernel *&kernel, std::string &error) {
  kernel = nullptr;
  if (!enabled_ || chunk == 0 || chunk > kSizeClassMaxChunk)
    return true;
  for (const Loaded &l : loaded_)
    if (l.context == context && l.chunk == chunk) {
      kernel = l.kernel.get();
      return true;
    }
  bool known =
      std::find(chunks_.begin(), chunks_.end(), chunk) != chunks_.end();
  if (!known && chunks_.size() >= size_t(kSizeClassMax))
    return true;
  CompileInfo compile;
  std::string cubin;
  std::string why;
  if (!CudaKernel::build(
          driver_, device,
          CudaKernelSource::ldst(sizeClassProgram(program_, chunk), false),
          cacheDirectory_, compile, cubin, why)) {
    // A faster build that cannot be had (no NVRTC beside a cached generic
    // build, say) is not a failure: the generic build serves every size.
    enabled_ = false;
    disabledBecause_ =
        "the " + std::to_string(chunk) + "-byte size class: " + why;
    return true;
  }
  auto loaded = std::make_unique<CudaKernel>(driver_);
  if (!loaded->load(context, cubin, program_.entry, kLdstThreads, error)) {
    error = "the " + std::to_string(chunk) + "-byte size class: " + error;
    return false;
  }
  if (!known)
    chunks_.push_back(chunk);
  kernel = loaded.get();
  loaded_.push_back({context, chunk, std::move(loaded)});
  return true;
}
