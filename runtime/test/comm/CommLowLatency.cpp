//===- CommLowLatency.cpp - back-to-back calls without job barriers -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Calls enqueued back to back with no wait between them, each rank after a
// random delay of its own (--jitter-us): all-gathers, all-to-alls and
// broadcasts small enough to be low-latency calls (no job barrier: the data
// carries its flags, the inbox slots alternate), every fourth one too large
// for it (the barrier protocol), so the two follow each other both ways.
// Each call has its own input and output buffers and a pattern of its own,
// so a packet of an earlier call read in a later one (the slot the same two
// calls back) shows as wrong bytes. Every output is checked once the stream
// has run them all, and every call's path (sdmaCommGetLastPath) must say
// whether it was low-latency.
//
//===----------------------------------------------------------------------===//

#include "CommTest.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sdma::commtest {

int lowLatency(Rank &k, int calls) {
  const int R = k.ranks, me = k.rank;
  // Bytes per rank: small (low-latency at any default), medium
  // (low-latency where the default inbox, 512 KiB / ranks a peer within
  // 64-256 KiB, holds it: up to 5 ranks), large (never: past 256 KiB).
  const size_t small = 1000, medium = 100000, large = 300000;
  const char *set = std::getenv("SDMA_LL_BYTES");
  const size_t inbox =
      set && *set
          ? size_t(std::strtoull(set, nullptr, 10))
          : std::min<size_t>(
                256 << 10,
                std::max<size_t>((512 << 10) / R,
                                 std::min<size_t>(64 << 10, (1 << 20) / R)));
  struct Planned {
    int kind; // 0 all-gather, 1 all-to-all, 2 broadcast
    size_t c;
    char *in, *out;
  };
  std::vector<Planned> plan;
  for (int i = 0; i < calls; ++i) {
    Planned p{i % 3,
              i % 4 == 3   ? large
              : i % 4 == 1 ? medium
                           : small,
              nullptr, nullptr};
    p.in = static_cast<char *>(k.alloc(R * p.c));
    p.out = static_cast<char *>(k.alloc(R * p.c));
    if (!p.in || !p.out)
      return 1;
    k.fill(p.in, R * p.c, me, 10 + i);
    k.fill(p.out, R * p.c, me, -1);
    plan.push_back(p);
  }
  k.memory.sync(k.stream);
  for (int i = 0; i < calls; ++i) {
    const Planned &p = plan[i];
    k.jitter();
    std::string what = "call " + std::to_string(i);
    if (p.kind == 0)
      k.check(sdmaAllGather(p.in, p.out, p.c, sdmaUint8, k.comm, k.stream),
              "sdmaAllGather");
    else if (p.kind == 1)
      k.check(sdmaAlltoAll(p.in, p.out, p.c, sdmaUint8, k.comm, k.stream),
              "sdmaAlltoAll");
    else
      k.check(
          sdmaBroadcast(p.in, p.out, p.c, sdmaUint8, i % R, k.comm, k.stream),
          "sdmaBroadcast");
    const char *path = nullptr;
    if (!k.check(sdmaCommGetLastPath(k.comm, &path), "sdmaCommGetLastPath"))
      return 1;
    // Small calls must be low-latency (the case exists for them).
    bool want = R > 1 && (p.c == small || p.c <= inbox / 8 * 8);
    if ((std::strstr(path, "low-latency") != nullptr) != want) {
      std::fprintf(stderr, "rank %d: %s (%zu bytes) took '%s': %s\n", me,
                   what.c_str(), p.c, path,
                   want ? "not low-latency" : "low-latency");
      ++k.failures;
    }
  }
  k.memory.sync(k.stream);
  for (int i = 0; i < calls; ++i) {
    const Planned &p = plan[i];
    const int tag = 10 + i;
    std::vector<unsigned char> want(R * p.c, kUntouched);
    for (int r = 0; r < R; ++r)
      for (size_t j = 0; j < p.c; ++j) {
        if (p.kind == 0) // slot r: rank r's first chunk
          want[r * p.c + j] = pattern(r, tag, j);
        else if (p.kind == 1) // slot r: rank r's chunk for me
          want[r * p.c + j] = pattern(r, tag, me * p.c + j);
        else if (r == 0) // the root's first chunk
          want[j] = pattern(i % R, tag, j);
      }
    k.expect(p.out, want, "call " + std::to_string(i));
  }
  if (!k.failures)
    std::printf("rank %d of %d: %d calls back to back, every byte as "
                "expected\n",
                me, R, calls);
  return k.failures ? 1 : 0;
}

} // namespace sdma::commtest
