//===- Packets.h - SDMA packet plans: load, decode, patch, simulate -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The AMD SDMA target's artifact (sdma-translate --sdma-to-packets): per
// (rank, engine) queue a packet image (little-endian dwords) and its
// relocations. Here, with no MLIR and none of the compiler's encoder:
//   - PacketPlan::parse/load validates the JSON (errors name a JSON path);
//   - decodePackets decodes an image from the packet layouts of
//     ../shared/SDMA-PACKETS.md, written independently of the encoder, and
//     packetListing prints the same listing format as the compiler's
//     --sdma-to-packet-listing, from the bits;
//   - simulatePackets places every rank's buffers, flags and timestamp slots
//     in one 64-bit address space, patches the relocations for a chunk size,
//     and runs the queues: each engine in order, engines interleaved packet
//     by packet (round robin or a seeded random order), POLL_REGMEM blocking
//     on memory. A poll that can never be satisfied is reported with its
//     queue, offset, address, compare and the value it saw.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_PACKETS_H
#define SDMA_RUNTIME_PACKETS_H

#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sdma::rt {

// kPacketPlanVersion is in Version.h.

/// The most flag and timestamp slots per rank a packet plan may have: the
/// loader's limits, which the packet simulator's address space holds.
constexpr int64_t kMaxPacketFlags = int64_t(1) << 20;
constexpr int64_t kMaxPacketTimestamps = int64_t(1) << 20;

struct Relocation {
  enum class Kind { Chunk, Flag, Timestamp, Count };
  Kind kind = Kind::Chunk;
  size_t dword = 0; // where the patched value goes (addresses: lo, hi)
  int rank = 0;
  int buffer = 0;     // Chunk
  int64_t chunk = 0;  // Chunk
  int64_t slot = 0;   // Flag, Timestamp
  int64_t chunks = 0; // Count
};

struct PacketQueue {
  int rank = 0;
  int engine = 0;
  std::vector<uint32_t> image;
  std::vector<Relocation> relocations;
};

/// The SDMA target profile a packet plan was built for ($.target; the
/// compiler's table is dialect/sdmapkt/IR/Targets.h): the limits its
/// packets respect and the simulator holds them to.
struct PacketTarget {
  std::string name;
  int countBits = 0;        // COPY_LINEAR's count field: 22 or 30 bits
  int64_t maxCopyBytes = 0; // the most bytes one copy packet moves
  bool swap = false;        // COPY_LINEAR_SWAP accepted
  int64_t maxSwapBytes = 0; // the most bytes one swap moves (0 without)
  bool nopCount = false;    // NOP with a count of extra dwords accepted
};

struct PacketPlan {
  std::string program;
  PacketTarget target;
  int ranks = 0;
  std::vector<Buffer> buffers;
  std::optional<Collective> collective;
  int flags = 0;
  int timestamps = 0;
  int64_t chunkAlign = 1;
  int64_t maxChunkBytes = 0;
  std::vector<int64_t> done;
  std::vector<PacketQueue> queues;

  static std::optional<PacketPlan> parse(std::string_view text,
                                         std::string &error);
  static std::optional<PacketPlan> load(const std::string &path,
                                        std::string &error);
  /// A plan with the same ranks, buffers and collective (no queues), for
  /// HostMemory, fillInputs and checkOutputs.
  Plan layout() const;
};

/// One decoded packet.
struct Packet {
  enum class Kind {
    Nop,
    CopyLinear,
    CopyBroadcast,
    CopySwap,
    Fence,
    AtomicAdd64,
    PollRegMem,
    Timestamp,
    Trap
  };
  Kind kind = Kind::Nop;
  size_t dword = 0; // offset in the image, in dwords
  size_t size = 0;  // in dwords
  /// Byte-address fields' dword offsets within the packet (lo dword), and
  /// their values: COPY src, dst (, dst1) / SWAP a, b / others addr.
  size_t addrAt[3] = {0, 0, 0};
  uint64_t addr[3] = {0, 0, 0};
  int numAddrs = 0;
  size_t countAt = 0; // copies: the count dword
  uint64_t bytes = 0; // copies: count field + 1
  uint64_t value = 0; // FENCE value, ATOMIC source data, POLL reference
  uint32_t func = 0;  // POLL compare function (0-6)
  uint32_t mask = 0;  // POLL
  uint32_t interval = 0, retry = 0; // POLL
  uint32_t extra = 0;               // NOP
  uint32_t context = 0;             // TRAP
};

/// Decodes a queue image. Fails naming the dword offset on an unknown
/// opcode, an unsupported sub-op or operation, or a truncated packet.
bool decodePackets(const std::vector<uint32_t> &image,
                   std::vector<Packet> &packets, std::string &error);

/// The listing of every queue, as sdma-translate --sdma-to-packet-listing
/// prints it: relocated fields named by their relocation, raw ones by value.
bool packetListing(const PacketPlan &plan, std::string &listing,
                   std::string &error);

struct PacketSimOptions {
  /// 0: round robin, one packet per engine per turn; otherwise a seeded
  /// random interleaving (engines advance by 1-4 packets in random order).
  uint64_t seed = 0;
  /// `memory` plus what the run allocates (decoded packets, timestamp
  /// slots) must fit this budget, or the run is refused before it starts.
  MemoryBudget budget;
};

struct PacketSimStats {
  uint64_t packets = 0, polls = 0, pollRetries = 0, traps = 0;
  uint64_t bytesMoved = 0;
  /// Per rank: timestamp slot values (the simulator's step counter).
  std::vector<std::vector<uint64_t>> timestamps;
};

/// Patches `plan` for `memory.chunkBytes()` and runs it on `memory` (whose
/// flags it uses as the ranks' flag slots: cleared, then the launch flags
/// set to 1, as the host does to trigger prelaunched queues). Fails with a
/// message naming the queue and packet on a bad address, a chunk size the
/// program cannot take, a poll that never completes, or completion flags
/// that end short of `done`. Every flag slot the loader allows (up to
/// kMaxPacketFlags per rank) has its own address; a copy between partially
/// overlapping ranges is a fault (a copy onto itself, a no-op).
bool simulatePackets(const PacketPlan &plan, HostMemory &memory,
                     const PacketSimOptions &options, std::string &error,
                     PacketSimStats *stats = nullptr);

/// The queues of `plan`, patched for `chunkBytes`, decoded and read back
/// as plan commands (copies, broadcasts and swaps as slices; FENCE and
/// ATOMIC as notifies; POLL_REGMEM >= as polls; NOP, TIMESTAMP and TRAP
/// dropped), so that the DMA timing model (DmaTimingModel.h) can time the
/// packet program itself, splits included. Fails on packets that have no
/// such reading.
std::optional<Plan> liftPackets(const PacketPlan &plan, size_t chunkBytes,
                                std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_PACKETS_H
