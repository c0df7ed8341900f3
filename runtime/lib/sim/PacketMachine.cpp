//===- PacketMachine.cpp - one SDMA engine's packets on host memory -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sim/PacketMachine.h"
#include "sdma/runtime/CheckedMath.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace sdma::rt;
using namespace sdma::rt::packetsim;

std::string packetsim::hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(v));
  return text;
}

uint64_t packetsim::dataAddress(const PacketPlan &plan, int rank, int buffer) {
  return kDataBase +
         (uint64_t(rank * plan.buffers.size() + buffer) << kDataShift);
}

/// Whether the plan's buffers at `chunk` fit the simulated address space
/// (and their sizes 64 bits).
bool packetsim::checkLayout(const PacketPlan &plan, uint64_t chunk,
                            std::string &error) {
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
bool packetsim::patchQueue(const PacketPlan &plan, const PacketQueue &queue,
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
bool packetsim::checkChunk(const PacketPlan &plan, uint64_t chunk,
                           std::string &error) {
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

size_t packetsim::packetDwords(uint32_t header, std::string &error) {
  if ((header & 0xff) == 0) // NOP: count[29:16] extra dwords
    return 1 + ((header >> 16) & 0x3fff);
  // The header followed by zero dwords, which decode as 1-dword NOPs.
  std::vector<uint32_t> probe(16, 0);
  probe[0] = header;
  std::vector<Packet> packets;
  if (!decodePackets(probe, packets, error))
    return 0;
  return packets[0].size;
}

bool packetsim::compare(uint32_t func, uint32_t value, uint32_t reference) {
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

const char *packetsim::funcName(uint32_t func) {
  static const char *names[] = {"always", "lt", "le", "eq", "ne", "ge", "gt"};
  return func < 7 ? names[func] : "?";
}

uint8_t *Machine::translate(uint64_t addr, uint64_t len, std::string &error) {
  auto outside = [&](const std::string &why) {
    error =
        "address " + hex(addr) + " (+" + std::to_string(len) + " bytes) " + why;
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

std::string Machine::name(uint64_t addr) const {
  if (addr >= kFlagBase && addr < kTimestampBase) {
    uint64_t rank = (addr - kFlagBase) >> kFlagShift;
    uint64_t off = (addr - kFlagBase) & ((1ull << kFlagShift) - 1);
    return "flag@r" + std::to_string(rank) + "[" + std::to_string(off / 8) +
           "]";
  }
  return hex(addr);
}

PacketExecutor::Step PacketExecutor::execute(const Packet &p, uint64_t clock,
                                             PacketSimStats &s,
                                             std::string &what) {
  auto fault = [&](const std::string &why) {
    what = why;
    return Step::Fault;
  };
  auto misaligned = [&](int i, uint64_t align, const char *field) {
    if (p.addr[i] % align == 0)
      return false;
    what = std::string(field) + " address " + hex(p.addr[i]) + " is not " +
           std::to_string(align) + "-byte aligned";
    return true;
  };
  std::string why;
  switch (p.kind) {
  case Packet::Kind::Nop:
    break;
  case Packet::Kind::CopyLinear: {
    uint8_t *src = translate(p.addr[0], p.bytes, why);
    uint8_t *dst = src ? translate(p.addr[1], p.bytes, why) : nullptr;
    if (!dst)
      return fault("COPY_LINEAR " + why);
    // A copy onto itself moves nothing; a partial overlap has no defined
    // result on the engine, so it is a fault, never a memmove.
    if (dst == src)
      break;
    if (src < dst + p.bytes && dst < src + p.bytes)
      return fault("COPY_LINEAR source and destination overlap");
    std::memcpy(dst, src, p.bytes);
    s.bytesMoved += p.bytes;
    break;
  }
  case Packet::Kind::CopyBroadcast: {
    // ROCr's rule: both destinations at the same offset within 32 bytes.
    if ((p.addr[1] & 31) != (p.addr[2] & 31))
      return fault("broadcast destinations " + hex(p.addr[1]) + " and " +
                   hex(p.addr[2]) +
                   " are not at the same offset within 32 bytes");
    uint8_t *src = translate(p.addr[0], p.bytes, why);
    uint8_t *d0 = src ? translate(p.addr[1], p.bytes, why) : nullptr;
    uint8_t *d1 = d0 ? translate(p.addr[2], p.bytes, why) : nullptr;
    if (!d1)
      return fault("COPY_BROADCAST " + why);
    auto partial = [&](const uint8_t *x, const uint8_t *y) {
      return x != y && x < y + p.bytes && y < x + p.bytes;
    };
    if (partial(src, d0) || partial(src, d1) || partial(d0, d1))
      return fault("COPY_BROADCAST source and destinations overlap");
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
    if (misaligned(0, 64, "swap") || misaligned(1, 64, "swap"))
      return Step::Fault;
    uint8_t *a = translate(p.addr[0], p.bytes, why);
    uint8_t *b = a ? translate(p.addr[1], p.bytes, why) : nullptr;
    if (!b)
      return fault("COPY_SWAP " + why);
    if (a == b)
      break; // a swap with itself moves nothing
    if (a < b + p.bytes && b < a + p.bytes)
      return fault("COPY_SWAP of overlapping ranges");
    std::swap_ranges(a, a + p.bytes, b);
    s.bytesMoved += 2 * p.bytes;
    break;
  }
  case Packet::Kind::Fence: {
    if (misaligned(0, 4, "FENCE"))
      return Step::Fault;
    uint8_t *word = translate(p.addr[0], 4, why);
    if (!word)
      return fault("FENCE " + why);
    __atomic_store_n(reinterpret_cast<uint32_t *>(word),
                     static_cast<uint32_t>(p.value), __ATOMIC_RELEASE);
    break;
  }
  case Packet::Kind::AtomicAdd64: {
    if (misaligned(0, 8, "ATOMIC"))
      return Step::Fault;
    uint8_t *word = translate(p.addr[0], 8, why);
    if (!word)
      return fault("ATOMIC " + why);
    __atomic_fetch_add(reinterpret_cast<uint64_t *>(word), p.value,
                       __ATOMIC_SEQ_CST);
    break;
  }
  case Packet::Kind::PollRegMem: {
    if (misaligned(0, 4, "POLL_REGMEM"))
      return Step::Fault;
    uint8_t *word = translate(p.addr[0], 4, why);
    if (!word)
      return fault("POLL_REGMEM " + why);
    uint32_t value =
        __atomic_load_n(reinterpret_cast<uint32_t *>(word), __ATOMIC_ACQUIRE);
    ++s.polls;
    if (!compare(p.func, value & p.mask, static_cast<uint32_t>(p.value))) {
      ++s.pollRetries;
      return Step::Blocked;
    }
    break;
  }
  case Packet::Kind::Timestamp: {
    if (misaligned(0, 32, "TIMESTAMP"))
      return Step::Fault;
    uint8_t *slot = translate(p.addr[0], 8, why);
    if (!slot)
      return fault("TIMESTAMP " + why);
    std::memcpy(slot, &clock, 8);
    break;
  }
  case Packet::Kind::Trap:
    ++s.traps;
    break;
  }
  ++s.packets;
  return Step::Done;
}

std::string PacketExecutor::pollState(const Packet &p) {
  std::string why;
  uint8_t *word = translate(p.addr[0], 4, why);
  uint32_t value = 0;
  if (word)
    value =
        __atomic_load_n(reinterpret_cast<uint32_t *>(word), __ATOMIC_ACQUIRE);
  return "polls " + name(p.addr[0]) + " " + funcName(p.func) + " " +
         std::to_string(p.value) + " but it stays at " + std::to_string(value);
}
