//===- LowLatency.cpp - the low-latency (flag-in-data) tables -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "LowLatency.h"

#include <algorithm>
#include <initializer_list>
#include <map>

using namespace sdma::hip;

namespace {
/// Rows per rank, laid out into one table and its begin offsets.
struct PerRank {
  explicit PerRank(int64_t ranks) : rows(ranks) {}
  void add(int64_t rank, std::initializer_list<int64_t> row) {
    rows[rank].insert(rows[rank].end(), row);
  }
  void layout(std::vector<int64_t> &table, std::vector<int> &begin,
              int stride) const {
    begin.push_back(0);
    for (const std::vector<int64_t> &r : rows) {
      table.insert(table.end(), r.begin(), r.end());
      begin.push_back(int(table.size() / stride));
    }
  }
  std::vector<std::vector<int64_t>> rows;
};
} // namespace

std::optional<LowLatencyTables>
sdma::hip::planLowLatency(int64_t ranks,
                          const std::vector<std::vector<Step>> &steps,
                          const std::vector<int64_t> &ops,
                          const std::vector<int64_t> &rsrc, std::string &why) {
  PerRank push(ranks), local(ranks), recv(ranks), reduce(ranks);
  LowLatencyTables t;
  // Chunks pushed so far per (sender, receiver): the next push's offset.
  std::map<std::pair<int64_t, int64_t>, int64_t> sent;
  auto pushTo = [&](int64_t from, int64_t buffer, int64_t offset,
                    int64_t chunks, int64_t to) {
    int64_t &at = sent[{from, to}];
    push.add(from, {buffer, offset, chunks, to, at});
    int64_t start = at;
    at += chunks;
    t.pairChunks = std::max(t.pairChunks, at);
    return start;
  };
  auto refuse = [&](int64_t r, const std::string &what) {
    why = "rank " + std::to_string(r) + " " + what;
    return std::nullopt;
  };
  for (int64_t r = 0; r < ranks; ++r) {
    if (steps[r].empty())
      continue;
    if (steps[r].size() != 1 || steps[r][0].kind != kPhase)
      return refuse(r, "has " + std::to_string(steps[r].size()) +
                           " steps (one phase only)");
    const Step &phase = steps[r][0];
    for (int i = phase.a; i < phase.a + phase.b; ++i) {
      const int64_t *row = &ops[size_t(i) * kOpStride];
      if (row[0] == 4) {
        // A reduction into the rank's own memory: its sources in place or
        // pushed by their ranks.
        if (row[1] != r)
          return refuse(r, "reduces into another rank's memory");
        if (row[10] != 0)
          return refuse(r, "stores a reduction to more than one place");
        int64_t first =
            int64_t(t.reduceSources.size()) / kLowLatencySourceStride;
        for (int64_t s = 0; s < row[8]; ++s) {
          const int64_t *src = &rsrc[size_t(row[7] + s) * 3];
          int64_t at =
              src[0] == r ? -1 : pushTo(src[0], src[1], src[2], row[4], r);
          t.reduceSources.insert(t.reduceSources.end(),
                                 {src[0], src[1], src[2], at});
        }
        reduce.add(r, {row[2], row[3], row[4], row[9], row[8], first});
        continue;
      }
      if ((row[0] != 0 && row[0] != 1) || row[11] != 0 || row[1] != r)
        return refuse(r, "has an op that is not a copy or broadcast of its "
                         "own chunks, nor a reduction");
      for (int j = 0; j < (row[0] == 1 ? 2 : 1); ++j) {
        const int64_t *dst = row + 5 + 3 * j;
        if (dst[0] == r) {
          local.add(r, {row[2], row[3], row[4], dst[1], dst[2]});
          continue;
        }
        int64_t at = pushTo(r, row[2], row[3], row[4], dst[0]);
        recv.add(dst[0], {r, dst[1], dst[2], row[4], at});
      }
    }
  }
  push.layout(t.push, t.pushBegin, kLowLatencyPushStride);
  local.layout(t.local, t.localBegin, kLowLatencyLocalStride);
  recv.layout(t.recv, t.recvBegin, kLowLatencyRecvStride);
  reduce.layout(t.reduce, t.reduceBegin, kLowLatencyReduceStride);
  return t;
}
