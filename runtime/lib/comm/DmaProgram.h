//===- DmaProgram.h - a schedule's DMA plan in a communicator --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The DMA path of a communicator: the schedule's DMA plan (its engine
// queues: copies, broadcasts, swaps, notifies and polls) run by this
// process for its own rank, over the same buffers the load/store kernel
// would use. A launch takes the load/store kernel's table (Launcher.h), so
// the two paths share everything a call sets up, and its words mean the
// same: buf[R*B] every rank's buffers, flags[R] the DMA flags of every
// rank, error the record, timeoutNs, epochs the DMA path's run counter,
// arrive[R] its job-barrier words, callTag/tags the call check.
//
// The call protocol (the load/store kernel's job barriers, on words of the
// DMA path's own -- flags, run counter, arrival words -- so that the
// kernel's run-counted flags stay in step; a program's calls may alternate
// between the paths, each call bracketed by its path's two barriers, which
// is what makes the next call's writes safe whatever path it takes;
// epoch e = epochs[0]):
//   1. entry: arrive[q][0 * R + r] += 1 for every rank q, then wait until
//      arrive[r][0 * R + q] >= e + 1 for every q (every rank's buffers may
//      be written: the previous call is over everywhere);
//   2. this rank's queues run side by side, each in order; a notify of a
//      flag another queue polls writes its ordinal k (every flag has one
//      writer: DmaQueueSchedule.h) and a poll waits until the flag >= its
//      value; each wait is bounded by the timeout and stops at an abort;
//   3. exit: once every queue of the rank is done, arrive[q][1 * R + r] +=
//      1 for every q, then wait for every rank's;
//   4. the rank zeroes its own DMA flags and sets epochs[0] = e + 1.
// Step 4 is safe: every notify into rank r's flags in this call was issued
// by a queue that finished before its rank arrived at the exit barrier, so
// before r passed it; the next call's notifies come after r arrives at the
// next entry barrier, after its reset. So the values a plan polls for are
// its own constants in every call (no per-call arithmetic: what a captured
// CUDA graph needs).
//
// A wait that times out writes the error record as the kernel does
// (status 1, rank, slot, value, seen): slot -2 / -3 for the entry / exit
// barrier (the rank awaited as the value), kDmaFlagSlot(f) for DMA flag f.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_DMAPROGRAM_H
#define SDMA_RUNTIME_LIB_COMM_DMAPROGRAM_H

#include "comm/CommDevice.h"
#include "exec/DmaQueueSchedule.h"
#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Plan.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sdma::rt {

/// The error record's slot for a timed-out poll of DMA flag `flag`.
constexpr int64_t kDmaFlagSlotBase = -16;
inline int64_t dmaFlagSlot(int flag) { return kDmaFlagSlotBase - flag; }
/// The error record's slot for a rank whose DMA engines stopped before
/// they ran (a host thread that could not start).
constexpr int64_t kDmaStoppedSlot = -15;
/// Kernel submission's slots: the ring writer gave up (value: the packet
/// plan's queue; seen: 1 waiting for ring space, 2 for the commit of
/// earlier packets); an engine stopped at a packet it cannot run, or found
/// none where the writer should have put one (value: the queue; seen: its
/// ring offset).
constexpr int64_t kDmaRingWriterSlot = -14;
constexpr int64_t kDmaPacketFaultSlot = -13;

/// The largest power of two, at most 256, that every address in `buffers`
/// is a multiple of (null counts as aligned): what
/// DmaProgram::packetRefusal's `baseAlign` takes.
template <typename Buffers> unsigned commonAlignment(const Buffers &buffers) {
  unsigned align = 256;
  for (const auto *b : buffers)
    while (align > 1 && reinterpret_cast<uintptr_t>(b) % align)
      align /= 2;
  return align;
}

struct DmaProgram {
  Plan plan;
  /// The DMA variant the plan was compiled with (pcpy, b2b, ...).
  std::string variant;
  /// The rank this process runs, and its queues (indices into
  /// plan.streams), in the plan's order.
  int rank = 0;
  std::vector<size_t> queues;
  /// How this rank's queues are enqueued (DmaQueueSchedule.h), with the
  /// other ranks' queues as other processes.
  DmaSchedule schedule;
  /// With packets: (rank, flag slot) -> the ranks whose packets notify it.
  std::map<std::pair<int, int64_t>, std::vector<int>> packetNotifiers;

