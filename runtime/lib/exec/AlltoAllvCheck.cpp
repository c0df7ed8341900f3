//===- AlltoAllvCheck.cpp - an all-to-allv's outputs, row by row ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The counts an all-to-allv's send tables get (CountPattern) and the check
// of its outputs against them. Here a row is a chunk (what sdma-run's
// executors use: SdmaTable::rowBytes 0).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <cstring>
#include <sstream>

using namespace sdma::rt;

bool CountPattern::known(const std::string &shape) {
  return shape == "uniform" || shape == "zeros" || shape == "skewed" ||
         shape == "random";
}

int64_t CountPattern::count(int from, int to) const {
  if (shape == "zeros")
    return 0;
  if (shape == "skewed")
    return to == 0 ? 1 : 0;
  if (shape == "random") { // splitmix64 of (seed, from, to); its top bit
    uint64_t x = seed * 0x9e3779b97f4a7c15ull +
                 (uint64_t(uint32_t(from)) << 32 | uint32_t(to));
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return int64_t((x ^ (x >> 31)) >> 63);
  }
  return 1; // uniform: every pair at the bound
}

namespace {

int64_t tableEntry(const HostMemory &memory, int rank, int buffer, int index) {
  int64_t v = 0;
  std::memcpy(&v, memory.buffer(rank, buffer) + size_t(index) * 8, 8);
  return v;
}

} // namespace

CheckResult sdma::rt::checkAlltoAllv(const Plan &plan,
                                     const HostMemory &memory) {
  CheckResult result;
  const Collective &c = *plan.collective;
  int R = plan.ranks;
  size_t chunk = memory.chunkBytes();
  bool packed = c.kind == "all_to_allv_packed";
  int64_t outRows = plan.buffers[c.output].chunks;
  auto wrong = [&](const std::string &what) {
    if (result.wrongBytes++ == 0)
      result.firstWrong = what;
  };
  std::string mismatch;
  if (c.sendCounts < 0 || !memory.matches(plan, mismatch)) {
    result.wrongBytes = 1;
    result.firstWrong =
        c.sendCounts < 0 ? "the all-to-allv has no send-count table" : mismatch;
    return result;
  }
  for (int r = 0; r < R; ++r) {
    const uint8_t *out = memory.buffer(r, c.output);
    // Which output rows hold data, and whose.
    std::vector<bool> written(outRows, false);
    int64_t at = 0; // packed: where the rows from the next sender land
    for (int p = 0; p < R; ++p) {
      int64_t n = tableEntry(memory, p, c.sendCounts, r);
      // Where p's rows for r start in p's input, and land in r's output.
      int64_t from = r, to = p;
      if (packed) {
        from = 0;
        for (int q = 0; q < r; ++q)
          from += tableEntry(memory, p, c.sendCounts, q);
        to = at;
        at += n;
      }
      if (c.recvCounts >= 0 && tableEntry(memory, r, c.recvCounts, p) != n)
        wrong("rank " + std::to_string(r) + "'s receive count from rank " +
              std::to_string(p) + " is " +
              std::to_string(tableEntry(memory, r, c.recvCounts, p)) +
              ", rank " + std::to_string(p) + " sent " + std::to_string(n));
      for (int64_t row = 0; row < n && to + row < outRows; ++row) {
        written[to + row] = true;
        for (size_t byte = 0; byte < chunk; ++byte) {
          uint8_t expected =
              patternByte(p, c.input, (from + row) * chunk + byte);
          uint8_t actual = out[(to + row) * chunk + byte];
          ++result.checkedBytes;
          if (actual == expected)
            continue;
          std::ostringstream os;
          os << "rank " << r << ", " << plan.buffers[c.output].name << " row "
             << to + row << " byte " << byte << ": 0x" << std::hex
             << int(actual) << ", expected 0x" << int(expected) << std::dec
             << " (row " << from + row << " of rank " << p << "'s "
             << plan.buffers[c.input].name << ")";
          wrong(os.str());
        }
      }
    }
    // Rows past what arrived are untouched.
    for (int64_t row = 0; row < outRows; ++row)
      for (size_t byte = 0; !written[row] && byte < chunk; ++byte) {
        ++result.checkedBytes;
        if (out[row * chunk + byte] != kPoison)
          wrong("rank " + std::to_string(r) + ", " +
                plan.buffers[c.output].name + " row " + std::to_string(row) +
                " was written, but no rank sent a row there");
      }
  }
  return result;
}
