//===- CudaCommKernel.h - the communicator's kernels on CUDA ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's load/store program and point-to-point kernel on one
// NVIDIA GPU (CudaCommDevice.cpp's device loads them): each built by NVRTC
// through the kernel cache and launched for this process's rank on the
// caller's stream. Where ranks of the job share the GPU, the program is
// also built with SDMA_GROUP: its group entries run several ranks' calls
// as one launch (GroupLaunch.h), each rank with its own table.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDACOMMKERNEL_H
#define SDMA_RUNTIME_LIB_CUDA_CUDACOMMKERNEL_H

#include "comm/CommDevice.h"
#include "cuda/CudaDriver.h"

#include <memory>
#include <string>

namespace sdma::rt {

/// What the communicator's kernels need of its CUDA device.
class CudaCommGpu {
public:
  virtual ~CudaCommGpu() = default;
  virtual const cuda::Driver &driver() const = 0;
  virtual cuda::CUdevice device() const = 0;
  /// The GPU's primary context.
  virtual cuda::CUcontext context() const = 0;
  virtual int smCount() const = 0;
  /// The ranks of this process's job on the GPU (at least 1).
  virtual int sharing() const = 0;
  /// The kernel cache's folder ("": the default one).
  virtual const std::string &cacheDirectory() const = 0;

  /// Makes context() the calling thread's; false with the driver's reason.
  bool makeCurrent(std::string &error) const {
    if (cuda::CUresult r = driver().cuCtxSetCurrent(context()); r) {
      error = driver().describe("cuCtxSetCurrent", r);
      return false;
    }
    return true;
  }
};

/// `program` built and loaded on `gpu` (it must outlive the kernel); null
/// with the reason in `error`.
std::unique_ptr<CommKernel> loadCudaCommKernel(const CudaCommGpu &gpu,
                                               const LdstProgram &program,
                                               std::string &error);
/// The point-to-point kernel (PointToPoint.h) on `gpu`.
std::unique_ptr<CommKernel> loadCudaP2pKernel(const CudaCommGpu &gpu,
                                              std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDACOMMKERNEL_H
