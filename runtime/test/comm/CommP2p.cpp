//===- CommP2p.cpp - sdmaSend and sdmaRecv through the C API --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-comm-test --case=p2p: point-to-point on buffers the communicator
// never allocated (cuMemAlloc'd on a GPU, malloc'd on the CPU device), every
// byte checked: a ring in one group from 0 bytes to several rings of chunks,
// an uneven all-to-allv by grouped sends and receives (non-zero sizes only,
// as torch issues them), 20 messages to one peer in a group, and a pair
// outside any group with the other ranks idle, all-gathers between them;
// the communicator healthy at the end.
//
//===----------------------------------------------------------------------===//

#include "CommTest.h"

#include <memory>

using namespace sdma::commtest;

namespace {

/// A buffer of the device's own memory, outside the symmetric heap.
struct Plain {
  Rank &k;
  void *ptr = nullptr;
  Plain(Rank &k, size_t bytes) : k(k) {
    if (k.memory.driver) {
      cuda::CUdeviceptr p = 0;
      if (k.memory.driver->cuMemAlloc_v2(&p, bytes ? bytes : 1) == 0)
        ptr = reinterpret_cast<void *>(p);
    } else {
      ptr = std::malloc(bytes ? bytes : 1);
    }
  }
  ~Plain() {
    if (k.memory.driver)
      k.memory.driver->cuMemFree_v2(reinterpret_cast<cuda::CUdeviceptr>(ptr));
    else
      std::free(ptr);
  }
  char *data() const { return static_cast<char *>(ptr); }
};

std::vector<unsigned char> bytes(int r, int tag, size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = pattern(r, tag, i);
  return v;
}

void ring(Rank &k, size_t n, int tag) {
  int next = (k.rank + 1) % k.ranks, prev = (k.rank + k.ranks - 1) % k.ranks;
  Plain out(k, n), in(k, n);
  k.fill(out.data(), n, k.rank, tag);
  k.fill(in.data(), n, 0, -1);
  sdmaGroupStart();
  k.check(sdmaSend(out.data(), n, sdmaUint8, next, k.comm, k.stream),
          "sdmaSend");
  k.check(sdmaRecv(in.data(), n, sdmaUint8, prev, k.comm, k.stream),
          "sdmaRecv");
  k.check(sdmaGroupEnd(), "sdmaGroupEnd");
  k.memory.sync(k.stream);
  k.expect(in.data(), bytes(prev, tag, n), "ring of " + std::to_string(n));
}

/// Bytes rank s sends rank d in the all-to-allv (0 for some pairs).
size_t split(int s, int d) { return size_t((s * 5 + d * 3) % 4) * 12345; }

void unevenExchange(Rank &k) {
  std::vector<size_t> sendAt(k.ranks + 1, 0), recvAt(k.ranks + 1, 0);
  for (int p = 0; p < k.ranks; ++p) {
    sendAt[p + 1] = sendAt[p] + split(k.rank, p);
    recvAt[p + 1] = recvAt[p] + split(p, k.rank);
  }
  Plain out(k, sendAt[k.ranks]), in(k, recvAt[k.ranks]);
  for (int p = 0; p < k.ranks; ++p)
    if (split(k.rank, p))
      k.fill(out.data() + sendAt[p], split(k.rank, p), k.rank, 100 + p);
  sdmaGroupStart();
  for (int p = 0; p < k.ranks; ++p) {
    if (split(k.rank, p))
      k.check(sdmaSend(out.data() + sendAt[p], split(k.rank, p), sdmaUint8, p,
                       k.comm, k.stream),
              "sdmaSend");
    if (split(p, k.rank))
      k.check(sdmaRecv(in.data() + recvAt[p], split(p, k.rank), sdmaUint8, p,
                       k.comm, k.stream),
              "sdmaRecv");
  }
  k.check(sdmaGroupEnd(), "sdmaGroupEnd");
  k.memory.sync(k.stream);
  for (int p = 0; p < k.ranks; ++p)
    if (split(p, k.rank))
      k.expect(in.data() + recvAt[p], bytes(p, 100 + k.rank, split(p, k.rank)),
               "all-to-allv from rank " + std::to_string(p));
}

void manyToNext(Rank &k) {
  int next = (k.rank + 1) % k.ranks, prev = (k.rank + k.ranks - 1) % k.ranks;
  const int messages = 20;
  std::vector<std::unique_ptr<Plain>> out, in;
  sdmaGroupStart();
  for (int m = 0; m < messages; ++m) {
    size_t n = m % 2 ? 7 : 3000 + size_t(m);
    out.push_back(std::make_unique<Plain>(k, n));
    in.push_back(std::make_unique<Plain>(k, n));
    k.fill(out.back()->data(), n, k.rank, 200 + m);
    k.check(sdmaSend(out.back()->data(), n, sdmaUint8, next, k.comm, k.stream),
            "sdmaSend");
    k.check(sdmaRecv(in.back()->data(), n, sdmaUint8, prev, k.comm, k.stream),
            "sdmaRecv");
  }
  k.check(sdmaGroupEnd(), "sdmaGroupEnd");
  k.memory.sync(k.stream);
  for (int m = 0; m < messages; ++m) {
    size_t n = m % 2 ? 7 : 3000 + size_t(m);
    k.expect(in[m]->data(), bytes(prev, 200 + m, n),
             "message " + std::to_string(m));
  }
}

void pair(Rank &k) {
  const size_t n = 3 << 20; // several rings of chunks on any device
  int last = k.ranks - 1;
  if (k.rank == 0) {
    Plain out(k, n);
    k.fill(out.data(), n, 0, 300);
    k.check(sdmaSend(out.data(), n, sdmaUint8, last, k.comm, k.stream),
            "sdmaSend");
    k.memory.sync(k.stream);
  } else if (k.rank == last) {
    Plain in(k, n);
    k.check(sdmaRecv(in.data(), n, sdmaUint8, 0, k.comm, k.stream), "sdmaRecv");
    k.memory.sync(k.stream);
    k.expect(in.data(), bytes(0, 300, n), "a pair outside any group");
  }
}

/// An all-gather between the point-to-point calls, every byte checked:
/// collectives and sends interleave on one communicator (ranks sharing a
/// GPU context order both kinds of launch: CoLaunch.h).
void gather(Rank &k, char *in, char *out, int tag) {
  k.fill(in, 256, k.rank, tag);
  k.check(sdmaAllGather(in, out, 256, sdmaUint8, k.comm, k.stream),
          "sdmaAllGather");
  k.memory.sync(k.stream);
  for (int r = 0; r < k.ranks; ++r)
    k.expect(out + 256 * r, bytes(r, tag, 256),
             "the all-gather from rank " + std::to_string(r) +
                 " between sends");
}

} // namespace

