//===- PacketDecoder.cpp - SDMA packet images back to packets -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Written from ../shared/SDMA-PACKETS.md alone, sharing no field table with
// the compiler's encoder (lib/Target/Packets), so that an encoder bug shows
// up as a listing mismatch or a decode error instead of cancelling out.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Packets.h"

#include <cstdio>
#include <map>

using namespace sdma::rt;

namespace {
/// Bits [hi:lo] of a dword.
uint32_t bits(uint32_t dw, int hi, int lo) {
  uint32_t width = hi - lo + 1;
  uint32_t mask = width == 32 ? 0xffffffffu : ((1u << width) - 1);
  return (dw >> lo) & mask;
}

std::string hex(uint64_t v, bool upper = true) {
  char text[24];
  std::snprintf(text, sizeof text, upper ? "%llX" : "%llx",
                static_cast<unsigned long long>(v));
  return text;
}

const char *funcName(uint32_t func) {
  static const char *names[] = {"always", "lt", "le", "eq", "ne", "ge", "gt"};
  return func < 7 ? names[func] : "?";
}
} // namespace

bool sdma::rt::decodePackets(const std::vector<uint32_t> &image,
                             std::vector<Packet> &packets, std::string &error) {
  packets.clear();
  size_t at = 0;
  auto where = [&] { return "packet at byte 0x" + hex(at * 4, false) + ": "; };
  while (at < image.size()) {
    const uint32_t dw0 = image[at];
    const uint32_t opcode = bits(dw0, 7, 0), subOp = bits(dw0, 15, 8);
    Packet p;
    p.dword = at;
    auto need = [&](size_t n) {
      if (at + n > image.size()) {
        error = where() + "truncated: needs " + std::to_string(n) +
                " dwords, " + std::to_string(image.size() - at) + " left";
        return false;
      }
      p.size = n;
      return true;
    };
    auto addr = [&](int i, size_t lo) {
      p.addrAt[i] = lo;
      p.addr[i] = image[at + lo] | uint64_t(image[at + lo + 1]) << 32;
      p.numAddrs = i + 1;
    };
    switch (opcode) {
    case 0: // NOP: count[29:16] extra dwords
      p.kind = Packet::Kind::Nop;
      p.extra = bits(dw0, 29, 16);
      if (!need(1 + p.extra))
        return false;
      break;
    case 1: // COPY
      if (subOp == 0 && bits(dw0, 27, 27)) {
        p.kind = Packet::Kind::CopyBroadcast;
        if (!need(9))
          return false;
        addr(0, 3);
        addr(1, 5);
        addr(2, 7);
      } else if (subOp == 0 || subOp == 9) {
        p.kind = subOp == 0 ? Packet::Kind::CopyLinear : Packet::Kind::CopySwap;
        if (!need(7))
          return false;
        addr(0, 3);
        addr(1, 5);
      } else {
        error = where() + "COPY sub-op " + std::to_string(subOp) +
                " is not supported (linear 0, swap 9)";
        return false;
      }
      p.countAt = 1;
      p.bytes = uint64_t(bits(image[at + 1], 29, 0)) + 1;
      break;
    case 5: // FENCE: address, 32-bit value
      p.kind = Packet::Kind::Fence;
      if (!need(4))
        return false;
      addr(0, 1);
      p.value = image[at + 3];
      break;
    case 6: // TRAP
      p.kind = Packet::Kind::Trap;
      if (!need(2))
        return false;
      p.context = bits(image[at + 1], 27, 0);
      break;
    case 8: // POLL_REGMEM
      p.kind = Packet::Kind::PollRegMem;
      if (!need(6))
        return false;
      if (!bits(dw0, 31, 31)) {
        error = where() + "POLL_REGMEM on a register (mem_poll = 0) is not "
                          "supported";
        return false;
      }
      p.func = bits(dw0, 30, 28);
      if (p.func > 6) {
        error = where() + "POLL_REGMEM compare function " +
                std::to_string(p.func) + " is undefined";
        return false;
      }
      addr(0, 1);
      p.value = image[at + 3];
      p.mask = image[at + 4];
      p.interval = bits(image[at + 5], 15, 0);
      p.retry = bits(image[at + 5], 27, 16);
      break;
    case 10: // ATOMIC
      p.kind = Packet::Kind::AtomicAdd64;
      if (!need(8))
        return false;
      if (bits(dw0, 31, 25) != 47) {
        error = where() + "ATOMIC operation " +
                std::to_string(bits(dw0, 31, 25)) +
                " is not supported (ADD64 = 47)";
        return false;
      }
      addr(0, 1);
      p.value = image[at + 3] | uint64_t(image[at + 4]) << 32;
      break;
    case 13: // TIMESTAMP
      p.kind = Packet::Kind::Timestamp;
      if (!need(3))
        return false;
      if (subOp != 2) {
        error = where() + "TIMESTAMP sub-op " + std::to_string(subOp) +
                " is not supported (global = 2)";
        return false;
      }
      addr(0, 1);
      break;
    default:
      error = where() + "unknown opcode " + std::to_string(opcode);
      return false;
    }
    packets.push_back(p);
    at += p.size;
  }
  return true;
}

