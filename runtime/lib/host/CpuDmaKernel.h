//===- CpuDmaKernel.h - the CPU device's DMA engines ------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's DMA path on the CPU device: each of this rank's plan
// queues is one host thread (an engine), copying between the ranks' shared
// memory segments, notifying peers' flags with atomic stores and polling
// its own with a bounded spin, with the call protocol of DmaProgram.h.
// What it proves is the protocol and the plan over real processes: the
// engines' speed is the host's memcpy.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_CPUDMAKERNEL_H
#define SDMA_RUNTIME_LIB_HOST_CPUDMAKERNEL_H

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"

#include <memory>

namespace sdma::rt {

/// Runs `program` for its rank; launch() returns when the call is over on
/// this rank (after the exit barrier), or failed (the record says why).
std::unique_ptr<CommKernel>
createCpuDmaKernel(std::shared_ptr<const DmaProgram> program);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_CPUDMAKERNEL_H
