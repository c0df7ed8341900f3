//===- PacketMachine.h - one SDMA engine's packets on host memory -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the packet simulator (simulatePackets) and the ring engine model
// (RingSimulator.cpp) share: the simulated address space, relocation
// patching, and the execution of one decoded packet.
//
// The simulated address space: buffer b of rank r at kDataBase + (r x B + b)
// x 2^36 (so a buffer holds at most 64 GiB and ranks x buffers at most
// 2^27), rank r's flag slots at kFlagBase + r x 2^23 (8 bytes each: room
// for the loader's 2^20 slots), its timestamp slots at kTimestampBase + r x
// 2^25 (32 bytes each, 2^20 slots). Every packet address must fall inside
// one of these, whole: a bad relocation shows up as an address outside
// every region, named with its queue and packet.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_SIM_PACKETMACHINE_H
#define SDMA_RUNTIME_LIB_SIM_PACKETMACHINE_H

#include "sdma/runtime/Limits.h"
#include "sdma/runtime/Packets.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sdma::rt::packetsim {

constexpr uint64_t kDataBase = 0x0000100000000000ull;
constexpr int kDataShift = 36;
constexpr uint64_t kMaxBufferIndex = uint64_t(1) << 27; // ranks x buffers
constexpr uint64_t kFlagBase = 0xF000000000000000ull;
constexpr uint64_t kTimestampBase = 0xF800000000000000ull;
constexpr int kFlagShift = 23;      // 2^20 slots of 8 bytes per rank
constexpr int kTimestampShift = 25; // 2^20 slots of 32 bytes per rank
static_assert((uint64_t(kMaxPacketFlags) * 8) <= (uint64_t(1) << kFlagShift),
              "a rank's flag slots must fit its region");
static_assert((uint64_t(kMaxPacketTimestamps) * 32) <=
                  (uint64_t(1) << kTimestampShift),
              "a rank's timestamp slots must fit its region");
static_assert((uint64_t(kMaxRanks) << kFlagShift) <= kTimestampBase - kFlagBase,
              "every rank's flag region must fit below the timestamps");
static_assert(kDataBase + (kMaxBufferIndex << kDataShift) <= kFlagBase,
              "every buffer must fit below the flags");

std::string hex(uint64_t v);

/// The simulated address of chunk 0 of `buffer` of `rank`.
uint64_t dataAddress(const PacketPlan &plan, int rank, int buffer);
/// The simulated address of `rank`'s flag `slot` / timestamp slot `index`.
inline uint64_t flagAddress(int rank, int64_t slot) {
  return kFlagBase + (uint64_t(rank) << kFlagShift) + uint64_t(slot) * 8;
}
inline uint64_t timestampAddress(int rank, int64_t index) {
  return kTimestampBase + (uint64_t(rank) << kTimestampShift) +
         uint64_t(index) * 32;
}

/// Whether the plan's buffers at `chunk` fit the simulated address space
/// (and their sizes 64 bits).
bool checkLayout(const PacketPlan &plan, uint64_t chunk, std::string &error);
/// Checks the chunk size against the program's contract.
bool checkChunk(const PacketPlan &plan, uint64_t chunk, std::string &error);
/// Patches `queue`'s relocations for `chunk` into `image`
/// (checkLayout(plan, chunk) must hold: no address computed here wraps).
bool patchQueue(const PacketPlan &plan, const PacketQueue &queue,
                uint64_t chunk, std::vector<uint32_t> &image,
                std::string &error);

/// A packet's size in dwords from its header dword, by the runtime's decoder
/// (what an engine reading a ring needs before it reads the rest); 0 with
/// `error` for a header it does not know.
size_t packetDwords(uint32_t header, std::string &error);

/// POLL_REGMEM's compare function `func` (0-6) and its name.
bool compare(uint32_t func, uint32_t value, uint32_t reference);
const char *funcName(uint32_t func);

/// One engine's packet semantics over an address space a subclass defines
/// (translate): the packet simulator's and the ring model's simulated one
/// (Machine), or the communicator's CPU engines' real one
/// (host/CpuRingKernel.cpp). Flags are read and written with atomic
/// operations, so engines of several processes may share them.
class PacketExecutor {
public:
  virtual ~PacketExecutor() = default;
  /// The host bytes at [addr, addr + len), or null with `error`.
  virtual uint8_t *translate(uint64_t addr, uint64_t len,
                             std::string &error) = 0;
  /// How messages name `addr` ("flag@r1[2]" for a flag).
  virtual std::string name(uint64_t addr) const { return hex(addr); }

  enum class Step { Done, Blocked, Fault };
  /// Runs packet `p` (a TIMESTAMP writes `clock`): Blocked when a poll's
  /// compare fails, Fault with `what` on a bad address, alignment or
  /// overlap. Callers serialise executors that share memory they do not
  /// otherwise order (the simulators run one packet at a time).
  Step execute(const Packet &p, uint64_t clock, PacketSimStats &s,
               std::string &what);
  /// "polls flag@r1[2] ge 3 but it stays at 1" for a poll packet.
  std::string pollState(const Packet &p);
};

/// The simulated address space above, over `memory`.
class Machine : public PacketExecutor {
public:
  Machine(const PacketPlan &plan, HostMemory &memory)
      : plan(plan), memory(memory),
        timestamps(plan.ranks, std::vector<uint8_t>(plan.timestamps * 32, 0)) {}

  uint8_t *translate(uint64_t addr, uint64_t len, std::string &error) override;
  std::string name(uint64_t addr) const override;

  const PacketPlan &plan;
  HostMemory &memory;
  std::vector<std::vector<uint8_t>> timestamps;
};

} // namespace sdma::rt::packetsim

#endif // SDMA_RUNTIME_LIB_SIM_PACKETMACHINE_H
