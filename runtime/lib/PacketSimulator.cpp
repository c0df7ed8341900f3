//===- PacketSimulator.cpp - run patched SDMA packet queues on host memory ===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The simulated address space: buffer b of rank r at kDataBase + (r x B + b)
// x 2^36 (so a buffer holds at most 64 GiB and ranks x buffers at most
// 2^27), rank r's flag slots at kFlagBase + r x 2^23 (8 bytes each: room
// for the loader's 2^20 slots), its timestamp slots at kTimestampBase + r x
// 2^25 (32 bytes each, 2^20 slots). Every packet address must fall inside
// one of these, whole: a bad relocation shows up as an address outside
// every region, named with its queue and packet. Sizes that do not fit are
// refused before anything runs; so is a program whose decoded packets,
// timestamp slots and memory would exceed the memory budget.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Packets.h"

#include <algorithm>
#include <cstring>
#include <random>

using namespace sdma::rt;

namespace {
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
static_assert((uint64_t(65536) << kFlagShift) <= kTimestampBase - kFlagBase,
              "every rank's flag region must fit below the timestamps");
static_assert(kDataBase + (kMaxBufferIndex << kDataShift) <= kFlagBase,
              "every buffer must fit below the flags");

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(v));
  return text;
}

uint64_t dataAddress(const PacketPlan &plan, int rank, int buffer) {
  return kDataBase +
         (uint64_t(rank * plan.buffers.size() + buffer) << kDataShift);
}

/// Whether the plan's buffers at `chunk` fit the simulated address space
/// (and their sizes 64 bits).
bool checkLayout(const PacketPlan &plan, uint64_t chunk, std::string &error) {
  std::optional<uint64_t> slots =
      checkedMul(uint64_t(plan.ranks), plan.buffers.size());
  if (!slots || *slots > kMaxBufferIndex) {
    error = std::to_string(plan.ranks) + " ranks x " +
            std::to_string(plan.buffers.size()) +
            " buffers exceed the packet simulator's " +
            std::to_string(kMaxBufferIndex) + " buffer regions";
    return false;
  }
  for (const Buffer &buffer : plan.buffers) {
    std::optional<uint64_t> bytes = checkedMul(buffer.chunks, chunk);
    if (!bytes || *bytes > (uint64_t(1) << kDataShift)) {
      error = "buffer " + buffer.name.substr(0, 64) + " (" +
              std::to_string(buffer.chunks) + " chunks of " +
              std::to_string(chunk) +
              " bytes) is larger than the packet simulator's 64 GiB per "
              "buffer";
      return false;
    }
  }
  return true;
}

/// Patches `queue`'s relocations for `chunk` into `image`
/// (checkLayout(plan, chunk) must hold: no address computed here wraps).
bool patchQueue(const PacketPlan &plan, const PacketQueue &queue,
                uint64_t chunk, std::vector<uint32_t> &image,
                std::string &error) {
  image = queue.image;
  for (const Relocation &r : queue.relocations) {
    uint64_t value = 0;
    switch (r.kind) {
    case Relocation::Kind::Chunk:
      value = dataAddress(plan, r.rank, r.buffer) + r.chunk * chunk;
      break;
    case Relocation::Kind::Flag:
      value = kFlagBase + (uint64_t(r.rank) << kFlagShift) + r.slot * 8;
      break;
    case Relocation::Kind::Timestamp:
      value =
          kTimestampBase + (uint64_t(r.rank) << kTimestampShift) + r.slot * 32;
      break;
    case Relocation::Kind::Count: {
      std::optional<uint64_t> product = checkedMul(r.chunks, chunk);
      uint64_t bytes = product.value_or(0);
      // The plan's target bounds every copy packet (swaps: at most that).
      if (bytes == 0 || bytes > uint64_t(plan.target.maxCopyBytes)) {
        error = "relocation at dword " + std::to_string(r.dword) + ": " +
                std::to_string(r.chunks) + " chunks of " +
                std::to_string(chunk) + " bytes exceed the " +
                std::to_string(plan.target.maxCopyBytes) +
                " bytes one packet moves on target " + plan.target.name;
        return false;
      }
      image[r.dword] =
          (image[r.dword] & ~0x3fffffffu) | static_cast<uint32_t>(bytes - 1);
      continue;
    }
    }
    image[r.dword] = static_cast<uint32_t>(value);
    image[r.dword + 1] = static_cast<uint32_t>(value >> 32);
  }
  return true;
}

