//===- RingWriter.cpp - packet plans -> ring writer kernels (HIP) ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Lowers a packet plan to the kernel that writes its packets into the
// engines' rings at run time (Ring.h). Each queue becomes one function of
// straight-line submissions: a packet's constant dwords as literals, its
// relocated dwords as expressions over the kernel's tables (buffer bases,
// flag and timestamp slots, the chunk size). A queue's packets fall into
// batches (ringBatches): each ordering packet alone, written by wavefront
// 0, and runs of independent data packets, dealt round robin to the
// block's wavefronts, which reserve ring space concurrently. A block
// barrier separates batches, so every packet of a batch is in the ring
// before the next batch reserves: ring order is the plan's order up to the
// order of independent data packets within a batch.
//
//===----------------------------------------------------------------------===//

#include "amd/RingDevice.h"
#ifdef SDMA_HAVE_HIP
#include "hip/HipKernel.h"
#endif
#include "sdma/runtime/LdstPrelude.h"
#include "sdma/runtime/Ring.h"

#include <cstdio>
#include <map>
#include <sstream>

using namespace sdma::rt;

std::optional<RingFault> sdma::rt::parseRingFault(const std::string &name) {
  if (name == "none")
    return RingFault::None;
  if (name == "early-doorbell")
    return RingFault::EarlyDoorbell;
  if (name == "no-pad")
    return RingFault::NoPad;
  if (name == "race")
    return RingFault::Race;
  return std::nullopt;
}

namespace {
bool isData(Packet::Kind kind) {
  return kind == Packet::Kind::CopyLinear ||
         kind == Packet::Kind::CopyBroadcast || kind == Packet::Kind::CopySwap;
}

/// The chunk ranges a data packet reads and writes: (rank, buffer) and
/// [first, end) in chunks, from its relocations; false if an address is
/// not a chunk relocation (then it conflicts with everything).
struct Range {
  int rank, buffer;
  int64_t first, end;
  bool write;
};
bool packetRanges(const PacketQueue &queue, const Packet &p,
                  const std::map<size_t, const Relocation *> &relocs,
                  std::vector<Range> &ranges) {
  ranges.clear();
  auto count = relocs.find(p.dword + p.countAt);
  if (count == relocs.end() || count->second->kind != Relocation::Kind::Count)
    return false;
  for (int i = 0; i < p.numAddrs; ++i) {
    auto r = relocs.find(p.dword + p.addrAt[i]);
    if (r == relocs.end() || r->second->kind != Relocation::Kind::Chunk)
      return false;
    const Relocation &rel = *r->second;
    // COPY/broadcast: address 0 is read, the others written; SWAP: both.
    bool write = i > 0 || p.kind == Packet::Kind::CopySwap;
    ranges.push_back({rel.rank, rel.buffer, rel.chunk,
                      rel.chunk + count->second->chunks, write});
  }
  return true;
}
} // namespace

bool sdma::rt::checkRingBytes(uint64_t ringBytes, size_t largestDwords,
                              std::string &error) {
  if (ringBytes >= 64 && !(ringBytes & (ringBytes - 1)) &&
      ringBytes >= 8 * largestDwords)
    return true;
  error = "a ring of " + std::to_string(ringBytes) +
          " bytes: rings must be a power of two of at least 64 bytes and "
          "twice the largest packet (" +
          std::to_string(4 * largestDwords) + " bytes)";
  return false;
}

std::vector<size_t> sdma::rt::ringBatches(const PacketQueue &queue,
                                          const std::vector<Packet> &packets) {
  std::map<size_t, const Relocation *> relocs;
  for (const Relocation &r : queue.relocations)
    relocs[r.dword] = &r;
  std::vector<size_t> batch(packets.size());
  std::vector<Range> open, mine; // the current data batch's ranges
  bool inData = false, unknown = false;
  size_t id = 0;
  for (size_t i = 0; i < packets.size(); ++i) {
    const Packet &p = packets[i];
    bool data = isData(p.kind);
    bool known = data && packetRanges(queue, p, relocs, mine);
    bool conflict = !inData || !known || unknown;
    for (const Range &a : mine)
      for (const Range &b : open)
        conflict |= (a.write || b.write) && a.rank == b.rank &&
                    a.buffer == b.buffer && a.first < b.end && b.first < a.end;
    if (i && (conflict || !data))
      ++id;
    if (conflict || !data) {
      open.clear();
      unknown = false;
    }
    batch[i] = id;
    inData = data;
    if (data) {
      open.insert(open.end(), mine.begin(), mine.end());
      unknown |= !known;
    }
  }
  return batch;
}

