//===- CommMoe2d.cpp - sdma-comm-test's expert-major all-to-allv cases ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdmaAlltoAllv2d (MoE dispatch into expert-major rows) and its inverse
// sdmaAlltoAllv2dOffset (the combine), checked against an evaluator written
// from torch's definition of all_to_all_vdev_2d, independent of the
// schedules and the kernel. Every rank derives the whole count table from
// one seed, so each checks its own output: every byte (padding rows and
// the rows past the last segment must stay untouched), the splits and the
// offsets. The combine then runs on the dispatch's output with the
// dispatch's out_splits_offsets as its in_splits_offsets, and must give
// back exactly the dispatch's input rows.
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include <algorithm>
#include <random>

using namespace sdma::commtest;

namespace {

/// counts[r][p * E + e]: the rows rank r sends to expert e of rank p.
using Table = std::vector<std::vector<int64_t>>;

/// Each (r, p) pair gets at most `budget` rows, split over the E experts.
Table makeTable(const std::string &shape, int R, int E, int64_t budget,
                unsigned seed) {
  std::mt19937_64 rng(seed);
  Table t(R, std::vector<int64_t>(size_t(R) * E, 0));
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < R; ++p) {
      int64_t left = shape == "capacity" ? budget
                     : shape == "zero"   ? 0
                     : shape == "hot"    ? (p == 1 % R ? budget : 0)
                                         : int64_t(rng() % (budget + 1));
      // Uneven shares; some experts get nothing (torch pads them anyway).
      for (int e = 0; e < E && left; ++e) {
        int64_t n = e + 1 == E ? left : int64_t(rng() % (left + 1));
        if (shape == "capacity" && e + 1 < E)
          n = 0; // one expert takes the whole budget
        t[r][size_t(p) * E + e] = n;
        left -= n;
      }
    }
  return t;
}

int64_t padded(int64_t n, int64_t align) {
  return std::max(align, (n + align - 1) / align * align);
}

struct Case {
  std::string shape;
  int experts;
  int64_t align;
};

/// A pair's buffers: rows sent, dispatched and combined back, and its
/// counts (5 rows of R * E).
struct PairBuffers {
  char *send = nullptr, *mid = nullptr, *back = nullptr;
  int64_t *counts = nullptr;
};

/// A pair sends at most this many rows (`reuse`d buffers: a fixed count,
/// so one capacity fits every call).
int64_t rowBudget(unsigned seed, bool reuse) {
  return reuse ? 4 : 2 + int64_t(seed % 4);
}

/// The capacity of a pair of `budget` rows: the padded output fits R * C.
int64_t capacityOf(int R, const Case &c, int64_t budget) {
  return budget + (c.experts * c.align + R - 1) / R;
}

