//===- PacketSimulator.cpp - run patched SDMA packet queues on host memory ===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The engines of a plan interleaved packet by packet over the simulated
// address space of PacketMachine.h. Sizes that do not fit are refused before
// anything runs; so is a program whose decoded packets, timestamp slots and
// memory would exceed the memory budget.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Packets.h"
#include "sim/PacketMachine.h"

#include <algorithm>
#include <cstring>
#include <random>

using namespace sdma::rt;

namespace {
using namespace sdma::rt::packetsim;

struct Engine {
  const PacketQueue *queue = nullptr;
  std::vector<uint32_t> image; // patched
  std::vector<Packet> packets;
  size_t next = 0;
  bool finished() const { return next == packets.size(); }
};
} // namespace

bool sdma::rt::simulatePackets(const PacketPlan &plan, HostMemory &memory,
                               const PacketSimOptions &options,
                               std::string &error, PacketSimStats *stats) {
  PacketSimStats local;
  PacketSimStats &s = stats ? *stats : local;
  s = PacketSimStats();
  const uint64_t chunk = memory.chunkBytes();
  if (!checkChunk(plan, chunk, error) || !checkLayout(plan, chunk, error) ||
      !memory.matches(plan.layout(), error))
    return false;
  // What the run allocates besides `memory`: each queue's patched image and
  // decoded packets (at most one per dword), every rank's timestamp slots.
  CheckedSize need;
  need.add(memory.totalBytes());
  for (const PacketQueue &queue : plan.queues)
    need.addProduct({queue.image.size(), sizeof(uint32_t) + sizeof(Packet)});
  need.addProduct({uint64_t(plan.ranks), uint64_t(plan.timestamps), 32});
  if (!options.budget.admit(need.value(),
                            "the packet simulation of " +
                                plan.program.substr(0, 64) +
                                " (host memory, decoded packets, timestamp "
                                "slots)",
                            error))
    return false;
  Machine machine(plan, memory);

  // Patch and decode every queue.
  std::vector<Engine> engines(plan.queues.size());
  for (size_t q = 0; q < plan.queues.size(); ++q) {
    const PacketQueue &queue = plan.queues[q];
    Engine &e = engines[q];
    e.queue = &queue;
    std::string where = "queue " + std::to_string(queue.rank) + ":" +
                        std::to_string(queue.engine) + ": ";
    if (!patchQueue(plan, queue, chunk, e.image, error)) {
      error = where + error;
      return false;
    }
    if (!decodePackets(e.image, e.packets, error)) {
      error = where + error;
      return false;
    }
  }

  // A launch starts from cleared flags; then the host triggers every rank
  // (prelaunched queues poll this flag).
  for (int r = 0; r < plan.ranks; ++r) {
    std::fill(memory.flags(r).begin(), memory.flags(r).end(), 0);
    memory.flags(r)[kLaunchFlag] = 1;
  }

  uint64_t clock = 0;
  auto fault = [&](const Engine &e, const Packet &p, const std::string &what) {
    char at[32];
    std::snprintf(at, sizeof at, "0x%04zx", p.dword * 4);
    error = "rank " + std::to_string(e.queue->rank) + " engine " +
            std::to_string(e.queue->engine) + ", packet at byte " + at + ": " +
            what;
    return false;
  };
  // Runs the next packet of `e`; false with `blocked` when a poll fails.
  auto step = [&](Engine &e, bool &blocked) -> bool {
    const Packet &p = e.packets[e.next];
    std::string what;
    Machine::Step result = machine.execute(p, ++clock, s, what);
    blocked = result == Machine::Step::Blocked;
    if (result == Machine::Step::Fault)
      return fault(e, p, what);
    if (result == Machine::Step::Done)
      ++e.next;
    return true;
  };

  std::mt19937_64 random(options.seed);
  std::vector<size_t> order(engines.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  for (;;) {
    bool progressed = false, unfinished = false;
    if (options.seed)
      std::shuffle(order.begin(), order.end(), random);
    for (size_t q : order) {
      Engine &e = engines[q];
      int burst = options.seed ? 1 + static_cast<int>(random() % 4) : 1;
      for (int k = 0; k < burst && !e.finished(); ++k) {
        bool blocked;
        if (!step(e, blocked))
          return false;
        if (blocked)
          break;
        progressed = true;
      }
      unfinished |= !e.finished();
    }
    if (!unfinished)
      break;
    if (!progressed) {
      // Nothing can run: every unfinished engine waits on a poll that no
      // other engine will satisfy.
      error = "a wait never completes:";
      for (Engine &e : engines) {
        if (e.finished())
          continue;
        const Packet &p = e.packets[e.next];
        char at[32];
        std::snprintf(at, sizeof at, "0x%04zx", p.dword * 4);
        error += " rank " + std::to_string(e.queue->rank) + " engine " +
                 std::to_string(e.queue->engine) + " (packet at byte " + at +
                 ") " + machine.pollState(p) + ";";
      }
      error.pop_back();
      return false;
    }
  }

  for (int r = 0; r < plan.ranks; ++r) {
    uint64_t got = memory.flags(r)[kDoneFlag];
    if (got != uint64_t(plan.done[r])) {
      error = "rank " + std::to_string(r) + ": completion flag ended at " +
              std::to_string(got) + ", expected " +
              std::to_string(plan.done[r]);
      return false;
    }
  }
  s.timestamps.assign(plan.ranks, {});
  for (int r = 0; r < plan.ranks; ++r)
    for (int i = 0; i < plan.timestamps; ++i) {
      uint64_t v;
      std::memcpy(&v, machine.timestamps[r].data() + 32 * i, 8);
      s.timestamps[r].push_back(v);
    }
  return true;
}

std::optional<Plan> sdma::rt::liftPackets(const PacketPlan &plan,
                                          size_t chunkBytes,
                                          std::string &error) {
  if (!checkChunk(plan, chunkBytes, error) ||
      !checkLayout(plan, chunkBytes, error))
    return std::nullopt;
  Plan lifted = plan.layout();
  lifted.engines = 0;
  const uint64_t B = plan.buffers.size();
  for (const PacketQueue &queue : plan.queues) {
    std::string where = "queue " + std::to_string(queue.rank) + ":" +
                        std::to_string(queue.engine) + ": ";
    std::vector<uint32_t> image;
    std::vector<Packet> packets;
    if (!patchQueue(plan, queue, chunkBytes, image, error) ||
        !decodePackets(image, packets, error)) {
      error = where + error;
      return std::nullopt;
    }
    Stream stream;
    stream.rank = queue.rank;
    stream.engine = queue.engine;
    lifted.engines = std::max(lifted.engines, queue.engine + 1);
    // A data address as a slice of `count` chunks, if it is one.
    auto slice = [&](uint64_t addr, uint64_t bytes, Slice &out) -> bool {
      if (addr < kDataBase || addr >= kFlagBase)
        return false;
      uint64_t index = (addr - kDataBase) >> kDataShift;
      uint64_t off = (addr - kDataBase) & ((1ull << kDataShift) - 1);
      if (index / B >= uint64_t(plan.ranks) || off % chunkBytes ||
          bytes % chunkBytes)
        return false;
      out.rank = static_cast<int>(index / B);
      out.buffer = static_cast<int>(index % B);
      out.offset = off / chunkBytes;
      out.count = bytes / chunkBytes;
      return out.offset + out.count <= plan.buffers[out.buffer].chunks;
    };
    auto flag = [&](uint64_t addr, int &rank, int &slot) -> bool {
      if (addr < kFlagBase || addr >= kTimestampBase)
        return false;
      uint64_t wide = (addr - kFlagBase) >> kFlagShift;
      uint64_t off = (addr - kFlagBase) & ((1ull << kFlagShift) - 1);
      if (wide >= uint64_t(plan.ranks))
        return false;
      rank = static_cast<int>(wide);
      slot = static_cast<int>(off / 8);
      return rank < plan.ranks && off % 8 == 0 && slot < plan.flags;
    };
    for (const Packet &p : packets) {
      char at[32];
      std::snprintf(at, sizeof at, "0x%04zx", p.dword * 4);
      auto fail = [&](const char *what) {
        error = where + "packet at byte " + at + ": " + what;
        return std::nullopt;
      };
      Command c;
      switch (p.kind) {
      case Packet::Kind::Nop:
      case Packet::Kind::Timestamp:
      case Packet::Kind::Trap:
        continue;
      case Packet::Kind::CopyLinear:
      case Packet::Kind::CopyBroadcast:
      case Packet::Kind::CopySwap:
        c.kind = p.kind == Packet::Kind::CopyLinear      ? Command::Kind::Copy
                 : p.kind == Packet::Kind::CopyBroadcast ? Command::Kind::Bcast
                                                         : Command::Kind::Swap;
        for (int i = 0; i < p.numAddrs; ++i)
          if (!slice(p.addr[i], p.bytes, c.slices[i]))
            return fail("an address is not a whole number of chunks of one "
                        "buffer");
        // A copy in the queue of its destination's rank, not its source's,
        // is a pull (Command::issuer).
        c.pull = c.kind == Command::Kind::Copy &&
                 c.slices[0].rank != queue.rank &&
                 c.slices[1].rank == queue.rank;
        break;
      case Packet::Kind::Fence:
      case Packet::Kind::AtomicAdd64:
        c.kind = Command::Kind::Notify;
        if (!flag(p.addr[0], c.target, c.flag))
          return fail("a completion that writes no flag slot");
        break;
      case Packet::Kind::PollRegMem:
        c.kind = Command::Kind::Poll;
        if (p.func != 5 || p.mask != 0xffffffffu)
          return fail("a poll other than >= on the whole flag");
        int rank;
        if (!flag(p.addr[0], rank, c.flag) || rank != queue.rank)
          return fail("a poll on another rank's flag");
        c.value = static_cast<int64_t>(p.value);
        lifted.prelaunch |= c.flag == kLaunchFlag;
        break;
      }
      stream.commands.push_back(c);
    }
    lifted.streams.push_back(std::move(stream));
  }
  return lifted;
}