namespace {
std::string hex32(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%xu", v);
  return text;
}

/// One submission: the packet's dwords as C expressions.
void emitPacket(std::ostream &os, const PacketPlan &plan,
                const PacketQueue &queue, const Packet &p,
                const std::map<size_t, const Relocation *> &relocs,
                const char *guard) {
  std::ostringstream values, lets;
  for (size_t i = 0; i < p.size; ++i) {
    size_t at = p.dword + i;
    auto r = relocs.find(at);
    if (i)
      values << ", ";
    if (r == relocs.end()) {
      values << hex32(queue.image[at]);
      continue;
    }
    const Relocation &rel = *r->second;
    std::string x = "x" + std::to_string(i);
    switch (rel.kind) {
    case Relocation::Kind::Chunk:
      lets << "    const unsigned long long " << x << " = sdma_ring_chunk(a, "
           << rel.rank * plan.buffers.size() + rel.buffer << "u, " << rel.chunk
           << "ull);\n";
      break;
    case Relocation::Kind::Flag:
      lets << "    const unsigned long long " << x << " = a.flags[" << rel.rank
           << "] + " << rel.slot * 8 << "ull;\n";
      break;
    case Relocation::Kind::Timestamp:
      lets << "    const unsigned long long " << x << " = a.ts[" << rel.rank
           << "] + " << rel.slot * 32 << "ull;\n";
      break;
    case Relocation::Kind::Count:
      values << "sdma_ring_count(a, " << hex32(queue.image[at]) << ", "
             << rel.chunks << "ull)";
      continue;
    }
    values << "(unsigned)" << x << ", (unsigned)(" << x << " >> 32)";
    ++i; // an address takes two dwords
  }
  os << "  if (" << guard << ") {\n"
     << lets.str() << "    const unsigned d[" << p.size << "] = {"
     << values.str() << "};\n"
     << "    sdma_ring_submit(a, q, d, " << p.size << "u);\n  }\n";
}

bool emitQueue(std::ostream &os, const PacketPlan &plan, size_t index,
               std::string &error) {
  const PacketQueue &queue = plan.queues[index];
  std::vector<Packet> packets;
  if (!decodePackets(queue.image, packets, error)) {
    error = "queue " + std::to_string(queue.rank) + ":" +
            std::to_string(queue.engine) + ": " + error;
    return false;
  }
  std::map<size_t, const Relocation *> relocs;
  for (const Relocation &r : queue.relocations)
    relocs[r.dword] = &r;
  os << "// Queue " << index << ": rank " << queue.rank << ", engine "
     << queue.engine << ", " << packets.size() << " packets.\n"
     << "static __device__ void sdma_ring_q" << index
     << "(const SdmaRingArgs &a, SdmaRingQueue *q, unsigned w, unsigned nw, "
        "bool lead) {\n";
  std::vector<size_t> batch = ringBatches(queue, packets);
  size_t dealt = 0; // data packets in the current batch
  for (size_t i = 0; i < packets.size(); ++i) {
    const Packet &p = packets[i];
    bool data = isData(p.kind);
    // A barrier between batches: every packet of one is in the ring before
    // the next reserves.
    if (i && batch[i] != batch[i - 1]) {
      os << "  SDMA_SYNC();\n";
      dealt = 0;
    }
    std::string guard =
        data ? "lead && w == " + std::to_string(dealt++) + "u % nw"
             : std::string("lead && w == 0");
    emitPacket(os, plan, queue, p, relocs, guard.c_str());
  }
  os << "}\n\n";
  return true;
}
} // namespace