  /// The program of `plan` (compiled as `variant`) for `rank`: refused,
  /// naming why, where it is not the same collective over the same buffers
  /// as `ldst` (names, sizes, count tables), where this rank's queues touch
  /// a buffer of a rank that the load/store program's rank does not (the
  /// launch table has only those), or where its queues cannot be
  /// scheduled. `valueWaits`: every dependency of the rank's own queues a
  /// flag wait too (devices without events).
  static std::optional<DmaProgram> create(Plan plan, std::string variant,
                                          const LdstProgram &ldst, int rank,
                                          bool valueWaits, std::string &error);

  /// Kernel submission (CommOptions::dmaSubmit "kernel"): the same
  /// compile's SDMA packets, which a ring writer kernel puts into the
  /// rank's engine rings (host/CpuRingKernel.h, hip/HipRingKernel.h); null
  /// where the host submits the plan's commands. The protocol is the one
  /// above on the packet plan's flag slots: slot 1 (kDoneFlag) counts the
  /// rank's finished queues up to packets->done[rank], the others are the
  /// packets' notifies (ATOMIC adds) and polls; all are zeroed after the
  /// exit barrier, as the plan's flags are.
  std::shared_ptr<const PacketPlan> packets;
  /// This rank's queues in `packets` (contiguous: the plan groups them by
  /// rank), and every queue's decoded packets.
  std::vector<size_t> packetQueues;
  std::vector<std::vector<Packet>> decodedPackets;

  /// Attaches `plan`, the packets of this program's compile: refused,
  /// naming why, where they are not this plan's (ranks, buffers), write
  /// timestamps, wait for a launch flag (prelaunched), or do not decode.
  bool attachPackets(PacketPlan plan, std::string &error);
  /// What every buffer's address must be a multiple of for the packets:
  /// 64 with swaps, 32 with broadcasts (each destination pair within one
  /// 32-byte window: their chunk alignment assumes aligned bases), else 1.
  unsigned packetBaseAlign = 1;
  /// Why a call of `chunkBytes` bytes per chunk over buffers aligned to
  /// `baseAlign` bytes cannot take the packets (a chunk not a multiple of
  /// their chunk alignment or larger than they were split for, buffers
  /// short of packetBaseAlign), or "" (also without packets).
  std::string packetRefusal(size_t chunkBytes, unsigned baseAlign) const;
  /// ", kernel-submitted gfx942 packets" with packets, else "".
  std::string submission() const;
  /// The DMA flag slots each rank needs: the packets' where attached.
  int flagSlots() const { return packets ? packets->flags : plan.flags; }

  /// The ranks whose queues notify DMA flag `flag` of `rank` (a packet
  /// flag slot where packets are attached).
  std::vector<int> notifiers(int rank, int flag) const;
  /// `launch`'s table for this program (LaunchTable::decode); false (an
  /// internal error) where its size is wrong or it is not for this rank.
  bool decode(const KernelLaunch &launch, struct LaunchTable &table,
              std::string &error) const;
};

/// The load/store kernel's table (Launcher::table) decoded.
struct LaunchTable {
  std::vector<char *> buffers;             // [rank * B + buffer]
  std::vector<unsigned long long *> flags; // [rank]
  std::vector<unsigned int *> sync;        // [rank]
  unsigned long long *error = nullptr;
  uint64_t timeoutNs = 0;
  unsigned long long *epochs = nullptr;
  std::vector<unsigned long long *> arrive; // [rank]
  unsigned long long *errorMirror = nullptr;
  uint64_t rowBytes = 0;
  long long *counts[4] = {nullptr, nullptr, nullptr, nullptr};
  uint64_t callTag = 0;
  std::vector<unsigned long long *> tags; // [rank]
  /// A low-latency program's words (LdstProgram::lowLatencyPairChunks):
  /// every rank's inbox (null: not a low-latency call), the rank's counter,
  /// the bytes of one sender's region. Empty for other programs.
  std::vector<char *> ll; // [rank]
  unsigned long long *llSeq = nullptr;
  uint64_t llPairBytes = 0;

  /// The words of a table for `ranks` ranks and `buffers` buffers, with or
  /// without the low-latency words; false (an internal error) if it has
  /// another size.
  static bool decode(const std::vector<uint64_t> &words, int ranks,
                     size_t buffers, LaunchTable &table, std::string &error);
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_DMAPROGRAM_H
