//===- MoeCheck.cpp - the MoE all-to-allv pair's counts and check ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-run's counts for all_to_allv_2d (dispatch into expert-major rows,
// each expert's segment padded to a multiple of A rows, at least A) and
// all_to_allv_2d_offset (the combine, packed rank-major), and the check of
// their outputs, written from torch's definition of all_to_all_vdev_2d and
// its _offset, not from the schedules. A row is a chunk here.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <algorithm>
#include <cstring>
#include <sstream>

using namespace sdma::rt;

namespace {

using Table = std::vector<std::vector<int64_t>>;

int64_t padRows(int64_t n, int64_t align) {
  return std::max(align, (n + align - 1) / align * align);
}

/// Where each segment (e, r) of receiver p's expert-major output starts,
/// [e * R + r], and the rows the layout spans.
std::vector<int64_t> expertMajor(const Table &t, int p, int E, int64_t align,
                                 int64_t &end) {
  int R = static_cast<int>(t.size());
  std::vector<int64_t> at(size_t(E) * R);
  end = 0;
  for (int e = 0; e < E; ++e) {
    int64_t start = end;
    for (int r = 0; r < R; ++r) {
      at[size_t(e) * R + r] = end;
      end += t[r][size_t(p) * E + e];
    }
    end = start + padRows(end - start, align);
  }
  return at;
}

int64_t entry(const HostMemory &memory, int rank, int buffer, size_t index) {
  int64_t v = 0;
  std::memcpy(&v, memory.buffer(rank, buffer) + index * 8, 8);
  return v;
}

void putEntry(HostMemory &memory, int rank, int buffer, size_t index,
              int64_t v) {
  std::memcpy(memory.buffer(rank, buffer) + index * 8, &v, 8);
}

} // namespace

Table sdma::rt::moeCounts(const Plan &plan, const CountPattern &counts,
                          std::string *why) {
  const Collective &c = *plan.collective;
  int R = plan.ranks, E = c.experts;
  int64_t rows = plan.buffers[c.output].chunks;
  if (int64_t(E) * c.majorAlign > rows) {
    if (why)
      *why = std::to_string(E) + " experts padded to " +
             std::to_string(c.majorAlign) + " rows need " +
             std::to_string(int64_t(E) * c.majorAlign) +
             " rows even when empty, and a row is a chunk here: the output "
             "has " +
             std::to_string(rows);
    return {};
  }
  Table t(R, std::vector<int64_t>(size_t(R) * E, 0));
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < R; ++p)
      t[r][size_t(p) * E + (r + p) % E] = counts.count(r, p) ? 1 : 0;
  // Thin each receiver's senders, the last first, until its layout fits.
  for (int p = 0; p < R; ++p)
    for (int r = R - 1; r >= 0; --r) {
      int64_t end = 0;
      expertMajor(t, p, E, c.majorAlign, end);
      if (end <= rows)
        break;
      t[r][size_t(p) * E + (r + p) % E] = 0;
    }
  return t;
}

void sdma::rt::fillMoeCounts(const Plan &plan, HostMemory &memory,
                             const CountPattern &counts) {
  const Collective &c = *plan.collective;
  Table t = moeCounts(plan, counts);
  int R = plan.ranks, E = c.experts;
  if (t.empty())
    return; // the run fails on its count error; sdma-run refuses before
  for (int p = 0; p < R; ++p) {
    if (c.kind == "all_to_allv_2d") {
      for (size_t i = 0; i < size_t(R) * E; ++i)
        putEntry(memory, p, c.sendCounts, i, t[p][i]);
      continue;
    }
    // The combine's expert rank p: the splits it returns and where they
    // are in its input (the dispatch's layout of the same rows).
    int64_t end = 0;
    std::vector<int64_t> at = expertMajor(t, p, E, c.majorAlign, end);
    for (int e = 0; e < E; ++e)
      for (int r = 0; r < R; ++r) {
        size_t j = size_t(e) * R + r;
        putEntry(memory, p, c.sendCounts, j, t[r][size_t(p) * E + e]);
        putEntry(memory, p, c.sendCounts, size_t(E) * R + j, at[j]);
      }
  }
}

