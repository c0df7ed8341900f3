//===- HipDmaKernel.h - the communicator's DMA path on AMD ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The DMA path (DmaProgram.h, GpuDmaKernel.h) on an AMD GPU: GpuDmaOps on
// HIP. A copy is hipMemcpyAsync between the IPC-mapped buffers (between
// GPUs ROCm runs it on an SDMA engine, HSA_ENABLE_SDMA's default); the
// sync kernel (waits and notifies) hipRTC-compiled through the kernel
// cache. This is the host-submitted path; the GPU-initiated one
// (a kernel writing SDMA packets into engine rings, runtime/lib/amd/) is
// not behind this switch yet. No AMD GPU was available: compiled (the
// sync kernel for gfx90a in CI), never run.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPDMAKERNEL_H
#define SDMA_RUNTIME_LIB_HIP_HIPDMAKERNEL_H

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"
#include "comm/DmaSyncKernel.h"
#include "hip/HipApi.h"
#include "hip/HipKernel.h"

#include <memory>

namespace sdma::rt {

/// The DMA sync kernel (DmaSyncKernel.h) built for `arch` through the
/// kernel cache and loaded into `sync` on GPU `ordinal`; false with why.
bool loadHipDmaSync(const hip::HipApi &api, HipKernel &sync, int ordinal,
                    const std::string &arch, const std::string &cacheDirectory,
                    std::string &error);
/// One launch of it (one thread) on `stream`.
bool launchHipDmaSync(HipKernel &sync, hipStream_t stream,
                      const DmaSyncArgs &args, DmaSyncOp op, int flag,
                      uint64_t value, std::string &error);

/// The DMA path of `program` on HIP GPU `ordinal` of architecture `arch`
/// (the sync kernel compiled through the kernel cache in `cacheDirectory`);
/// null with why.
std::unique_ptr<CommKernel>
createHipDmaKernel(const hip::HipApi &api, int ordinal, const std::string &arch,
                   std::shared_ptr<const DmaProgram> program,
                   const std::string &cacheDirectory, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HIP_HIPDMAKERNEL_H
