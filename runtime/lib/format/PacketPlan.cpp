//===- PacketPlan.cpp - parse and validate a packet plan ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "format/JsonFields.h"
#include "sdma/runtime/Limits.h"
#include "sdma/runtime/Packets.h"

#include <algorithm>

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

namespace {

constexpr int64_t kMaxDwords = int64_t(1) << 28;

/// Standard base64 (RFC 4648) with padding; fails on anything else.
bool decodeBase64(const std::string &text, std::string &bytes) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  if (text.size() % 4)
    return false;
  bytes.clear();
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad || (v[k] = value(c)) < 0)
        return false;
    }
    uint32_t word = v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3];
    bytes.push_back(static_cast<char>(word >> 16));
    if (pad < 2)
      bytes.push_back(static_cast<char>(word >> 8));
    if (pad < 1)
      bytes.push_back(static_cast<char>(word));
  }
  return true;
}

/// $.target: the profile's name and limits, checked against the count and
/// swap fields' widths (30 bits; swaps at most 0x3fffffe0 bytes).
PacketTarget parseTarget(const json &root) {
  const json &target = field(root, "$", "target");
  PacketTarget t;
  t.name = stringField(target, "$.target", "name");
  if (t.name.empty() || t.name.size() > 64)
    fail("$.target.name", "must be 1 to 64 characters");
  t.countBits = integerField(target, "$.target", "count_bits", 1, 30);
  t.maxCopyBytes = integerField(target, "$.target", "max_copy_bytes", 1,
                                int64_t(1) << t.countBits);
  t.swap = booleanField(target, "$.target", "swap");
  t.maxSwapBytes =
      integerField(target, "$.target", "max_swap_bytes", t.swap ? 1 : 0,
                   t.swap ? std::min<int64_t>(t.maxCopyBytes, 0x3fffffe0) : 0);
  t.nopCount = booleanField(target, "$.target", "nop_count");
  return t;
}

PacketPlan parsePacketPlan(const json &root) {
  PacketPlan plan;
  checkFormat(root, "sdma.packets", "packet plan", kPacketPlanVersion);
  plan.program = stringField(root, "$", "program");
  plan.target = parseTarget(root);
  plan.ranks = integerField(root, "$", "ranks", 1, sdma::kMaxRanks);
  BufferIndex bufferIndex;
  plan.buffers = parseBuffers(root, sdma::kMaxBufferChunks, bufferIndex);
  plan.collective =
      parseCollective(root, plan.buffers, bufferIndex, plan.ranks);
  plan.flags = integerField(root, "$", "flags", 2, kMaxPacketFlags);
  plan.timestamps =
      integerField(root, "$", "timestamps", 0, kMaxPacketTimestamps);
  plan.chunkAlign = integerField(root, "$", "chunk_align", 1, 1 << 20);
  if (plan.chunkAlign & (plan.chunkAlign - 1))
    fail("$.chunk_align", "must be a power of two");
  plan.maxChunkBytes =
      integerField(root, "$", "max_chunk_bytes", 1, int64_t(1) << 40);
  const json &done = field(root, "$", "done");
  if (!done.is_array() || done.size() != static_cast<size_t>(plan.ranks))
    fail("$.done", "expected one count per rank");
  for (size_t r = 0; r < done.size(); ++r)
    plan.done.push_back(integer(done[r], "$.done[" + std::to_string(r) + "]", 0,
                                std::numeric_limits<int32_t>::max()));

  const json &queues = arrayField(root, "$", "queues");
  QueueSet seen;
  plan.queues.reserve(queues.size());
  for (size_t i = 0; i < queues.size(); ++i) {
    std::string path = "$.queues[" + std::to_string(i) + "]";
    PacketQueue queue;
    queue.rank = integerField(queues[i], path, "rank", 0, plan.ranks - 1);
    queue.engine =
        integerField(queues[i], path, "engine", 0, sdma::kMaxEnginesPerRank);
    seen.insert(queue.rank, queue.engine, path);
    int64_t dwords = integerField(queues[i], path, "dwords", 0, kMaxDwords);
    std::string bytes;
    if (!decodeBase64(stringField(queues[i], path, "image"), bytes))
      fail(path + ".image", "not valid base64");
    if (bytes.size() != static_cast<size_t>(dwords) * 4)
      fail(path + ".image", "holds " + std::to_string(bytes.size()) +
                                " bytes but \"dwords\" says " +
                                std::to_string(dwords));
    queue.image.resize(dwords);
    for (int64_t d = 0; d < dwords; ++d)
      for (int k = 0; k < 4; ++k)
        queue.image[d] |=
            static_cast<uint32_t>(static_cast<uint8_t>(bytes[4 * d + k]))
            << (8 * k);
    const json &relocs = arrayField(queues[i], path, "relocs");
    queue.relocations.reserve(relocs.size());
    for (size_t j = 0; j < relocs.size(); ++j) {
      std::string rpath = path + ".relocs[" + std::to_string(j) + "]";
      Relocation r;
      std::string kind = stringField(relocs[j], rpath, "kind");
      bool wide = kind != "count";
      r.dword =
          integerField(relocs[j], rpath, "dword", 0, dwords - (wide ? 2 : 1));
      if (kind == "chunk") {
        r.kind = Relocation::Kind::Chunk;
        r.rank = integerField(relocs[j], rpath, "rank", 0, plan.ranks - 1);
        r.buffer =
            findBuffer(bufferIndex, stringField(relocs[j], rpath, "buffer"),
                       rpath + ".buffer");
        r.chunk = integerField(relocs[j], rpath, "chunk", 0,
                               plan.buffers[r.buffer].chunks - 1);
      } else if (kind == "flag") {
        r.kind = Relocation::Kind::Flag;
        r.rank = integerField(relocs[j], rpath, "rank", 0, plan.ranks - 1);
        r.slot = integerField(relocs[j], rpath, "slot", 0, plan.flags - 1);
      } else if (kind == "timestamp") {
        r.kind = Relocation::Kind::Timestamp;
        if (plan.timestamps == 0)
          fail(rpath, "a timestamp relocation in a plan with no slots");
        r.rank = integerField(relocs[j], rpath, "rank", 0, plan.ranks - 1);
        r.slot =
            integerField(relocs[j], rpath, "index", 0, plan.timestamps - 1);
      } else if (kind == "count") {
        r.kind = Relocation::Kind::Count;
        r.chunks =
            integerField(relocs[j], rpath, "chunks", 1, sdma::kMaxBufferChunks);
      } else {
        fail(rpath + ".kind", "unknown relocation " + quote(kind));
      }
      queue.relocations.push_back(r);
    }
    plan.queues.push_back(std::move(queue));
  }
  return plan;
}

} // namespace

std::optional<PacketPlan> PacketPlan::parse(std::string_view text,
                                            std::string &error) {
  return parseJson<PacketPlan>(text, "packet plan", parsePacketPlan, error);
}

std::optional<PacketPlan> PacketPlan::load(const std::string &path,
                                           std::string &error) {
  std::optional<std::string> text = readFile(path, "packet plan", error);
  std::optional<PacketPlan> plan = text ? parse(*text, error) : std::nullopt;
  if (text && !plan)
    error = path + ": " + error;
  return plan;
}

Plan PacketPlan::layout() const {
  Plan plan;
  plan.schedule = program;
  plan.ranks = ranks;
  plan.flags = flags;
  plan.buffers = buffers;
  plan.collective = collective;
  plan.done = done;
  return plan;
}
