//===- CpuRingKernel.h - kernel-submitted DMA on the CPU device -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's DMA path with kernel submission (CommOptions::dmaSubmit
// "kernel"; DmaProgram::packets) on the CPU device: what an AMD GPU does
// with GPU-initiated SDMA, over the processes' shared memory.
//   - The ring writer kernel (emitRingWriter, amd/RingDevice.h's submission
//     protocol: CAS reservation, back-pressure, in-order commit, doorbell)
//     is compiled by the host compiler once per program and run on host
//     threads, a block per engine queue of this rank, two writers each, into
//     one ring per queue that lives as long as the program (offsets grow
//     across calls, so rings wrap and fill as a GPU's do).
//   - One engine per queue, a host thread: it reads what lies between its
//     read pointer and the doorbell, decodes each packet from the bits and
//     executes it on real memory (PacketExecutor: copies between the ranks'
//     buffers, ATOMIC adds into peers' flags, polls of its own with the
//     communicator's timeout), every address checked against the call's
//     buffers and flags.
//   - The call protocol of DmaProgram.h (entry barrier, the rank's queues,
//     its completion count, exit barrier, flags zeroed).
// What it proves is the writer, the packets and the protocol across
// processes; the engines' speed is the host's memcpy.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_CPURINGKERNEL_H
#define SDMA_RUNTIME_LIB_HOST_CPURINGKERNEL_H

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"

#include <memory>

namespace sdma::rt {

/// Runs `program` (with packets) for its rank with rings of `ringBytes`
/// (a power of two, at least 64 and twice the largest packet) and the ring
/// writer built by `compiler` ("": $SDMA_HOST_CXX, else c++), cached in
/// `cacheDirectory`. Null with why (a writer that does not compile).
std::unique_ptr<CommKernel>
createCpuRingKernel(std::shared_ptr<const DmaProgram> program,
                    uint64_t ringBytes, const std::string &compiler,
                    const std::string &cacheDirectory, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_CPURINGKERNEL_H