/// One dispatch and its combine, in `reuse`'s buffers where given (sized
/// for capacityOf(rowBudget(.., true))), else on fresh ones.
void runPair(Rank &k, const Case &c, unsigned seed,
             const PairBuffers *reuse = nullptr) {
  int R = k.ranks, me = k.rank, E = c.experts;
  const size_t rowBytes = 12; // torch's odd row sizes
  int64_t budget = rowBudget(seed, reuse);
  int64_t C = capacityOf(R, c, budget);
  Table t = makeTable(c.shape, R, E, budget, seed);
  size_t bytes = size_t(R) * C * rowBytes;
  size_t n = size_t(R) * E; // entries of one count row
  PairBuffers b;
  if (reuse)
    b = *reuse;
  else {
    b.send = static_cast<char *>(k.alloc(bytes));
    b.mid = static_cast<char *>(k.alloc(bytes));
    b.back = static_cast<char *>(k.alloc(bytes));
    b.counts = static_cast<int64_t *>(k.alloc(5 * n * sizeof(int64_t)));
  }
  char *send = b.send, *mid = b.mid, *back = b.back;
  int64_t *counts = b.counts;
  if (!send || !mid || !back || !counts)
    return;
  int64_t *inSplits = counts, *dispatchOut = counts + n,
          *combineOut = counts + 3 * n;
  k.fill(send, bytes, me, 7);
  k.fill(mid, bytes, me, -1);
  k.fill(back, bytes, me, -1);
  std::vector<int64_t> poison(4 * n, -77);
  k.memory.write(inSplits, t[me].data(), n * sizeof(int64_t));
  k.memory.write(dispatchOut, poison.data(), 4 * n * sizeof(int64_t));
  std::string what = "AlltoAllv2d " + c.shape + " experts " +
                     std::to_string(E) + " align " + std::to_string(c.align);
  k.check(sdmaAlltoAllv2d(send, inSplits, mid, dispatchOut, E, C, c.align,
                          rowBytes, sdmaUint8, k.comm, k.stream),
          "sdmaAlltoAllv2d");
  k.check(sdmaAlltoAllv2dOffset(mid, dispatchOut, back, combineOut, E, C,
                                rowBytes, sdmaUint8, k.comm, k.stream),
          "sdmaAlltoAllv2dOffset");
  k.memory.sync(k.stream);

  // Dispatch: expert-major, every expert padded; splits and offsets.
  std::vector<unsigned char> want(bytes, kUntouched);
  std::vector<int64_t> wantCounts(2 * n);
  int64_t at = 0;
  for (int e = 0; e < E; ++e) {
    int64_t start = at;
    for (int r = 0; r < R; ++r) {
      int64_t from = 0;
      for (int i = 0; i < me * E + e; ++i)
        from += t[r][i];
      int64_t rows = t[r][size_t(me) * E + e];
      for (int64_t i = 0; i < rows; ++i)
        for (size_t b = 0; b < rowBytes; ++b)
          want[(at + i) * rowBytes + b] =
              pattern(r, 7, size_t(from + i) * rowBytes + b);
      wantCounts[size_t(e) * R + r] = rows;
      wantCounts[n + size_t(e) * R + r] = at;
      at += rows;
    }
    at = start + padded(at - start, c.align);
  }
  k.expect(mid, want, what + " dispatch rows");
  std::vector<int64_t> got(4 * n);
  k.memory.read(got.data(), dispatchOut, 4 * n * sizeof(int64_t));
  for (size_t i = 0; i < 2 * n; ++i)
    if (got[i] != wantCounts[i]) {
      std::fprintf(stderr,
                   "rank %d: %s: out_splits_offsets[%zu] is %lld, "
                   "expected %lld\n",
                   me, what.c_str(), i, (long long)got[i],
                   (long long)wantCounts[i]);
      ++k.failures;
      break;
    }

  // Combine: the dispatch's input rows back, packed rank-major.
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[2 * n + i] != t[me][i] || got[3 * n + i] != total) {
      std::fprintf(stderr,
                   "rank %d: %s: combine out_splits_offsets[%zu] is "
                   "(%lld, %lld), expected (%lld, %lld)\n",
                   me, what.c_str(), i, (long long)got[2 * n + i],
                   (long long)got[3 * n + i], (long long)t[me][i],
                   (long long)total);
      ++k.failures;
      break;
    }
    total += t[me][i];
  }
  std::fill(want.begin(), want.end(), kUntouched);
  for (size_t i = 0; i < size_t(total) * rowBytes; ++i)
    want[i] = pattern(me, 7, i);
  k.expect(back, want, what + " combine rows");
  if (reuse)
    return;
  sdmaMemFree(k.comm, counts);
  sdmaMemFree(k.comm, back);
  sdmaMemFree(k.comm, mid);
  sdmaMemFree(k.comm, send);
}

} // namespace

