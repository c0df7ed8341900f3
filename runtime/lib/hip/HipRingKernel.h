//===- HipRingKernel.h - kernel-submitted DMA on AMD GPUs -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's DMA path with kernel submission (CommOptions::dmaSubmit
// "kernel", DmaProgram::packets) on an AMD GPU: GPU-initiated SDMA. One
// user-mode SDMA queue per engine queue of the rank (libhsakmt,
// amd/HsaKmtQueue.h; the KFD node of HIP device `ordinal` is the ordinal-th
// GPU node KFD lists); on the caller's stream, per call:
//   1. the DMA sync kernel's entry barrier (DmaSyncKernel.h);
//   2. the ring writer (amd/RingDevice.h, kRingTableEntry), a block per
//      queue, two wavefronts each: it writes the rank's packets into the
//      rings and rings the doorbells, unless the call has already failed;
//   3. the sync kernel's bounded poll of the rank's completion flag
//      (kDoneFlag) up to the packets' done count, the last packet of every
//      queue adding to it: the engines have run everything;
//   4. the exit barrier, which zeroes the rank's packet flags and advances
//      the run counter.
// Nothing is copied or synchronised by the host, so the sequence can be
// captured in a graph. Known limits: an SDMA engine polls a flag without a
// bound, so a peer that never notifies leaves the queue waiting after the
// call has failed (the communicator has then failed too); the engine per
// queue is KFD's choice for the rank's node, not yet the peer's
// recommended xGMI engine.
//
// NEVER RAN ON AN AMD GPU: compiled, and the ring writer with this entry
// compiled by hipRTC (test/ring/), the queues' setup tested against a
// scripted libhsakmt only.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPRINGKERNEL_H
#define SDMA_RUNTIME_LIB_HIP_HIPRINGKERNEL_H

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"
#include "hip/HipApi.h"

#include <memory>

namespace sdma::rt {

/// The SDMA target profile packets for a GPU of architecture `arch` are
/// built for: gfx942 (MI300), gfx950 (MI355), gfx9 for other gfx9 parts;
/// "" with why for one without SDMA packets sdma knows.
std::string sdmaPacketTargetOf(const std::string &arch, std::string &why);

/// The kernel-submitted DMA path of `program` on HIP GPU `ordinal` of
/// architecture `arch`; null with why.
std::unique_ptr<CommKernel>
createHipRingKernel(const hip::HipApi &api, int ordinal,
                    const std::string &arch,
                    std::shared_ptr<const DmaProgram> program,
                    const std::string &cacheDirectory, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HIP_HIPRINGKERNEL_H
