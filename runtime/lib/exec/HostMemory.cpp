//===- HostMemory.cpp - host buffers, input patterns, output checks -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/CheckedMath.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sstream>

using namespace sdma::rt;

std::optional<uint64_t> HostMemory::bytesNeeded(const Plan &plan,
                                                size_t chunkBytes) {
  CheckedSize perRank;
  for (const Buffer &buffer : plan.buffers)
    perRank.addProduct({uint64_t(buffer.chunks), chunkBytes})
        .add(sizeof(std::vector<uint8_t>));
  perRank.addProduct({uint64_t(plan.flags), sizeof(uint64_t)})
      .add(2 * sizeof(std::vector<uint8_t>));
  std::optional<uint64_t> rank = perRank.value();
  return rank ? checkedMul(*rank, uint64_t(plan.ranks)) : std::nullopt;
}

std::optional<HostMemory> HostMemory::create(const Plan &plan,
                                             size_t chunkBytes,
                                             std::string &error,
                                             const MemoryBudget &budget) {
  if (chunkBytes == 0) {
    error = "the chunk size must be at least 1 byte";
    return std::nullopt;
  }
  for (const Buffer &buffer : plan.buffers)
    if (buffer.elementBytes() == 0 || chunkBytes % buffer.elementBytes()) {
      error = "the chunk size, " + std::to_string(chunkBytes) +
              " bytes, is not a multiple of the " +
              std::to_string(buffer.elementBytes()) + "-byte " + buffer.type +
              " elements of buffer '" + buffer.name + "'";
      return std::nullopt;
    }
  if (!budget.admit(bytesNeeded(plan, chunkBytes),
                    "host memory for " + std::to_string(plan.ranks) +
                        " ranks' buffers and flags at " +
                        std::to_string(chunkBytes) + "-byte chunks",
                    error))
    return std::nullopt;
  return HostMemory(plan, chunkBytes);
}

bool HostMemory::matches(const Plan &plan, std::string &error,
                         bool withFlags) const {
  bool same =
      data_.size() == size_t(plan.ranks) && flags_.size() == size_t(plan.ranks);
  for (size_t r = 0; same && r < data_.size(); ++r) {
    same = data_[r].size() == plan.buffers.size() &&
           (!withFlags || flags_[r].size() == size_t(plan.flags));
    // A count table's entries are 8 bytes, whatever the chunk.
    for (size_t b = 0; same && b < plan.buffers.size(); ++b)
      same = data_[r][b].size() == plan.buffers[b].bytes(chunkBytes_);
  }
  if (!same)
    error = "the host memory was made for another plan (its ranks, buffer "
            "sizes or flags differ from " +
            plan.schedule.substr(0, 64) + "'s)";
  return same;
}

HostMemory::HostMemory(const Plan &plan, size_t chunkBytes)
    : chunkBytes_(chunkBytes) {
  std::optional<uint64_t> total = bytesNeeded(plan, chunkBytes);
  if (!total) {
    std::fprintf(stderr,
                 "sdma runtime: error: the host memory of a plan with %d "
                 "ranks at %zu-byte chunks overflows 64 bits\n",
                 plan.ranks, chunkBytes);
    std::abort();
  }
  totalBytes_ = *total;
  data_.resize(plan.ranks);
  flags_.assign(plan.ranks, std::vector<uint64_t>(plan.flags, 0));
  for (auto &rank : data_)
    for (const Buffer &buffer : plan.buffers)
      rank.emplace_back(buffer.bytes(chunkBytes), kPoison);
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

void sdma::rt::fillInputs(const Plan &plan, HostMemory &memory,
                          const CountPattern &counts) {
  if (plan.collective && plan.collective->isReduction())
    return fillReductionInput(plan, memory);
  int input = plan.collective ? plan.collective->input : 0;
  int sendCounts = plan.collective ? plan.collective->sendCounts : -1;
  bool moe =
      plan.collective && plan.collective->kind.rfind("all_to_allv_2d", 0) == 0;
  for (int r = 0; r < plan.ranks; ++r)
    for (int b = 0; b < static_cast<int>(plan.buffers.size()); ++b) {
      uint8_t *bytes = memory.buffer(r, b);
      size_t n = memory.bufferBytes(r, b);
      if (b == sendCounts && moe)
        continue; // fillMoeCounts, below
      if (b == sendCounts) {
        // One int64 per peer.
        for (size_t p = 0; p * 8 + 8 <= n; ++p) {
          int64_t c = counts.count(r, int(p));
          std::memcpy(bytes + p * 8, &c, 8);
        }
        continue;
      }
      for (size_t i = 0; i < n; ++i)
        bytes[i] = b == input ? patternByte(r, b, i) : kPoison;
    }
  if (moe)
    fillMoeCounts(plan, memory, counts);
}

CheckResult sdma::rt::checkOutputs(const Plan &plan, const HostMemory &memory) {
  CheckResult result;
  if (!plan.collective)
    return result;
  const Collective &c = *plan.collective;
  if (c.isReduction())
    return checkReduction(plan, memory);
  if (c.kind == "all_to_allv" || c.kind == "all_to_allv_packed")
    return checkAlltoAllv(plan, memory);
  if (c.kind == "all_to_allv_2d" || c.kind == "all_to_allv_2d_offset")
    return checkMoe(plan, memory);
  size_t chunk = memory.chunkBytes();
  int64_t outChunks = plan.buffers[c.output].chunks;
  int64_t R = plan.ranks;
  int64_t per = c.kind == "all_to_all"                         ? outChunks / R
                : c.kind == "all_gather" || c.kind == "gather" ? outChunks / R
                                                               : outChunks;
  // The loaders check the collective's sizes (as sdma-verify does); a plan
  // built by hand that breaks them, or memory of another layout, is
  // reported as wrong rather than divided by zero or read out of bounds.
  std::string mismatch;
  if (per < 1 || !memory.matches(plan, mismatch)) {
    result.wrongBytes = 1;
    result.firstWrong = per < 1 ? "the collective's output has fewer chunks "
                                  "than the plan has ranks"
                                : mismatch;
    return result;
  }
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