void sdma::commtest::pointToPoint(Rank &k) {
  char *in = static_cast<char *>(k.alloc(256));
  char *out = static_cast<char *>(k.alloc(256 * k.ranks));
  // SDMA_TEST_TRACE=1: each step named on stderr as it starts (which one a
  // rank that fails was in).
  const bool trace = std::getenv("SDMA_TEST_TRACE") != nullptr;
  auto step = [&](const std::string &what) {
    if (trace)
      std::fprintf(stderr, "rank %d: p2p step %s\n", k.rank, what.c_str());
  };
  int tag = 0;
  step("gather 100");
  gather(k, in, out, 100);
  for (size_t n : {size_t(0), size_t(1), size_t(4097), size_t(1) << 20}) {
    step("ring " + std::to_string(n));
    ring(k, n, ++tag);
  }
  step("uneven exchange");
  unevenExchange(k);
  step("gather 101");
  gather(k, in, out, 101);
  step("many to next");
  manyToNext(k);
  step("pair");
  pair(k);
  step("gather 102");
  gather(k, in, out, 102);
  step("pair");
  pair(k);
  sdmaResult_t async = sdmaInternalError;
  k.check(sdmaCommGetAsyncError(k.comm, &async), "sdmaCommGetAsyncError");
  k.check(async, "the asynchronous error after point-to-point");
}
