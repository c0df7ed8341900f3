//===- LowLatency.cpp - the low-latency (flag-in-data) tables -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "LowLatency.h"

#include <algorithm>
#include <map>

using namespace sdma::hip;

std::optional<LowLatencyTables>
sdma::hip::planLowLatency(int64_t ranks,
                          const std::vector<std::vector<Step>> &steps,
                          const std::vector<int64_t> &ops, std::string &why) {
  LowLatencyTables t;
  t.send.assign(ops.size() / kOpStride * 2, -1);
  // Per receiver, its rows in (sender, op) order.
  std::vector<std::vector<int64_t>> recv(ranks);
  // Chunks sent so far per (sender, receiver).
  std::map<std::pair<int64_t, int64_t>, int64_t> sent;
  for (int64_t r = 0; r < ranks; ++r) {
    if (steps[r].empty())
      continue;
    if (steps[r].size() != 1 || steps[r][0].kind != kPhase) {
      why = "rank " + std::to_string(r) + " has " +
            std::to_string(steps[r].size()) +
            " steps (one phase of copies only)";
      return std::nullopt;
    }
    const Step &phase = steps[r][0];
    for (int i = phase.a; i < phase.a + phase.b; ++i) {
      const int64_t *row = &ops[size_t(i) * kOpStride];
      if ((row[0] != 0 && row[0] != 1) || row[11] != 0 || row[1] != r) {
        why = "rank " + std::to_string(r) +
              " has an op that is not a copy or broadcast of its own chunks";
        return std::nullopt;
      }
      for (int j = 0; j < (row[0] == 1 ? 2 : 1); ++j) {
        const int64_t *dst = row + 5 + 3 * j;
        if (dst[0] == r)
          continue;
        int64_t &at = sent[{r, dst[0]}];
        t.send[size_t(i) * 2 + j] = at;
        for (int64_t v : {r, dst[1], dst[2], row[4], at})
          recv[dst[0]].push_back(v);
        at += row[4];
        t.pairChunks = std::max(t.pairChunks, at);
      }
    }
  }
  t.recvBegin.push_back(0);
  for (int64_t r = 0; r < ranks; ++r) {
    t.recv.insert(t.recv.end(), recv[r].begin(), recv[r].end());
    t.recvBegin.push_back(int(t.recv.size() / kLowLatencyRecvStride));
  }
  return t;
}
