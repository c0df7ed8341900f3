//===- CudaSizeClasses.cpp - a kernel built for one chunk size ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaSizeClasses.h"
#include "cuda/CudaLdstExecutor.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

CudaSizeClasses::~CudaSizeClasses() {
  for (Loaded &l : loaded_) {
    driver_.cuCtxSetCurrent(l.context);
    driver_.cuModuleUnload(l.module);
  }
}

bool CudaSizeClasses::get(CUdevice device, CUcontext context, uint64_t chunk,
                          CUfunction &function, int &blocksPerSM,
                          std::string &error) {
  function = nullptr;
  if (!enabled_ || chunk == 0 || chunk > kSizeClassMaxChunk)
    return true;
  for (const Loaded &l : loaded_)
    if (l.context == context && l.chunk == chunk) {
      function = l.function;
      blocksPerSM = l.blocksPerSM;
      return true;
    }
  bool known =
      std::find(chunks_.begin(), chunks_.end(), chunk) != chunks_.end();
  if (!known && chunks_.size() >= size_t(kSizeClassMax))
    return true;
  CompileInfo compile;
  std::string cubin;
  std::string why;
  if (!buildLdstCubin(driver_, device, sizeClassProgram(program_, chunk), false,
                      cacheDirectory_, compile, cubin, why)) {
    // A faster build that cannot be had (no NVRTC beside a cached generic
    // build, say) is not a failure: the generic build serves every size.
    enabled_ = false;
    disabledBecause_ =
        "the " + std::to_string(chunk) + "-byte size class: " + why;
    return true;
  }
  Loaded l{context, chunk, nullptr, nullptr, 0};
  const char *call = "cuCtxSetCurrent";
  CUresult r = driver_.cuCtxSetCurrent(context);
  if (r == 0 && (call = "cuModuleLoadData"))
    r = driver_.cuModuleLoadData(&l.module, cubin.data());
  if (r == 0 && (call = "cuModuleGetFunction"))
    r = driver_.cuModuleGetFunction(&l.function, l.module,
                                    program_.entry.c_str());
  if (r == 0 && (call = "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    r = driver_.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        &l.blocksPerSM, l.function, kLdstThreads, 0);
  if (r) {
    if (l.module)
      driver_.cuModuleUnload(l.module);
    error = "the " + std::to_string(chunk) +
            "-byte size class: " + driver_.describe(call, r);
    return false;
  }
  if (!known)
    chunks_.push_back(chunk);
  loaded_.push_back(l);
  function = l.function;
  blocksPerSM = l.blocksPerSM;
  return true;
}