/// Checks the chunk size against the program's contract.
bool checkChunk(const PacketPlan &plan, uint64_t chunk, std::string &error) {
  if (chunk % plan.chunkAlign) {
    error = "chunk size " + std::to_string(chunk) + " is not a multiple of " +
            std::to_string(plan.chunkAlign) +
            ", which this program's packets need (broadcast destinations at "
            "one offset within 32 bytes, swap operands 64-byte aligned)";
    return false;
  }
  if (chunk > uint64_t(plan.maxChunkBytes)) {
    error = "chunk size " + std::to_string(chunk) + " exceeds the " +
            std::to_string(plan.maxChunkBytes) +
            " bytes the program was split for (max-chunk-bytes)";
    return false;
  }
  return true;
}

class Machine {
public:
  Machine(const PacketPlan &plan, HostMemory &memory)
      : plan(plan), memory(memory),
        timestamps(plan.ranks, std::vector<uint8_t>(plan.timestamps * 32, 0)) {}

  /// The host bytes at [addr, addr + len), or null with `error`.
  uint8_t *translate(uint64_t addr, uint64_t len, std::string &error) {
    auto outside = [&](const std::string &why) {
      error = "address " + hex(addr) + " (+" + std::to_string(len) +
              " bytes) " + why;
      return nullptr;
    };
    if (addr >= kTimestampBase) {
      uint64_t rank = (addr - kTimestampBase) >> kTimestampShift;
      uint64_t off = (addr - kTimestampBase) & ((1ull << kTimestampShift) - 1);
      if (rank >= uint64_t(plan.ranks) || len > timestamps[rank].size() ||
          off > timestamps[rank].size() - len)
        return outside("is outside every rank's timestamp slots");
      return timestamps[rank].data() + off;
    }
    if (addr >= kFlagBase) {
      uint64_t rank = (addr - kFlagBase) >> kFlagShift;
      uint64_t off = (addr - kFlagBase) & ((1ull << kFlagShift) - 1);
      uint64_t size = uint64_t(plan.flags) * 8;
      if (rank >= uint64_t(plan.ranks) || len > size || off > size - len)
        return outside("is outside every rank's flag slots");
      return reinterpret_cast<uint8_t *>(memory.flags(rank).data()) + off;
    }
    if (addr >= kDataBase) {
      uint64_t index = (addr - kDataBase) >> kDataShift;
      uint64_t off = (addr - kDataBase) & ((1ull << kDataShift) - 1);
      uint64_t rank = index / plan.buffers.size();
      uint64_t buffer = index % plan.buffers.size();
      if (rank >= uint64_t(plan.ranks))
        return outside("is beyond the last rank's buffers");
      if (len > memory.bufferBytes(rank, buffer) ||
          off > memory.bufferBytes(rank, buffer) - len)
        return outside(
            "runs past the end of buffer \"" + plan.buffers[buffer].name +
            "\" of rank " + std::to_string(rank) + " (" +
            std::to_string(memory.bufferBytes(rank, buffer)) + " bytes)");
      return memory.buffer(rank, buffer) + off;
    }
    return outside("is below every buffer");
  }

  /// "flag@r1[2]" for a flag address, else the address.
  std::string name(uint64_t addr) const {
    if (addr >= kFlagBase && addr < kTimestampBase) {
      uint64_t rank = (addr - kFlagBase) >> kFlagShift;
      uint64_t off = (addr - kFlagBase) & ((1ull << kFlagShift) - 1);
      return "flag@r" + std::to_string(rank) + "[" + std::to_string(off / 8) +
             "]";
    }
    return hex(addr);
  }

  const PacketPlan &plan;
  HostMemory &memory;
  std::vector<std::vector<uint8_t>> timestamps;
};

bool compare(uint32_t func, uint32_t value, uint32_t reference) {
  switch (func) {
  case 0:
    return true;
  case 1:
    return value < reference;
  case 2:
    return value <= reference;
  case 3:
    return value == reference;
  case 4:
    return value != reference;
  case 5:
    return value >= reference;
  case 6:
    return value > reference;
  }
  return false;
}

