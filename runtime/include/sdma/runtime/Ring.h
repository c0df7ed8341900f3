//===- Ring.h - GPU-initiated SDMA: ring writer kernels and their engines -*-
// C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// GPU-initiated SDMA (AMD): instead of the host submitting a packet plan, a
// kernel writes the plan's packets into each engine queue's ring and rings
// its doorbell, so no CPU sits between compute and communication.
//   - emitRingWriter lowers a packet plan (sdma-translate --sdma-to-packets)
//     to the source of that kernel: one block per queue, each queue's
//     packets as straight-line code with their constant dwords inline and
//     addresses and counts computed at run time from the symmetric buffer
//     tables and the chunk size; a queue's data packets between two
//     ordering packets (polls, signals) are spread over the block's
//     wavefronts, which reserve ring space concurrently (RingDevice.h has
//     the submission protocol);
//   - simulateRing runs that kernel on the CPU (host threads, as the
//     load/store emulator does) against a simulated engine per queue that
//     consumes the ring as hardware would: it fetches what lies between its
//     read pointer and the doorbell at the moment the doorbell rings,
//     checks every packet there was fully written, lies within the ring
//     (NOP-padded at the wrap) and is the packet the plan has next (a data
//     packet of the current batch, exactly once), executes it on the packet
//     simulator's machine, and advances the read pointer the writer waits on.
// On an AMD GPU the same kernel runs against hardware queues (the host side
// is HsaKmtQueue.h; never run here: no AMD GPU).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_RING_H
#define SDMA_RUNTIME_RING_H

#include "sdma/runtime/MemoryBudget.h"
#include "sdma/runtime/Packets.h"

#include <optional>
#include <string>

namespace sdma::rt {

/// Deliberate writer bugs, for tests: each must be caught by the engine
/// model (RingDevice.h says what each one does).
enum class RingFault { None, EarlyDoorbell, NoPad, Race };
std::optional<RingFault> parseRingFault(const std::string &name);

/// The submission batches of one queue (its packets as decodePackets gives
/// them): batch[i] for packet i, non-decreasing. Each ordering packet
/// (POLL_REGMEM, FENCE, ATOMIC, TIMESTAMP, TRAP, NOP) is a batch of its own;
/// a run of data packets (copies, broadcasts, swaps) is split into batches
/// of packets that touch disjoint bytes but for reads (by their chunk
/// relocations, so at any chunk size). The packets of a batch may enter
/// the ring in any order: an engine runs its queue in order, so a packet
/// that depends on an earlier one of the same queue stays behind it.
std::vector<size_t> ringBatches(const PacketQueue &queue,
                                const std::vector<Packet> &packets);

/// Whether a ring of `ringBytes` takes packets of up to `largestDwords`
/// dwords: a power of two of at least 64 bytes and twice the largest
/// packet (so a packet and its NOP padding always fit); false with why.
bool checkRingBytes(uint64_t ringBytes, size_t largestDwords,
                    std::string &error);

/// The ring writer kernel's source for `plan` (without a prelude: see
/// ringHipSource). Fails on a plan it cannot write (queues not grouped by
/// rank, an undecodable image).
std::optional<std::string> emitRingWriter(const PacketPlan &plan,
                                          RingFault fault, std::string &error);

/// The communicator's ring writer of `plan` (kernel-submitted DMA,
/// hip/HipRingKernel.h): the writer and its entry sdma_ring_write_table,
/// which takes the call's buffer and flag addresses in its argument.
std::optional<std::string> emitCommunicatorRingWriter(const PacketPlan &plan,
                                                      std::string &error);

/// `writer` with the prelude for AMD GPUs: hipRTC's (clang = false) or
/// clang -x hip -nogpuinc's (clang = true), ready to compile for gfx9.
std::string ringHipSource(const std::string &writer, bool clang);

/// Compiles `writer` with hipRTC for `arch` (e.g. gfx90a) into an AMD code
/// object; false with the compiler's log or why hipRTC cannot be loaded.
bool compileRingWriterHipRtc(const std::string &writer, const std::string &arch,
                             std::string &code, std::string &error);

struct RingSimOptions {
  /// Each queue's ring, in bytes: a power of two, at least twice the
  /// largest packet (so a packet and its padding always fit); 0: the
  /// smallest such ring.
  uint64_t ringBytes = 4096;
  /// Where the rings start: this many bytes (a multiple of 4) before their
  /// end (0: at the start), as a ring left by earlier work would.
  uint64_t startBeforeEnd = 0;
  /// Each packet runs no sooner than this after the doorbell that made it
  /// visible (an engine slower than its writers: they find the ring full).
  uint64_t engineLatencyNs = 0;
  /// Engines run nothing until a writer of their queue has found the ring
  /// full (or all writers are done): deterministic back-pressure wherever
  /// a queue outgrows its ring, whatever the thread scheduling.
  bool lagUntilFull = false;
  /// Writers (wavefronts) per queue.
  int writers = 4;
  RingFault fault = RingFault::None;
  /// Any one wait (writer: ring space, commit; engine: a poll, the next
  /// packet) longer than this is an error.
  uint64_t timeoutNs = 10'000'000'000ull;
  std::string compiler;       // empty: $SDMA_HOST_CXX, else c++
  std::string cacheDirectory; // compiled writers; empty: none
  MemoryBudget budget;
};

struct RingSimStats {
  uint64_t ringBytes = 0;         // the ring size used
  uint64_t longestQueueBytes = 0; // the plan's longest queue
  uint64_t packets = 0;           // packets executed (NOPs excluded)
  uint64_t nops = 0;              // NOP packets (wrap padding)
  uint64_t wraps = 0;             // times a queue's write offset wrapped
  uint64_t doorbells = 0;         // doorbell writes
  uint64_t fullWaits = 0;         // submissions that found their ring full
  uint64_t bytesMoved = 0;
};

/// Writes `plan`'s packets with its ring writer kernel on the CPU into
/// simulated rings and runs them on simulated engines over `memory` (flags
/// cleared, then the launch flags set, as simulatePackets does). Fails
/// with a message naming the queue, the ring offset and what went wrong:
/// a doorbell ahead of the packet's dwords, a packet across the ring's
/// end, a packet out of order, missing or duplicated, a writer or poll that
/// timed out, or a completion flag short of `done`.
bool simulateRing(const PacketPlan &plan, HostMemory &memory,
                  const RingSimOptions &options, std::string &error,
                  RingSimStats *stats = nullptr);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_RING_H