std::optional<std::string> sdma::rt::emitRingWriter(const PacketPlan &plan,
                                                    RingFault fault,
                                                    std::string &error) {
  std::vector<size_t> first(plan.ranks + 1, plan.queues.size());
  for (size_t q = plan.queues.size(); q-- > 0;) {
    int rank = plan.queues[q].rank;
    if (rank < 0 || rank >= plan.ranks ||
        (q + 1 < plan.queues.size() && plan.queues[q + 1].rank < rank)) {
      error = "queue " + std::to_string(q) +
              ": the plan's queues are not grouped by rank in rank order";
      return std::nullopt;
    }
    first[rank] = q;
  }
  for (int r = plan.ranks - 1; r >= 0; --r)
    first[r] = std::min(first[r], first[r + 1]);
  std::ostringstream os;
  os << "// The ring writer of " << plan.program << " (target "
     << plan.target.name << "): " << plan.queues.size() << " queues, "
     << plan.ranks << " ranks.\n"
     << "#define SDMA_RING_NOP_COUNT " << (plan.target.nopCount ? 1 : 0)
     << "\n";
  const char *faults[] = {nullptr, "SDMA_RING_FAULT_EARLY_DOORBELL",
                          "SDMA_RING_FAULT_NO_PAD", "SDMA_RING_FAULT_RACE"};
  if (fault != RingFault::None)
    os << "#define " << faults[static_cast<int>(fault)] << " 1\n";
  os << kRingDeviceSource << "\n";
  for (size_t q = 0; q < plan.queues.size(); ++q)
    if (!emitQueue(os, plan, q, error))
      return std::nullopt;
  os << "// The first queue of each rank (and the queue count).\n"
     << "static __device__ const unsigned sdma_ring_first[" << plan.ranks + 1
     << "] = {";
  for (int r = 0; r <= plan.ranks; ++r)
    os << (r ? ", " : "") << first[r];
  os << "};\n\n"
     << "// One block per queue (of a.rank, or of every rank if a.rank < 0),\n"
     << "// one writer per wavefront (its first lane).\n"
     << "static __device__ void sdma_ring_run(const SdmaRingArgs &a) {\n"
     << "  unsigned q = SDMA_BID + (a.rank < 0 ? 0u : "
        "sdma_ring_first[a.rank]);\n"
     << "  unsigned w = SDMA_TID / SDMA_RING_WAVE;\n"
     << "  unsigned nw = SDMA_NTID / SDMA_RING_WAVE;\n"
     << "  bool lead = SDMA_TID % SDMA_RING_WAVE == 0;\n"
     << "  switch (q) {\n";
  for (size_t q = 0; q < plan.queues.size(); ++q)
    os << "  case " << q << ": sdma_ring_q" << q << "(a, &a.queues[" << q
       << "], w, nw, lead); break;\n";
  os << "  }\n}\n\n"
     << "extern \"C\" __global__ void sdma_ring_write(SdmaRingArgs a) {\n"
     << "  sdma_ring_run(a);\n}\n";
  return os.str();
}

std::optional<std::string>
sdma::rt::emitCommunicatorRingWriter(const PacketPlan &plan,
                                     std::string &error) {
  std::optional<std::string> writer =
      emitRingWriter(plan, RingFault::None, error);
  if (!writer)
    return std::nullopt;
  return *writer + "#define SDMA_RING_TABLE_BUFS " +
         std::to_string(size_t(plan.ranks) * plan.buffers.size()) +
         "\n#define SDMA_RING_TABLE_RANKS " + std::to_string(plan.ranks) +
         "\n" + kRingTableEntry;
}

std::string sdma::rt::ringHipSource(const std::string &writer, bool clang) {
  return std::string(clang ? kHipClangPrelude : kHipPrelude) +
         "#define SDMA_RING_WAVE 64\n" + kRingHipPrelude + writer;
}

bool sdma::rt::compileRingWriterHipRtc(const std::string &writer,
                                       const std::string &arch,
                                       std::string &code, std::string &error) {
#ifdef SDMA_HAVE_HIP
  // HipKernel::compile puts kHipPrelude first.
  return HipKernel::compile(std::string("#define SDMA_RING_WAVE 64\n") +
                                kRingHipPrelude + writer,
                            "sdma_ring_write.hip", arch, code, error);
#else
  error = "built without HIP headers";
  return false;
#endif
}
