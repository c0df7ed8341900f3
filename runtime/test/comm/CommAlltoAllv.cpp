//===- CommAlltoAllv.cpp - sdma-comm-test's all-to-allv cases -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every rank derives the whole count matrix from one seed, so each checks
// its receive buffer and counts against the all_to_allv specification
// itself (an evaluator written from the definition, independent of the
// schedules and the kernel): every byte of the receive buffer, the rows
// that arrive and the ones that must stay untouched.
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace sdma::commtest;

namespace {

/// counts[r][p]: the rows rank r sends rank p.
using Matrix = std::vector<std::vector<int64_t>>;

Matrix makeCounts(const std::string &shape, int R, int64_t C, unsigned seed) {
  std::mt19937_64 rng(seed);
  Matrix m(R, std::vector<int64_t>(R, 0));
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < R; ++p) {
      if (shape == "uniform")
        m[r][p] = static_cast<int64_t>(rng() % (C + 1));
      else if (shape == "zipf") // peer p gets ~C / (p + 1)^1.2, jittered
        m[r][p] = std::min<int64_t>(
            C, static_cast<int64_t>(C / std::pow(p + 1.0, 1.2) *
                                    (0.5 + (rng() % 1000) / 1000.0)));
      else if (shape == "hot") // every rank sends rank 1 % R a full slot
        m[r][p] = p == 1 % R ? C : static_cast<int64_t>(rng() % 2);
      else if (shape == "capacity")
        m[r][p] = C;
      // "zero": nothing at all
    }
  return m;
}

/// Byte `b` of row `row` that rank r sends (slot or packed position).
unsigned char rowByte(int r, int64_t row, size_t b, size_t rowBytes) {
  return pattern(r, 7, size_t(row) * rowBytes + b);
}

/// A call's buffers: rows to send, rows received, and the send then
/// receive counts.
struct Buffers {
  char *send = nullptr, *recv = nullptr;
  int64_t *counts = nullptr;
};

/// One call: fills, runs, and checks against the specification; in
/// `reuse`'s buffers where given, else in its own.
void runOnce(Rank &k, const Matrix &m, int64_t C, size_t rowElems,
             sdmaDataType_t type, size_t elemBytes,
             sdmaAlltoAllvLayout_t layout, const std::string &what,
             const Buffers *reuse = nullptr) {
  int R = k.ranks, me = k.rank;
  size_t rowBytes = rowElems * elemBytes, bytes = R * C * rowBytes;
  bool packed = layout == sdmaAlltoAllvPacked;
  Buffers own;
  if (!reuse) {
    own.send = static_cast<char *>(k.alloc(bytes));
    own.recv = static_cast<char *>(k.alloc(bytes));
    own.counts = static_cast<int64_t *>(k.alloc(2 * R * sizeof(int64_t)));
  }
  char *send = reuse ? reuse->send : own.send;
  char *recv = reuse ? reuse->recv : own.recv;
  int64_t *counts = reuse ? reuse->counts : own.counts;
  if (!send || !recv || !counts)
    return;
  k.fill(send, bytes, me, 7);
  k.fill(recv, bytes, me, -1);
  std::vector<int64_t> mine(m[me]), poison(R, -77);
  k.memory.write(counts, mine.data(), R * sizeof(int64_t));
  k.memory.write(counts + R, poison.data(), R * sizeof(int64_t));
  k.check(sdmaAlltoAllv(send, counts, recv, counts + R, C, rowElems, type,
                        layout, k.comm, k.stream),
          "sdmaAlltoAllv");
  k.memory.sync(k.stream);
  // The specification: rows from r land in slot r (or after what ranks
  // before r sent); they are rows p*C.. (or after r's counts before me) of r.
  std::vector<unsigned char> want(bytes, kUntouched);
  int64_t at = 0;
  for (int r = 0; r < R; ++r) {
    int64_t from = packed ? 0 : int64_t(me) * C;
    if (packed)
      for (int q = 0; q < me; ++q)
        from += m[r][q];
    int64_t to = packed ? at : int64_t(r) * C;
    for (int64_t i = 0; i < m[r][me]; ++i)
      for (size_t b = 0; b < rowBytes; ++b)
        want[(to + i) * rowBytes + b] = rowByte(r, from + i, b, rowBytes);
    at += m[r][me];
  }
  k.expect(recv, want, what + " rows");
  std::vector<int64_t> got(R);
  k.memory.read(got.data(), counts + R, R * sizeof(int64_t));
  for (int r = 0; r < R; ++r)
    if (got[r] != m[r][me]) {
      std::fprintf(stderr,
                   "rank %d: %s: recvcounts[%d] is %lld, expected %lld\n", me,
                   what.c_str(), r, (long long)got[r], (long long)m[r][me]);
      ++k.failures;
      break;
    }
  if (reuse)
    return;
  sdmaMemFree(k.comm, counts);
  sdmaMemFree(k.comm, recv);
  sdmaMemFree(k.comm, send);
}

