//===- CudaDmaKernel.h - the communicator's copy-engine path ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The DMA path (DmaProgram.h) on an NVIDIA GPU: on the caller's stream the
// entry barrier (DmaSyncKernel.h, one thread), then this rank's queues,
// each on a stream of its own forked from the caller's (one queue: the
// caller's stream itself): copies as cuMemcpyDtoDAsync between the
// IPC-mapped buffers (a copy to or from a peer GPU runs on a copy engine;
// within one GPU CUDA copies with SMs), a bcast as two copies, a swap as
// three through a staging buffer of the queue's; a notify as
// cuStreamWriteValue64 of its constant into the peer's flag (it orders
// after the queue's copies); a poll as the sync kernel's bounded wait;
// then the queues joined and the exit barrier, which resets the rank's
// flags and advances the run counter on the device. Nothing is host-
// synchronised; the values are constants and the run number lives on the
// device, so the sequence is capturable into a CUDA graph (a swap's stage
// is allocated on the first eager call that needs it: capture before any
// is refused).
//
// Built and compiled in CI (NVRTC, sm_90); it has not run on a GPU yet.
// Known limit: an entry barrier that times out fails the communicator but
// does not withdraw the copies already enqueued behind it.
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
std::unique_ptr<CommKernel>
createCudaDmaKernel(const cuda::Driver &driver, cuda::CUdevice device,
                    cuda::CUcontext context,
                    std::shared_ptr<const DmaProgram> program,
                    const std::string &cacheDirectory, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDADMAKERNEL_H
