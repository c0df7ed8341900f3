//===- HostMemory.cpp - host buffers, input patterns, output checks -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <cstring>

#include <sstream>

using namespace sdma::rt;

static constexpr uint8_t kPoison = 0xEE;

HostMemory::HostMemory(const Plan &plan, size_t chunkBytes)
    : chunkBytes_(chunkBytes) {
  data_.resize(plan.ranks);
  flags_.assign(plan.ranks, std::vector<uint64_t>(plan.flags, 0));
  for (auto &rank : data_)
    for (const Buffer &buffer : plan.buffers)
      rank.emplace_back(buffer.chunks * chunkBytes, kPoison);
}

uint8_t sdma::rt::patternByte(int rank, int buffer, uint64_t index) {
  // splitmix64 of (rank, buffer, index): neighbouring bytes, chunks and
  // ranks all differ, so a misplaced chunk cannot match by accident.
  uint64_t x = (uint64_t(rank) << 48) ^ (uint64_t(buffer) << 40) ^ index;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint8_t>(x ^ (x >> 31));
}

void sdma::rt::fillInputs(const Plan &plan, HostMemory &memory) {
  int input = plan.collective ? plan.collective->input : 0;
  for (int r = 0; r < plan.ranks; ++r)
    for (int b = 0; b < static_cast<int>(plan.buffers.size()); ++b) {
      uint8_t *bytes = memory.buffer(r, b);
      size_t n = memory.bufferBytes(r, b);
      for (size_t i = 0; i < n; ++i)
        bytes[i] = b == input ? patternByte(r, b, i) : kPoison;
    }
}

CheckResult sdma::rt::checkOutputs(const Plan &plan, const HostMemory &memory) {
  CheckResult result;
  if (!plan.collective)
    return result;
  const Collective &c = *plan.collective;
  size_t chunk = memory.chunkBytes();
  int64_t outChunks = plan.buffers[c.output].chunks;
  int64_t R = plan.ranks;
  int64_t per = c.kind == "all_to_all"                         ? outChunks / R
                : c.kind == "all_gather" || c.kind == "gather" ? outChunks / R
                                                               : outChunks;
  for (int r = 0; r < plan.ranks; ++r) {
    if (c.kind == "gather" && r != c.root)
      continue;
    const uint8_t *out = memory.buffer(r, c.output);
    for (int64_t i = 0; i < outChunks; ++i) {
      // Where chunk i of rank r's output comes from.
      int64_t srcRank, srcChunk;
      if (c.kind == "all_gather" || c.kind == "gather")
        srcRank = i / per, srcChunk = i % per;
      else if (c.kind == "all_to_all")
        srcRank = i / per, srcChunk = r * per + i % per;
      else if (c.kind == "broadcast")
        srcRank = c.root, srcChunk = i;
      else // scatter
        srcRank = c.root, srcChunk = r * per + i;
      for (size_t byte = 0; byte < chunk; ++byte) {
        uint8_t expected = patternByte(static_cast<int>(srcRank), c.input,
                                       srcChunk * chunk + byte);
        uint8_t actual = out[i * chunk + byte];
        ++result.checkedBytes;
        if (actual == expected)
          continue;
        if (result.wrongBytes++ == 0) {
          std::ostringstream os;
          os << "rank " << r << ", " << plan.buffers[c.output].name << " chunk "
             << i << " byte " << byte << ": 0x" << std::hex << int(actual)
             << ", expected 0x" << int(expected) << std::dec << " ("
             << plan.buffers[c.input].name << " chunk " << srcChunk
             << " of rank " << srcRank << ")";
          result.firstWrong = os.str();
        }
      }
    }
  }
  return result;
}

uint64_t sdma::rt::differingBytes(const Plan &plan, const HostMemory &a,
                                  const HostMemory &b, uint64_t *compared) {
  uint64_t differ = 0, total = 0;
  for (int r = 0; r < plan.ranks; ++r)
    for (size_t buffer = 0; buffer < plan.buffers.size(); ++buffer) {
      size_t n = a.bufferBytes(r, buffer);
      const uint8_t *x = a.buffer(r, buffer), *y = b.buffer(r, buffer);
      total += n;
      if (std::memcmp(x, y, n) != 0)
        for (size_t i = 0; i < n; ++i)
          differ += x[i] != y[i];
    }
  if (compared)
    *compared = total;
  return differ;
}