/// Calls on the same buffers, new counts each time: all but the first of
/// a layout start as made before (CallReplay.h), the kernel reading the
/// counts afresh.
void repeated(Rank &k, unsigned &seed) {
  const char *shapes[] = {"uniform", "hot", "zero", "capacity", "zipf"};
  const int64_t C = 6;
  const size_t rowElems = 5, bytes = k.ranks * C * rowElems * 4;
  Buffers b;
  b.send = static_cast<char *>(k.alloc(bytes));
  b.recv = static_cast<char *>(k.alloc(bytes));
  b.counts = static_cast<int64_t *>(k.alloc(2 * k.ranks * sizeof(int64_t)));
  for (int round = 0; round < 2; ++round)
    for (sdmaAlltoAllvLayout_t layout :
         {sdmaAlltoAllvSlots, sdmaAlltoAllvPacked})
      for (const char *shape : shapes)
        runOnce(k, makeCounts(shape, k.ranks, C, seed++), C, rowElems,
                sdmaFloat32, 4, layout,
                std::string("AlltoAllv repeated on one set of buffers, ") +
                    (layout == sdmaAlltoAllvPacked ? "packed " : "slots ") +
                    shape + " round " + std::to_string(round),
                &b);
  for (void *p : {(void *)b.counts, (void *)b.recv, (void *)b.send})
    if (p)
      sdmaMemFree(k.comm, p);
}

} // namespace

void sdma::commtest::allToAllv(Rank &k) {
  const char *shapes[] = {"uniform", "zipf", "zero", "hot", "capacity"};
  struct Row {
    size_t elems;
    sdmaDataType_t type;
    size_t bytes;
  } rows[] = {{8, sdmaBfloat16, 2}, {5, sdmaFloat32, 4}, {3, sdmaUint8, 1}};
  unsigned seed = 1;
  for (int round = 0; round < 2; ++round)
    for (sdmaAlltoAllvLayout_t layout :
         {sdmaAlltoAllvSlots, sdmaAlltoAllvPacked})
      for (const char *shape : shapes)
        for (const Row &row : rows) {
          int64_t C = 3 + int64_t(seed % 5);
          Matrix m = makeCounts(shape, k.ranks, C, seed++);
          runOnce(k, m, C, row.elems, row.type, row.bytes, layout,
                  std::string("AlltoAllv ") +
                      (layout == sdmaAlltoAllvPacked ? "packed " : "slots ") +
                      shape + " capacity " + std::to_string(C) + " row " +
                      std::to_string(row.elems * row.bytes) + " round " +
                      std::to_string(round));
        }
  repeated(k, seed);
  if (!k.failures)
    std::printf("rank %d of %d: all-to-allv: every byte as the specification "
                "says (5 count shapes x 2 layouts x 3 row sizes x 2 rounds; "
                "20 calls on one set of buffers)\n",
                k.rank, k.ranks);
}