void sdma::commtest::allToAllv2d(Rank &k) {
  std::vector<Case> cases;
  for (const char *shape : {"uniform", "zero", "hot", "capacity"})
    for (int experts : {1, 2, 3, 5})
      for (int64_t align : {1, 4})
        cases.push_back({shape, experts, align});
  unsigned seed = 11;
  for (const Case &c : cases)
    runPair(k, c, seed++);
  // Pairs on one set of buffers, new counts each time: all but the first
  // start as made before (CallReplay.h), the kernels reading counts afresh.
  const int E = 3;
  const int64_t align = 4,
                C = capacityOf(k.ranks, {"", E, align}, rowBudget(0, true));
  const size_t bytes = size_t(k.ranks) * C * 12, n = size_t(k.ranks) * E;
  PairBuffers b{static_cast<char *>(k.alloc(bytes)),
                static_cast<char *>(k.alloc(bytes)),
                static_cast<char *>(k.alloc(bytes)),
                static_cast<int64_t *>(k.alloc(5 * n * sizeof(int64_t)))};
  int repeated = 0;
  for (int round = 0; round < 2; ++round)
    for (const char *shape : {"uniform", "hot", "zero", "capacity"}) {
      runPair(k, {shape, E, align}, seed++, &b);
      ++repeated;
    }
  for (void *p :
       {(void *)b.counts, (void *)b.back, (void *)b.mid, (void *)b.send})
    if (p)
      sdmaMemFree(k.comm, p);
  if (!k.failures)
    std::printf("rank %d of %d: expert-major all-to-allv: dispatch and "
                "combine as the definition says (%zu cases; %d on one set "
                "of buffers)\n",
                k.rank, k.ranks, cases.size(), repeated);
}

int sdma::commtest::allToAllv2dOverflow(Rank &k) {
  // Rank 0 sends expert 0 of rank 1 more rows than the capacity: rank 0
  // reports it naming both ranks, sends nothing in this call (its later
  // rows are no longer where its counts say), every count from it is 0.
  int R = k.ranks, me = k.rank, E = 2;
  int64_t C = 4;
  size_t n = size_t(R) * E, rowBytes = 8, bytes = size_t(R) * C * rowBytes;
  Table t = makeTable("uniform", R, E, 1, 5);
  t[0][size_t(1 % R) * E] = C + 1;
  char *send = static_cast<char *>(k.alloc(bytes));
  char *recv = static_cast<char *>(k.alloc(bytes));
  auto *counts = static_cast<int64_t *>(k.alloc(3 * n * sizeof(int64_t)));
  if (!send || !recv || !counts)
    return 1;
  k.fill(send, bytes, me, 7);
  k.fill(recv, bytes, me, -1);
  k.memory.write(counts, t[me].data(), n * sizeof(int64_t));
  k.check(sdmaAlltoAllv2d(send, counts, recv, counts + n, E, C, 1, rowBytes,
                          sdmaUint8, k.comm, k.stream),
          "sdmaAlltoAllv2d");
  k.memory.sync(k.stream);
  std::vector<int64_t> got(2 * n);
  k.memory.read(got.data(), counts + n, 2 * n * sizeof(int64_t));
  for (int e = 0; e < E; ++e)
    if (got[size_t(e) * R] != 0) {
      std::fprintf(stderr,
                   "rank %d: the count from rank 0 for expert %d is "
                   "%lld, expected 0\n",
                   me, e, (long long)got[size_t(e) * R]);
      ++k.failures;
    }
  sdmaResult_t result = sdmaSuccess;
  sdmaCommGetAsyncError(k.comm, &result);
  if (me == 0 &&
      expectFailure(k, result,
                    ("rank 0 (all_to_allv_2d) was to send " +
                     std::to_string(C + 1) + " rows to rank " +
                     std::to_string(1 % R) +
                     ", more than the capacity: it sent nothing in this call")
                        .c_str()))
    ++k.failures;
  if (!k.failures)
    std::printf("rank %d: expert-major count reported, nothing sent from "
                "rank 0\n",
                me);
  return k.failures ? 1 : 0;
}