CheckResult sdma::rt::checkMoe(const Plan &plan, const HostMemory &memory) {
  CheckResult result;
  const Collective &c = *plan.collective;
  int R = plan.ranks, E = c.experts;
  size_t chunk = memory.chunkBytes();
  int64_t outRows = plan.buffers[c.output].chunks;
  bool dispatch = c.kind == "all_to_allv_2d";
  auto wrong = [&](const std::string &what) {
    if (result.wrongBytes++ == 0)
      result.firstWrong = what;
  };
  std::string mismatch;
  if (!memory.matches(plan, mismatch)) {
    result.wrongBytes = 1;
    result.firstWrong = mismatch;
    return result;
  }
  // t[r][p * E + e]: the rows rank r sends to expert e of rank p.
  Table t(R, std::vector<int64_t>(size_t(R) * E));
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < R; ++p)
      for (int e = 0; e < E; ++e)
        t[r][size_t(p) * E + e] =
            dispatch ? entry(memory, r, c.sendCounts, size_t(p) * E + e)
                     : entry(memory, p, c.sendCounts, size_t(e) * R + r);
  for (int me = 0; me < R; ++me) {
    const uint8_t *out = memory.buffer(me, c.output);
    std::vector<bool> written(outRows, false);
    // One segment: `n` rows of `from`'s input at `src` to `dst` of mine,
    // counted in my receive table at `recvIndex`.
    auto segment = [&](int from, int64_t src, int64_t dst, int64_t n,
                       size_t recvIndex) {
      int64_t got = entry(memory, me, c.recvCounts, recvIndex);
      if (got != n)
        wrong("rank " + std::to_string(me) + "'s receive count [" +
              std::to_string(recvIndex) + "] is " + std::to_string(got) +
              ", rank " + std::to_string(from) + " sent " + std::to_string(n));
      for (int64_t row = 0; row < n && dst + row < outRows; ++row) {
        written[dst + row] = true;
        for (size_t byte = 0; byte < chunk; ++byte) {
          uint8_t expected =
              patternByte(from, c.input, (src + row) * chunk + byte);
          uint8_t actual = out[(dst + row) * chunk + byte];
          ++result.checkedBytes;
          if (actual == expected)
            continue;
          std::ostringstream os;
          os << "rank " << me << ", " << plan.buffers[c.output].name << " row "
             << dst + row << " byte " << byte << ": 0x" << std::hex
             << int(actual) << ", expected 0x" << int(expected) << std::dec
             << " (row " << src + row << " of rank " << from << "'s "
             << plan.buffers[c.input].name << ")";
          wrong(os.str());
        }
      }
    };
    if (dispatch) {
      int64_t end = 0;
      std::vector<int64_t> at = expertMajor(t, me, E, c.majorAlign, end);
      for (int e = 0; e < E; ++e)
        for (int r = 0; r < R; ++r) {
          int64_t src = 0;
          for (size_t i = 0; i < size_t(me) * E + e; ++i)
            src += t[r][i];
          segment(r, src, at[size_t(e) * R + r], t[r][size_t(me) * E + e],
                  size_t(e) * R + r);
        }
    } else {
      int64_t dst = 0;
      for (int p = 0; p < R; ++p)
        for (int e = 0; e < E; ++e) {
          size_t j = size_t(e) * R + me;
          int64_t n = entry(memory, p, c.sendCounts, j);
          int64_t src = entry(memory, p, c.sendCounts, size_t(E) * R + j);
          segment(p, src, dst, n, size_t(p) * E + e);
          dst += n;
        }
    }
    // Rows no segment covers (padding included) are untouched.
    for (int64_t row = 0; row < outRows; ++row)
      for (size_t byte = 0; !written[row] && byte < chunk; ++byte) {
        ++result.checkedBytes;
        if (out[row * chunk + byte] != kPoison)
          wrong("rank " + std::to_string(me) + ", " +
                plan.buffers[c.output].name + " row " + std::to_string(row) +
                " was written, but no segment lies there");
      }
  }
  return result;
}
