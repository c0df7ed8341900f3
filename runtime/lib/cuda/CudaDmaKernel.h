//===- CudaDmaKernel.h - the communicator's copy-engine path ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The DMA path (DmaProgram.h, GpuDmaKernel.h) on an NVIDIA GPU: GpuDmaOps
// on the driver API in the rank's primary context. A copy is
// cuMemcpyDtoDAsync between the IPC-mapped buffers (to or from a peer GPU
// it runs on a copy engine; within one GPU CUDA copies with SMs); the sync
// kernel (waits and notifies) NVRTC-compiled through the kernel cache. Built
// and compiled in CI (the sync kernel for sm_90); it has not run on a GPU yet
// (scripts/gpu-dma.sh).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDADMAKERNEL_H
#define SDMA_RUNTIME_LIB_CUDA_CUDADMAKERNEL_H

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"
#include "cuda/CudaDriver.h"

#include <memory>

namespace sdma::rt {

/// The DMA path of `program` on `device` in `context` (the sync kernel
/// compiled through the kernel cache in `cacheDirectory`); null with why.
/// `batch`: a queue's unordered copies as one cuMemcpyBatchAsync where the
/// driver has it and the stream is not being captured.
std::unique_ptr<CommKernel> createCudaDmaKernel(
    const cuda::Driver &driver, cuda::CUdevice device, cuda::CUcontext context,
    std::shared_ptr<const DmaProgram> program,
    const std::string &cacheDirectory, bool batch, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDADMAKERNEL_H