int sdma::commtest::allToAllvOverflow(Rank &k, const Args &args) {
  // Rank 0 sends rank 1 a bad count (--bad=over: capacity + 1, negative:
  // -3, huge: 2^51, whose byte size wraps 64 bits): reported on rank 0 with
  // both ranks named, never an overwrite. Slots: nothing lands in rank 1's
  // slot 0 and its receive count from rank 0 is 0; the rest arrives.
  // Packed: rank 0's later rows are no longer where its counts say, so it
  // sends nothing; every receive count from it is 0 and the others' rows
  // land at offsets computed without it.
  int64_t C = 4;
  int R = k.ranks, me = k.rank;
  bool packed = args.layout == "packed";
  Matrix m = makeCounts("uniform", R, C, 99);
  int64_t bad = args.bad == "negative" ? -3
                : args.bad == "huge"   ? int64_t(1) << 51
                                       : C + 1;
  m[0][1 % R] = bad;
  Matrix sent = m; // what the specification says arrives
  for (int p = 0; p < R; ++p)
    if (p == 1 % R || packed)
      sent[0][p] = 0;
  size_t rowBytes = 16, bytes = R * C * rowBytes;
  char *send = static_cast<char *>(k.alloc(bytes));
  char *recv = static_cast<char *>(k.alloc(bytes));
  auto *counts = static_cast<int64_t *>(k.alloc(2 * R * sizeof(int64_t)));
  if (!send || !recv || !counts)
    return 1;
  k.fill(send, bytes, me, 7);
  k.fill(recv, bytes, me, -1);
  std::vector<int64_t> poison(R, -77);
  k.memory.write(counts, m[me].data(), R * sizeof(int64_t));
  k.memory.write(counts + R, poison.data(), R * sizeof(int64_t));
  k.check(sdmaAlltoAllv(send, counts, recv, counts + R, C, 16, sdmaUint8,
                        packed ? sdmaAlltoAllvPacked : sdmaAlltoAllvSlots,
                        k.comm, k.stream),
          "sdmaAlltoAllv");
  k.memory.sync(k.stream);
  std::vector<unsigned char> want(bytes, kUntouched);
  int64_t at = 0;
  for (int r = 0; r < R; ++r) {
    int64_t from = packed ? 0 : int64_t(me) * C;
    for (int q = 0; packed && q < me; ++q)
      from += m[r][q];
    int64_t to = packed ? at : int64_t(r) * C;
    for (int64_t i = 0; i < sent[r][me]; ++i)
      for (size_t b = 0; b < rowBytes; ++b)
        want[(to + i) * rowBytes + b] = rowByte(r, from + i, b, rowBytes);
    at += sent[r][me];
  }
  k.expect(recv, want, "AlltoAllv with a bad count");
  std::vector<int64_t> got(R);
  k.memory.read(got.data(), counts + R, R * sizeof(int64_t));
  for (int r = 0; r < R; ++r)
    if (got[r] != sent[r][me]) {
      std::fprintf(stderr, "rank %d: recvcounts[%d] is %lld, expected %lld\n",
                   me, r, (long long)got[r], (long long)sent[r][me]);
      ++k.failures;
      break;
    }
  sdmaResult_t result = sdmaSuccess;
  sdmaCommGetAsyncError(k.comm, &result);
  if (me == 0) {
    std::string expect =
        "rank 0 (all_to_allv_" + std::string(packed ? "packed" : "slots") +
        ") was to send " + std::to_string(bad) + " rows to rank " +
        std::to_string(1 % R) + ", " +
        (bad < 0 ? "a negative count" : "more than the capacity");
    if (expectFailure(k, result, expect.c_str()))
      ++k.failures;
  } else if (result != sdmaSuccess) {
    std::fprintf(stderr, "rank %d: unexpected error: %s\n", me,
                 sdmaGetLastError(k.comm));
    ++k.failures;
  }
  if (!k.failures)
    std::printf("rank %d: %s count (%s) reported, nothing overwritten, "
                "receive counts as sent\n",
                me, args.bad.c_str(), args.layout.c_str());
  return k.failures ? 1 : 0;
}