int sdma::commtest::allToAllv2dBadOffset(Rank &k, bool overCapacity) {
  // The combine with an offset the caller gave that puts rank 0's segment
  // for rank 1 past the end of its input: reported naming both ranks,
  // nothing written for it; the other segments arrive. The combine pulls,
  // so rank 1, which issues that copy, finds it and reports it.
  // `overCapacity`: rank 0 returns rank 1 more rows than the capacity
  // instead. Rank 0 holds that count and checks it (whoever issues the
  // copy) and reports it; rank 1's receive count from it is 0.
  int R = k.ranks, me = k.rank, E = 2;
  int64_t C = 2;
  size_t n = size_t(R) * E, rowBytes = 8, bytes = size_t(R) * C * rowBytes;
  char *send = static_cast<char *>(k.alloc(bytes));
  char *recv = static_cast<char *>(k.alloc(bytes));
  auto *counts = static_cast<int64_t *>(k.alloc(4 * n * sizeof(int64_t)));
  if (!send || !recv || !counts)
    return 1;
  k.fill(send, bytes, me, 7);
  k.fill(recv, bytes, me, -1);
  // Every expert rank returns one row of expert 1 to every token rank r,
  // row r of its input; rank 0's row for rank 1 is said to be at R * C.
  // Expert 0 returns nothing: its offsets (-1 here) are never used.
  std::vector<int64_t> table(2 * n, 0);
  for (int r = 0; r < R; ++r) {
    bool bad = me == 0 && r == 1 % R;
    table[size_t(R) + r] = bad && overCapacity ? C + 1 : 1;
    table[n + size_t(R) + r] = bad && !overCapacity ? R * C : r;
    table[n + r] = -1;
  }
  k.memory.write(counts, table.data(), 2 * n * sizeof(int64_t));
  k.check(sdmaAlltoAllv2dOffset(send, counts, recv, counts + 2 * n, E, C,
                                rowBytes, sdmaUint8, k.comm, k.stream),
          "sdmaAlltoAllv2dOffset");
  k.memory.sync(k.stream);
  // Row p of mine (packed rank-major: one row per expert rank) is row
  // `me` of p's input, except rank 0's when I am rank 1: a hole where its
  // offset was bad, none where its count was (its count became 0, so the
  // later rows pack one row earlier).
  std::vector<unsigned char> want(bytes, kUntouched);
  bool skipped = me == 1 % R;
  for (int p = 0; p < R; ++p) {
    if (p == 0 && skipped)
      continue;
    size_t at = p - (overCapacity && skipped ? 1 : 0);
    for (size_t b = 0; b < rowBytes; ++b)
      want[at * rowBytes + b] = pattern(p, 7, me * rowBytes + b);
  }
  k.expect(recv, want,
           overCapacity ? "AlltoAllv2dOffset with a count over capacity"
                        : "AlltoAllv2dOffset with an offset past the end");
  std::vector<int64_t> splits(n);
  k.memory.read(splits.data(), counts + 2 * n, n * sizeof(int64_t));
  for (int p = 0; p < R; ++p) {
    int64_t expected = p == 0 && me == 1 % R && overCapacity ? 0 : 1;
    if (splits[size_t(p) * E + 1] != expected) {
      std::fprintf(stderr,
                   "rank %d: %lld rows from expert 1 of rank %d, expected "
                   "%lld\n",
                   me, (long long)splits[size_t(p) * E + 1], p,
                   (long long)expected);
      ++k.failures;
    }
  }
  sdmaResult_t result = sdmaSuccess;
  sdmaCommGetAsyncError(k.comm, &result);
  std::string what =
      "rank 0 (all_to_allv_2d_offset) was to send " +
      std::to_string(overCapacity ? C + 1 : 1) + " rows to rank " +
      std::to_string(1 % R) +
      (overCapacity ? ", more than the capacity: nothing was sent for it "
                      "(its receive count is 0)"
                    : ", past the end of its buffer");
  if (me == (overCapacity ? 0 : 1 % R) &&
      expectFailure(k, result, what.c_str()))
    ++k.failures;
  if (!k.failures)
    std::printf("rank %d: %s reported, the other rows arrived\n", me,
                overCapacity ? "a combine count over capacity"
                             : "an offset past the end");
  return k.failures ? 1 : 0;
}
