//===- RaceCheck.h - races in an algorithm's own order ----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// An imported algorithm is checked for races in its own partial order (a
// thread block's steps in order, its dependencies, a message after its
// send, a wait after its signal) before it becomes a schedule: sdma's
// waits and fences order a whole rank, more than MSCCL's order one thread
// block, so a race between thread blocks could vanish in the schedule.
// Two accesses of the same chunks of one rank's buffer, one writing, race
// unless one step comes before the other in that order.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_MSCCL_RACECHECK_H
#define SDMA_LIB_TARGET_MSCCL_RACECHECK_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sdma::msccl {

/// A step's access to chunks [lo, hi) of `buffer` (after in-place folding)
/// on `rank`.
template <typename Node> struct Access {
  Node node;
  int rank = 0;
  std::string buffer;
  int64_t lo = 0, hi = 0;
  bool write = false;
};

/// The first pair of accesses that race, given the nodes in a topological
/// `order` and their predecessors; nothing if none does.
template <typename Node>
std::optional<std::pair<Access<Node>, Access<Node>>>
findRace(const std::vector<Node> &order,
         std::map<Node, std::vector<Node>> &pred,
         const std::vector<Access<Node>> &accesses) {
  // Every node's ancestors, as a bitset over its index in `order`.
  std::map<Node, size_t> index;
  for (size_t i = 0; i < order.size(); ++i)
    index[order[i]] = i;
  size_t words = (order.size() + 63) / 64;
  std::vector<std::vector<uint64_t>> before(order.size(),
                                            std::vector<uint64_t>(words, 0));
  for (size_t i = 0; i < order.size(); ++i)
    for (const Node &p : pred[order[i]]) {
      size_t j = index[p];
      for (size_t w = 0; w < words; ++w)
        before[i][w] |= before[j][w];
      before[i][j / 64] |= uint64_t(1) << (j % 64);
    }
  auto ordered = [&](const Node &a, const Node &b) {
    size_t i = index[a], j = index[b];
    return i == j || (before[j][i / 64] >> (i % 64) & 1) ||
           (before[i][j / 64] >> (j % 64) & 1);
  };
  // Accesses by (rank, buffer): only those can overlap.
  std::map<std::pair<int, std::string>, std::vector<const Access<Node> *>>
      byBuffer;
  for (const Access<Node> &a : accesses)
    byBuffer[{a.rank, a.buffer}].push_back(&a);
  for (auto &[key, list] : byBuffer)
    for (size_t x = 0; x < list.size(); ++x)
      for (size_t y = x + 1; y < list.size(); ++y) {
        const Access<Node> &a = *list[x], &b = *list[y];
        if ((a.write || b.write) && a.lo < b.hi && b.lo < a.hi &&
            !ordered(a.node, b.node))
          return std::make_pair(a, b);
      }
  return std::nullopt;
}

} // namespace sdma::msccl

#endif // SDMA_LIB_TARGET_MSCCL_RACECHECK_H
