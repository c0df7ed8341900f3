//===- CommShared.cpp - buffers shared for a call, on first use -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The caller's own memory (cuMemAlloc'd blocks with the buffers at an
// offset, as a caching allocator hands them out; on the CPU device a host
// vector, which ranks that are threads of one process share) in calls past
// the low-latency size, with SDMA_SHARED_BYTES at most their size: each
// call exchanges the buffers' places, each peer block is mapped once.
// Rounds on one block, then a second block, then the first again; every
// byte checked, the path says the buffers were shared, and rank 0 prints
// the host's time for a block's first call and for a later one.
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include <chrono>
#include <cstring>

namespace sdma::commtest {

void shared(Rank &k) {
  int R = k.ranks;
  size_t count = 80000, c = count * 4; // 320 KB to each peer: past the
                                       // low-latency calls
  const cuda::Driver *d = k.memory.driver;
  std::vector<std::vector<char>> host(2);
  char *base[2] = {nullptr, nullptr};
  cuda::CUdeviceptr block[2] = {0, 0};
  for (int b = 0; b < 2; ++b) {
    if (d) {
      d->cuMemAlloc_v2(&block[b], 4096 + 2 * R * c);
      base[b] = reinterpret_cast<char *>(block[b]);
    } else {
      host[b].resize(4096 + 2 * R * c);
      base[b] = host[b].data();
    }
  }
  for (int round = 0; round < 4; ++round) {
    char *in = base[round == 2] + 4096 + (round == 3 ? R * c : 0);
    char *out = round == 3 ? base[0] + 4096 : in + R * c;
    k.fill(in, R * c, k.rank, 50 + round);
    k.fill(out, R * c, k.rank, -1);
    auto start = std::chrono::steady_clock::now();
    bool ok =
        k.check(sdmaAlltoAll(in, out, count, sdmaFloat32, k.comm, k.stream),
                "sdmaAlltoAll on the caller's memory");
    double us = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (!ok)
      return;
    const char *path = nullptr;
    k.check(sdmaCommGetLastPath(k.comm, &path), "sdmaCommGetLastPath");
    if (!path || !std::strstr(path, "buffers shared for this call")) {
      std::fprintf(stderr, "rank %d: round %d took '%s', not shared\n", k.rank,
                   round, path ? path : "");
      ++k.failures;
    }
    k.memory.sync(k.stream);
    std::vector<unsigned char> want(R * c);
    for (int p = 0; p < R; ++p)
      for (size_t i = 0; i < c; ++i)
        want[p * c + i] = pattern(p, 50 + round, k.rank * c + i);
    k.expect(out, want,
             "AlltoAll on shared memory, round " + std::to_string(round));
    if (k.rank == 0)
      std::printf("rank 0: round %d (%s): host %.1f us\n", round,
                  round == 0   ? "block 1, first use"
                  : round == 1 ? "block 1 again"
                  : round == 2 ? "block 2, first use"
                               : "block 1, other offsets",
                  us);
  }
  if (d)
    for (cuda::CUdeviceptr b : block)
      d->cuMemFree_v2(b);
  if (!k.failures)
    std::printf("rank %d of %d: shared buffers as expected\n", k.rank, R);
}

} // namespace sdma::commtest