const char *funcName(uint32_t func) {
  static const char *names[] = {"always", "lt", "le", "eq", "ne", "ge", "gt"};
  return func < 7 ? names[func] : "?";
}

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
    blocked = false;
    ++clock;
    auto aligned = [&](int i, uint64_t align, const char *what) {
      if (p.addr[i] % align)
        return fault(e, p,
                     std::string(what) + " address " + hex(p.addr[i]) +
                         " is not " + std::to_string(align) + "-byte aligned");
      return true;
    };
    std::string why;
    switch (p.kind) {
    case Packet::Kind::Nop:
      break;
    case Packet::Kind::CopyLinear: {
      uint8_t *src = machine.translate(p.addr[0], p.bytes, why);
      uint8_t *dst = src ? machine.translate(p.addr[1], p.bytes, why) : nullptr;
      if (!dst)
        return fault(e, p, "COPY_LINEAR " + why);
      // A copy onto itself moves nothing; a partial overlap has no defined
      // result on the engine, so it is a fault, never a memmove.
      if (dst == src)
        break;
      if (src < dst + p.bytes && dst < src + p.bytes)
        return fault(e, p, "COPY_LINEAR source and destination overlap");
      std::memcpy(dst, src, p.bytes);
      s.bytesMoved += p.bytes;
      break;
    }
    case Packet::Kind::CopyBroadcast: {
      // ROCr's rule: both destinations at the same offset within 32 bytes.
      if ((p.addr[1] & 31) != (p.addr[2] & 31))
        return fault(e, p,
                     "broadcast destinations " + hex(p.addr[1]) + " and " +
                         hex(p.addr[2]) +
                         " are not at the same offset within 32 bytes");
      uint8_t *src = machine.translate(p.addr[0], p.bytes, why);
      uint8_t *d0 = src ? machine.translate(p.addr[1], p.bytes, why) : nullptr;
      uint8_t *d1 = d0 ? machine.translate(p.addr[2], p.bytes, why) : nullptr;
      if (!d1)
        return fault(e, p, "COPY_BROADCAST " + why);
      auto partial = [&](const uint8_t *x, const uint8_t *y) {
        return x != y && x < y + p.bytes && y < x + p.bytes;
      };
      if (partial(src, d0) || partial(src, d1) || partial(d0, d1))
        return fault(e, p, "COPY_BROADCAST source and destinations overlap");
      if (d0 != src) {
        std::memcpy(d0, src, p.bytes);
        s.bytesMoved += p.bytes;
      }
      if (d1 != src && d1 != d0) {
        std::memcpy(d1, src, p.bytes);
        s.bytesMoved += p.bytes;
      }
      break;
    }
    case Packet::Kind::CopySwap: {
      if (!aligned(0, 64, "swap") || !aligned(1, 64, "swap"))
        return false;
      uint8_t *a = machine.translate(p.addr[0], p.bytes, why);
      uint8_t *b = a ? machine.translate(p.addr[1], p.bytes, why) : nullptr;
      if (!b)
        return fault(e, p, "COPY_SWAP " + why);
      if (a == b)
        break; // a swap with itself moves nothing
      if (a < b + p.bytes && b < a + p.bytes)
        return fault(e, p, "COPY_SWAP of overlapping ranges");
      std::swap_ranges(a, a + p.bytes, b);
      s.bytesMoved += 2 * p.bytes;
      break;
    }
    case Packet::Kind::Fence: {
      if (!aligned(0, 4, "FENCE"))
        return false;
      uint8_t *word = machine.translate(p.addr[0], 4, why);
      if (!word)
        return fault(e, p, "FENCE " + why);
      uint32_t value = static_cast<uint32_t>(p.value);
      std::memcpy(word, &value, 4);
      break;
    }
    case Packet::Kind::AtomicAdd64: {
      if (!aligned(0, 8, "ATOMIC"))
        return false;
      uint8_t *word = machine.translate(p.addr[0], 8, why);
      if (!word)
        return fault(e, p, "ATOMIC " + why);
      uint64_t value;
      std::memcpy(&value, word, 8);
      value += p.value;
      std::memcpy(word, &value, 8);
      break;
    }
    case Packet::Kind::PollRegMem: {
      if (!aligned(0, 4, "POLL_REGMEM"))
        return false;
      uint8_t *word = machine.translate(p.addr[0], 4, why);
      if (!word)
        return fault(e, p, "POLL_REGMEM " + why);
      uint32_t value;
      std::memcpy(&value, word, 4);
      ++s.polls;
      if (!compare(p.func, value & p.mask, static_cast<uint32_t>(p.value))) {
        ++s.pollRetries;
        blocked = true;
        return true;
      }
      break;
    }
    case Packet::Kind::Timestamp: {
      if (!aligned(0, 32, "TIMESTAMP"))
        return false;
      uint8_t *slot = machine.translate(p.addr[0], 8, why);
      if (!slot)
        return fault(e, p, "TIMESTAMP " + why);
      std::memcpy(slot, &clock, 8);
      break;
    }
    case Packet::Kind::Trap:
      ++s.traps;
      break;
    }
    ++s.packets;
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
        std::string why;
        uint8_t *word = machine.translate(p.addr[0], 4, why);
        uint32_t value = 0;
        if (word)
          std::memcpy(&value, word, 4);
        char at[32];
        std::snprintf(at, sizeof at, "0x%04zx", p.dword * 4);
        error += " rank " + std::to_string(e.queue->rank) + " engine " +
                 std::to_string(e.queue->engine) + " (packet at byte " + at +
                 ") polls " + machine.name(p.addr[0]) + " " + funcName(p.func) +
                 " " + std::to_string(p.value) + " but it stays at " +
                 std::to_string(value) + ";";
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