bool sdma::rt::packetListing(const PacketPlan &plan, std::string &listing,
                             std::string &error) {
  const PacketTarget &t = plan.target;
  listing = "target " + t.name + " (copy " + std::to_string(t.maxCopyBytes) +
            " bytes, " +
            (t.swap ? "swap " + std::to_string(t.maxSwapBytes) + " bytes, "
                    : std::string("no swap, ")) +
            (t.nopCount ? "NOP count)\n" : "no NOP count)\n");
  for (const PacketQueue &q : plan.queues) {
    std::vector<Packet> packets;
    if (!decodePackets(q.image, packets, error)) {
      error = "queue " + std::to_string(q.rank) + ":" +
              std::to_string(q.engine) + ": " + error;
      return false;
    }
    std::map<size_t, const Relocation *> relocAt;
    for (const Relocation &r : q.relocations)
      relocAt[r.dword] = &r;
    auto address = [&](const Packet &p, int i) -> std::string {
      auto it = relocAt.find(p.dword + p.addrAt[i]);
      if (it == relocAt.end())
        return "0x" + hex(p.addr[i]);
      const Relocation &r = *it->second;
      switch (r.kind) {
      case Relocation::Kind::Chunk:
        return plan.buffers[r.buffer].name + "@r" + std::to_string(r.rank) +
               "+c" + std::to_string(r.chunk);
      case Relocation::Kind::Flag:
        return "flag@r" + std::to_string(r.rank) + "[" +
               std::to_string(r.slot) + "]";
      case Relocation::Kind::Timestamp:
        return "ts@r" + std::to_string(r.rank) + "[" + std::to_string(r.slot) +
               "]";
      case Relocation::Kind::Count:
        break;
      }
      return "?";
    };
    auto count = [&](const Packet &p) -> std::string {
      auto it = relocAt.find(p.dword + p.countAt);
      if (it != relocAt.end() && it->second->kind == Relocation::Kind::Count)
        return std::to_string(it->second->chunks) + "ch";
      return std::to_string(p.bytes) + "B";
    };
    listing += "queue " + std::to_string(q.rank) + ":" +
               std::to_string(q.engine) + " (" +
               std::to_string(q.image.size()) + " dwords)\n";
    for (const Packet &p : packets) {
      std::string name, fields;
      switch (p.kind) {
      case Packet::Kind::Nop:
        name = "NOP";
        fields = "extra=" + std::to_string(p.extra);
        break;
      case Packet::Kind::CopyLinear:
        name = "COPY_LINEAR";
        fields = "src=" + address(p, 0) + " dst=" + address(p, 1) +
                 " count=" + count(p);
        break;
      case Packet::Kind::CopyBroadcast:
        name = "COPY_BROADCAST";
        fields = "src=" + address(p, 0) + " dst0=" + address(p, 1) +
                 " dst1=" + address(p, 2) + " count=" + count(p);
        break;
      case Packet::Kind::CopySwap:
        name = "COPY_SWAP";
        fields =
            "a=" + address(p, 0) + " b=" + address(p, 1) + " count=" + count(p);
        break;
      case Packet::Kind::Fence:
        name = "FENCE";
        fields = "addr=" + address(p, 0) + " value=" + std::to_string(p.value);
        break;
      case Packet::Kind::AtomicAdd64:
        name = "ATOMIC_ADD64";
        fields = "addr=" + address(p, 0) +
                 " value=" + std::to_string(static_cast<int64_t>(p.value));
        break;
      case Packet::Kind::PollRegMem:
        name = "POLL_REGMEM";
        fields = "addr=" + address(p, 0) + " func=" + funcName(p.func) +
                 " ref=" + std::to_string(p.value) + " mask=0x" + hex(p.mask) +
                 " interval=" + std::to_string(p.interval) +
                 " retry=" + std::to_string(p.retry);
        break;
      case Packet::Kind::Timestamp:
        name = "TIMESTAMP";
        fields = "addr=" + address(p, 0);
        break;
      case Packet::Kind::Trap:
        name = "TRAP";
        fields = "context=" + std::to_string(p.context);
        break;
      }
      char head[32];
      std::snprintf(head, sizeof head, "  0x%04zx  %-14s ", p.dword * 4,
                    name.c_str());
      listing += head + fields + "  [";
      for (size_t i = 0; i < p.size; ++i) {
        char word[12];
        std::snprintf(word, sizeof word, i ? " %08x" : "%08x",
                      q.image[p.dword + i]);
        listing += word;
      }
      listing += "]\n";
    }
  }
  return true;
}
