//===- CApiResultTest.cpp - every entry point into each failure kind ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The C API's result codes come from the kind an error was raised with
// (Error.h), one to one. Each test drives entry points of sdma.h into one
// kind of failure -- invalid argument, invalid usage, remote, system,
// device -- on ranks that are threads of this process on the CPU device,
// and checks the code, that the message names what failed, and that the
// communicator still works after a refused call.
//
//===----------------------------------------------------------------------===//

#include "sdma/sdma.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

namespace {
/// Runs `body(comm, rank)` on `ranks` threads, each a rank of one job on
/// the CPU device with a short timeout; the failures of each rank.
std::vector<std::string>
job(int ranks,
    const std::function<void(sdmaComm_t, int, std::vector<std::string> &)>
        &body,
    unsigned long long timeoutMs = 3000, int privateBuffers = 0,
    long long sharedBytes = -1) {
  sdmaUniqueId id;
  EXPECT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  std::vector<std::vector<std::string>> failures(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
      config.device = "cpu";
      config.heapBytes = 8 << 20;
      config.timeoutMs = timeoutMs;
      config.privateBuffers = privateBuffers;
      config.sharedBytes = sharedBytes;
      sdmaComm_t comm = nullptr;
      sdmaResult_t made = sdmaCommInitRankConfig(&comm, ranks, id, r, &config);
      if (made != sdmaSuccess) {
        failures[r].push_back(std::string("init: ") +
                              sdmaGetLastError(nullptr));
        return;
      }
      body(comm, r, failures[r]);
      sdmaCommDestroy(comm);
    });
  for (std::thread &t : threads)
    t.join();
  std::vector<std::string> all;
  for (int r = 0; r < ranks; ++r)
    for (const std::string &f : failures[r])
      all.push_back("rank " + std::to_string(r) + ": " + f);
  return all;
}

/// Records a failure unless `got` is `want` and the last error mentions
/// `words`.
void expect(sdmaComm_t comm, const char *call, sdmaResult_t got,
            sdmaResult_t want, const char *words,
            std::vector<std::string> &failures) {
  std::string message = sdmaGetLastError(comm);
  if (got != want || message.find(words) == std::string::npos)
    failures.push_back(std::string(call) + " returned " + std::to_string(got) +
                       " (want " + std::to_string(want) + ", '" + words +
                       "'): " + message);
}

/// An all-gather that must work: the communicator is usable.
void stillWorks(sdmaComm_t comm, int rank, int ranks,
                std::vector<std::string> &failures) {
  int32_t *in = nullptr, *out = nullptr;
  if (sdmaMemAlloc(comm, (void **)&in, 4 * sizeof(int32_t)) != sdmaSuccess ||
      sdmaMemAlloc(comm, (void **)&out, ranks * 4 * sizeof(int32_t)) !=
          sdmaSuccess) {
    failures.push_back(std::string("alloc after: ") + sdmaGetLastError(comm));
    return;
  }
  for (int i = 0; i < 4; ++i)
    in[i] = rank * 100 + i;
  if (sdmaAllGather(in, out, 4, sdmaInt32, comm, nullptr) != sdmaSuccess) {
    failures.push_back(std::string("all-gather after: ") +
                       sdmaGetLastError(comm));
    return;
  }
  for (int r = 0; r < ranks; ++r)
    for (int i = 0; i < 4; ++i)
      if (out[r * 4 + i] != r * 100 + i) {
        failures.push_back("all-gather after a refused call: wrong data");
        return;
      }
  sdmaMemFree(comm, in);
  sdmaMemFree(comm, out);
}
} // namespace

TEST(CApiResult, InvalidArgumentFromEveryEntryPoint) {
  // Without a communicator.
  EXPECT_EQ(sdmaGetVersion(nullptr), sdmaInvalidArgument);
  EXPECT_EQ(sdmaGetUniqueId(nullptr), sdmaInvalidArgument);
  sdmaUniqueId id;
  char text[8];
  EXPECT_EQ(sdmaUniqueIdToString(&id, text, sizeof(text)), sdmaInvalidArgument);
  EXPECT_EQ(sdmaUniqueIdFromString("xyz", &id), sdmaInvalidArgument);
  EXPECT_EQ(sdmaCommInitRank(nullptr, 1, id, 0), sdmaInvalidArgument);
  sdmaComm_t none;
  EXPECT_EQ(sdmaCommInitRank(&none, 2, id, 2), sdmaInvalidArgument);
  std::memset(&id, 0, sizeof(id));
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  EXPECT_EQ(sdmaCommInitRankConfig(&none, 1, id, 0, &config),
            sdmaInvalidArgument);
  EXPECT_NE(
      std::string(sdmaGetLastError(nullptr)).find("not an sdma unique id"),
      std::string::npos);
  config.device = "gpu";
  EXPECT_EQ(sdmaCommInitRankConfig(&none, 1, id, 0, &config),
            sdmaInvalidArgument);
  EXPECT_EQ(sdmaAllGather(nullptr, nullptr, 1, sdmaInt8, nullptr, nullptr),
            sdmaInvalidArgument);
  EXPECT_EQ(sdmaScheduleGetBufferCount(nullptr, nullptr), sdmaInvalidArgument);
  EXPECT_EQ(sdmaScheduleLaunch(nullptr, nullptr, 0, 1, sdmaInt8, nullptr),
            sdmaInvalidArgument);

  auto failures = job(2, [](sdmaComm_t comm, int rank,
                            std::vector<std::string> &f) {
    const sdmaResult_t bad = sdmaInvalidArgument;
    char *a = nullptr, *b = nullptr;
    ASSERT_EQ(sdmaMemAlloc(comm, (void **)&a, 4096), sdmaSuccess);
    ASSERT_EQ(sdmaMemAlloc(comm, (void **)&b, 4096), sdmaSuccess);
    int count = 0;
    expect(comm, "CommCount", sdmaCommCount(comm, nullptr), bad, "NULL", f);
    expect(comm, "UserRank", sdmaCommUserRank(comm, nullptr), bad, "NULL", f);
    expect(comm, "GetAsyncError", sdmaCommGetAsyncError(comm, nullptr), bad,
           "NULL", f);
    expect(comm, "MemAlloc", sdmaMemAlloc(comm, nullptr, 16), bad, "NULL", f);
    expect(comm, "MemFree", sdmaMemFree(comm, &count), bad, "not an allocation",
           f);
    void *handle = nullptr;
    expect(comm, "MemRegister", sdmaMemRegister(comm, nullptr, 16, &handle),
           bad, "null pointer", f);
    // Sizes whose bytes wrap 64 bits.
    size_t huge = SIZE_MAX / 2 + 1;
    expect(comm, "AllGather",
           sdmaAllGather(a, b, huge, sdmaInt64, comm, nullptr), bad,
           "do not fit 64 bits", f);
    expect(comm, "AlltoAll", sdmaAlltoAll(a, b, huge, sdmaInt8, comm, nullptr),
           bad, "do not fit 64 bits", f);
    expect(comm, "AllReduce",
           sdmaAllReduce(a, b, huge, sdmaFloat32, sdmaSum, comm, nullptr), bad,
           "do not fit 64 bits", f);
    // Types, operators, roots, nulls, overlaps.
    expect(comm, "Broadcast",
           sdmaBroadcast(a, b, 4, (sdmaDataType_t)42, 0, comm, nullptr), bad,
           "invalid datatype 42", f);
    expect(comm, "Reduce",
           sdmaReduce(a, b, 4, sdmaInt32, (sdmaRedOp_t)9, 0, comm, nullptr),
           bad, "invalid reduction operator 9", f);
    expect(comm, "Scatter", sdmaScatter(a, b, 4, sdmaInt8, 2, comm, nullptr),
           bad, "root 2 is not a rank", f);
    expect(comm, "Gather", sdmaGather(a, b, 4, sdmaInt8, -1, comm, nullptr),
           bad, "root -1 is not a rank", f);
    expect(comm, "Broadcast",
           sdmaBroadcast(a, nullptr, 4, sdmaInt8, 0, comm, nullptr), bad,
           "the receive buffer must not be null", f);
    expect(comm, "AllGather",
           sdmaAllGather(a + 1, a, 64, sdmaInt8, comm, nullptr), bad, "overlap",
           f);
    expect(comm, "AlltoAll",
           sdmaAlltoAll(a, a + 8, 16, sdmaInt8, comm, nullptr), bad, "overlap",
           f);
    expect(comm, "ReduceScatter",
           sdmaReduceScatter(a, a + 3, 8, sdmaInt8, sdmaSum, comm, nullptr),
           bad, "overlap", f);
    int64_t counts[2] = {1, 1};
    expect(comm, "AlltoAllv",
           sdmaAlltoAllv(a, counts, b, nullptr, 0, 4, sdmaInt8,
                         sdmaAlltoAllvSlots, comm, nullptr),
           bad, "must be positive", f);
    // Not symmetric memory; past an allocation's end.
    std::vector<char> host(64);
    expect(comm, "AllGather",
           sdmaAllGather(host.data(), b, 8, sdmaInt8, comm, nullptr), bad,
           "not symmetric memory", f);
    expect(comm, "AllGather",
           sdmaAllGather(a, b, 4000, sdmaInt8, comm, nullptr), bad,
           "runs past the end", f);
    sdmaSchedule_t schedule = nullptr;
    expect(comm, "ScheduleLoad",
           sdmaScheduleLoad(comm, "/nonexistent/x.mlir", &schedule), bad,
           "cannot read schedule", f);
    // A device copy: any memory, not collective; null, overlapping and
    // wrapping ranges refused.
    std::vector<char> from(32, char(rank + 1)), to(32, 0);
    EXPECT_EQ(sdmaMemcpyAsync(comm, a, from.data(), 32, nullptr), sdmaSuccess);
    EXPECT_EQ(sdmaMemcpyAsync(comm, to.data(), a, 32, nullptr), sdmaSuccess);
    EXPECT_EQ(to, from);
    expect(comm, "MemcpyAsync", sdmaMemcpyAsync(comm, nullptr, a, 8, nullptr),
           bad, "null", f);
    expect(comm, "MemcpyAsync", sdmaMemcpyAsync(comm, a + 4, a, 8, nullptr),
           bad, "overlap", f);
    expect(comm, "MemcpyAsync",
           sdmaMemcpyAsync(comm, a, b, SIZE_MAX - 8, nullptr), bad,
           "wraps the address space", f);
    stillWorks(comm, rank, 2, f);
  });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

TEST(CApiResult, InvalidUsageAndRemoteFromDisagreement) {
  auto failures =
      job(2, [](sdmaComm_t comm, int rank, std::vector<std::string> &f) {
        // Different allocation sizes: refused on every rank.
        void *p = nullptr;
        expect(comm, "MemAlloc", sdmaMemAlloc(comm, &p, rank ? 512 : 256),
               sdmaInvalidUsage, "differs between ranks", f);
        expect(comm, "MemDeregister",
               sdmaMemDeregister(comm, reinterpret_cast<void *>(intptr_t(7))),
               sdmaInvalidUsage, "not live", f);
        // Different collectives on the two ranks, first call of each.
        char *a = nullptr, *b = nullptr;
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&a, 4096), sdmaSuccess);
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&b, 4096), sdmaSuccess);
        sdmaResult_t got =
            rank == 0 ? sdmaAllGather(a, b, 16, sdmaInt8, comm, nullptr)
                      : sdmaAllGather(a, b, 32, sdmaInt8, comm, nullptr);
        expect(comm, "AllGather (disagreeing)", got, sdmaInvalidUsage,
               "differs between ranks", f);
        // One rank refuses its own arguments (a receive buffer that is not
        // symmetric memory there): the other learns it (remote).
        std::vector<char> host(64);
        got = sdmaBroadcast(a, rank == 1 ? host.data() : b, 8, sdmaInt8, 0,
                            comm, nullptr);
        if (rank == 1)
          expect(comm, "Broadcast (bad here)", got, sdmaInvalidArgument,
                 "not symmetric memory", f);
        else
          expect(comm, "Broadcast (bad on rank 1)", got, sdmaRemoteError,
                 "rank 1 refused", f);
        // A refusal that depends on the rank (in place on rank 0, a partial
        // overlap on rank 1) is agreed before anything is made: every rank
        // refuses, and the communicator stays usable.
        got = sdmaReduceScatter(a, a, 16, sdmaInt8, sdmaSum, comm, nullptr);
        if (rank == 1)
          expect(comm, "ReduceScatter (overlap here)", got, sdmaInvalidArgument,
                 "overlap", f);
        else
          expect(comm, "ReduceScatter (overlap on rank 1)", got,
                 sdmaRemoteError, "rank 1 refused", f);
        stillWorks(comm, rank, 2, f);
      });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

TEST(CApiResult, SystemWhenTheHeapIsFull) {
  auto failures =
      job(2, [](sdmaComm_t comm, int rank, std::vector<std::string> &f) {
        void *p = nullptr;
        expect(comm, "MemAlloc", sdmaMemAlloc(comm, &p, 64 << 20),
               sdmaSystemError, "cannot hold", f);
        expect(comm, "MemAlloc", sdmaMemAlloc(comm, &p, SIZE_MAX - 7),
               sdmaSystemError, "cannot hold", f);
        stillWorks(comm, rank, 2, f);
      });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

TEST(CApiResult, RemoteWhenARankNeverArrives) {
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.timeoutMs = 300;
  sdmaComm_t comm = nullptr;
  // Rank 1 of 2 never joins.
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 2, id, 0, &config), sdmaRemoteError);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("rank 1"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
}

TEST(CApiResult, DeviceWhenThereIsNone) {
  // No AMD GPU is anywhere sdma is tested: the HIP device fails as a
  // device error, with the hint to use the CPU device.
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "hip";
  config.timeoutMs = 2000;
  sdmaComm_t comm = nullptr;
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config),
            sdmaUnhandledCudaError);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("SDMA_DEVICE=cpu"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
}

TEST(CApiResult, DeadHandlesAreRefusedNotDereferenced) {
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.heapBytes = 1 << 20;
  sdmaComm_t comm = nullptr;
  ASSERT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config), sdmaSuccess);
  sdmaSchedule_t schedule = nullptr;
  const char *program =
      "sdma.schedule @copy ranks(%R) buffers(%a : 1, %b : 1) {\n"
      "  affine.for %r = 0 to %R {\n"
      "    sdma.copy %a[0, 1] on %r -> %b[0, 1] on %r\n"
      "  }\n"
      "}\n";
  ASSERT_EQ(sdmaScheduleLoad(comm, program, &schedule), sdmaSuccess)
      << sdmaGetLastError(comm);
  EXPECT_EQ(sdmaScheduleFree(schedule), sdmaSuccess);
  EXPECT_EQ(sdmaScheduleFree(schedule), sdmaInvalidArgument);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("not a live schedule"),
            std::string::npos);
  int count = 0;
  EXPECT_EQ(sdmaScheduleGetBufferCount(schedule, &count), sdmaInvalidArgument);
  ASSERT_EQ(sdmaScheduleLoad(comm, program, &schedule), sdmaSuccess);
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaSuccess);
  // The communicator is gone: its schedule cannot launch, and the handle
  // itself is refused everywhere, a second destroy included.
  void *buffers[2] = {nullptr, nullptr};
  EXPECT_EQ(sdmaScheduleLaunch(schedule, buffers, 2, 1, sdmaInt8, nullptr),
            sdmaInvalidUsage);
  EXPECT_EQ(sdmaScheduleFree(schedule), sdmaSuccess);
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaInvalidArgument);
  EXPECT_NE(
      std::string(sdmaGetLastError(nullptr)).find("not a live communicator"),
      std::string::npos);
  EXPECT_EQ(sdmaCommCount(comm, &count), sdmaInvalidArgument);
  void *ptr = nullptr;
  EXPECT_EQ(sdmaMemAlloc(comm, &ptr, 64), sdmaInvalidArgument);
  EXPECT_EQ(sdmaAllGather(ptr, ptr, 1, sdmaInt8, comm, nullptr),
            sdmaInvalidArgument);
}

TEST(CApiResult, PathIsChosenReportedAndConfigurable) {
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.heapBytes = 1 << 20;
  config.path = "fast";
  sdmaComm_t comm = nullptr;
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config),
            sdmaInvalidArgument);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("path 'fast'"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
  config.path = "dma";
  ASSERT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config), sdmaSuccess)
      << sdmaGetLastError(nullptr);
  const char *path = nullptr;
  ASSERT_EQ(sdmaCommGetLastPath(comm, &path), sdmaSuccess);
  EXPECT_STREQ(path, "");
  EXPECT_EQ(sdmaCommGetLastPath(comm, nullptr), sdmaInvalidArgument);
  char *a = nullptr, *b = nullptr;
  ASSERT_EQ(sdmaMemAlloc(comm, (void **)&a, 64), sdmaSuccess);
  ASSERT_EQ(sdmaMemAlloc(comm, (void **)&b, 64), sdmaSuccess);
  // What is symmetric memory (a local query).
  int symmetric = -1, local = 0;
  EXPECT_EQ(sdmaMemQuery(comm, a, 64, &symmetric), sdmaSuccess);
  EXPECT_EQ(symmetric, 1);
  EXPECT_EQ(sdmaMemQuery(comm, a + 32, 1 << 20, &symmetric), sdmaSuccess);
  EXPECT_EQ(symmetric, 0) << "past the end of its allocation";
  EXPECT_EQ(sdmaMemQuery(comm, &local, 4, &symmetric), sdmaSuccess);
  EXPECT_EQ(symmetric, 0);
  EXPECT_EQ(sdmaMemQuery(comm, a, 64, nullptr), sdmaInvalidArgument);
  std::memset(a, 7, 64);
  ASSERT_EQ(sdmaAllGather(a, b, 64, sdmaUint8, comm, nullptr), sdmaSuccess)
      << sdmaGetLastError(comm);
  EXPECT_EQ(b[63], 7);
  ASSERT_EQ(sdmaCommGetLastPath(comm, &path), sdmaSuccess);
  EXPECT_STREQ(path, "dma pcpy (SDMA_PATH=dma)");
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaSuccess);
}

TEST(CApiResult, AConfigWithoutThePathFieldsIsAccepted) {
  // 0.3.0's sdmaConfig_t ended at programDirectory.
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.size = offsetof(sdmaConfig_t, path);
  config.device = "cpu";
  config.heapBytes = 1 << 20;
  config.path = "garbage that must not be read";
  sdmaComm_t comm = nullptr;
  ASSERT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config), sdmaSuccess)
      << sdmaGetLastError(nullptr);
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaSuccess);
  config.size = offsetof(sdmaConfig_t, path) - 1;
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config),
            sdmaInvalidArgument);
}

TEST(CApiResult, PrivateBuffersRunInPlaceOrAreRefusedAtOnce) {
  // Buffers in this thread's memory, never allocated by sdma: a
  // low-latency call runs on them (no peer reaches them); a call whose path
  // needs symmetric memory says so at once on every rank, nothing enqueued,
  // and the communicator still works.
  constexpr int R = 3;
  auto failures = job(
      R,
      [](sdmaComm_t comm, int rank, std::vector<std::string> &f) {
        std::vector<int32_t> in(16), out(R * 16, -1);
        for (int i = 0; i < 16; ++i)
          in[i] = rank * 1000 + i;
        expect(
            comm, "AllGather (private)",
            sdmaAllGather(in.data(), out.data(), 16, sdmaInt32, comm, nullptr),
            sdmaSuccess, "", f);
        for (int r = 0; r < R; ++r)
          for (int i = 0; i < 16; ++i)
            if (out[r * 16 + i] != r * 1000 + i) {
              f.push_back("private all-gather: wrong data");
              r = R;
              break;
            }
        const char *path = nullptr;
        sdmaCommGetLastPath(comm, &path);
        if (!path || !std::strstr(path, "low-latency"))
          f.push_back(std::string("private all-gather path: ") +
                      (path ? path : "null"));
        // An all-reduce, the receive buffer symmetric on rank 0 only.
        float *sym = nullptr;
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&sym, 8 * sizeof(float)),
                  sdmaSuccess);
        std::vector<float> x(8, float(rank + 1)), y(8, 0);
        float *to = rank == 0 ? sym : y.data();
        expect(
            comm, "AllReduce (private, mixed)",
            sdmaAllReduce(x.data(), to, 8, sdmaFloat32, sdmaSum, comm, nullptr),
            sdmaSuccess, "", f);
        for (int i = 0; i < 8; ++i)
          if (to[i] != float(R * (R + 1) / 2)) {
            f.push_back("private all-reduce: wrong sum");
            break;
          }
        // A receive buffer that starts in a symmetric allocation and runs
        // past its end is never taken as private memory (the kernel would
        // write the next allocation): stage it.
        // (Allocations are whole 256-byte granules: 3 x 128 bytes overrun.)
        char *small = nullptr;
        std::vector<int32_t> in32(32, rank);
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&small, 64), sdmaSuccess);
        expect(comm, "AllGather (past a symmetric allocation)",
               sdmaAllGather(in32.data(), small, 32, sdmaInt32, comm, nullptr),
               sdmaNotSymmetric, "runs past the end", f);
        sdmaMemFree(comm, small);
        // 512 KiB to each peer: past SDMA_LL_BYTES (at most 256 KiB), on
        // the barrier path, whose peers write the receive buffer.
        size_t n = 131072;
        std::vector<int32_t> big(n, rank), bigOut(R * n, -1);
        expect(comm, "AllGather (private, large)",
               sdmaAllGather(big.data(), bigOut.data(), n, sdmaInt32, comm,
                             nullptr),
               sdmaNotSymmetric, "is not symmetric memory", f);
        if (bigOut[0] != -1 || bigOut[R * n - 1] != -1)
          f.push_back("a refused private call wrote its receive buffer");
        // Staged, as the caller then does: the same call runs.
        int32_t *sin = nullptr, *sout = nullptr;
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&sin, n * 4), sdmaSuccess);
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&sout, R * n * 4), sdmaSuccess);
        std::memcpy(sin, big.data(), n * 4);
        expect(comm, "AllGather (staged)",
               sdmaAllGather(sin, sout, n, sdmaInt32, comm, nullptr),
               sdmaSuccess, "", f);
        for (int r = 0; r < R; ++r)
          if (sout[r * n] != r || sout[r * n + n - 1] != r)
            f.push_back("staged all-gather: wrong data");
        sdmaMemFree(comm, sout);
        sdmaMemFree(comm, sin);
        sdmaMemFree(comm, sym);
        stillWorks(comm, rank, R, f);
      },
      3000, 1);
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
  // Without the option, the same small call on the same memory is refused
  // on every rank, as before.
  failures = job(2, [](sdmaComm_t comm, int rank, std::vector<std::string> &f) {
    std::vector<int32_t> in(4, rank), out(8);
    sdmaResult_t got =
        sdmaAllGather(in.data(), out.data(), 4, sdmaInt32, comm, nullptr);
    if (got != sdmaInvalidArgument && got != sdmaRemoteError)
      f.push_back("a plain buffer without privateBuffers: " +
                  std::to_string(got) + " " + sdmaGetLastError(comm));
    stillWorks(comm, rank, 2, f);
  });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

TEST(CApiResult, PrivateBuffersConfigIsChecked) {
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.heapBytes = 1 << 20;
  config.privateBuffers = 2;
  sdmaComm_t comm = nullptr;
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config),
            sdmaInvalidArgument);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("privateBuffers"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
  // A config of the size before privateBuffers: the field is not read.
  config.size = offsetof(sdmaConfig_t, privateBuffers);
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  ASSERT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config), sdmaSuccess)
      << sdmaGetLastError(nullptr);
  // One rank, private: the call is a copy of this rank's own memory.
  std::vector<int32_t> in(4, 5), out(4, 0);
  EXPECT_EQ(sdmaAllGather(in.data(), out.data(), 4, sdmaInt32, comm, nullptr),
            sdmaInvalidArgument)
      << "privateBuffers was not read, so plain memory is refused";
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaSuccess);
  config.size = sizeof(sdmaConfig_t);
  config.privateBuffers = 1;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  ASSERT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config), sdmaSuccess);
  EXPECT_EQ(sdmaAllGather(in.data(), out.data(), 4, sdmaInt32, comm, nullptr),
            sdmaSuccess)
      << sdmaGetLastError(comm);
  EXPECT_EQ(out[3], 5);
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaSuccess);
}

TEST(CApiResult, DmaSubmitConfigIsChecked) {
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.heapBytes = 1 << 20;
  config.dmaSubmit = "sideways";
  sdmaComm_t comm = nullptr;
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config),
            sdmaInvalidArgument);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr))
                .find("DMA submission 'sideways' is not one of host, kernel"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
  // A config of the size before dmaSubmit: the field is not read.
  config.size = offsetof(sdmaConfig_t, dmaSubmit);
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  ASSERT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config), sdmaSuccess)
      << sdmaGetLastError(nullptr);
  EXPECT_EQ(sdmaCommDestroy(comm), sdmaSuccess);
}

TEST(CApiResult, SharedBuffersRunInPlace) {
  // sharedBytes: a call on the barrier path (512 KiB to each peer, past the
  // low-latency calls' 256 KiB at most) whose buffers are plain memory
  // exchanges them for the call and runs on them: ranks that are threads of one
  // process reach each other's host memory. Two rounds on other vectors
  // (exchanged again), every element checked; a buffer one rank cannot share is
  // refused on every rank, and the communicator still works.
  const int R = 3;
  auto failures = job(
      R,
      [](sdmaComm_t comm, int rank, std::vector<std::string> &f) {
        size_t n = 131072;
        for (int round = 0; round < 2; ++round) {
          std::vector<int32_t> in(R * n), out(R * n, -1);
          for (size_t i = 0; i < R * n; ++i)
            in[i] = int32_t(1000 * rank + round + i % 7);
          expect(
              comm, "AllGather (shared)",
              sdmaAllGather(in.data(), out.data(), n, sdmaInt32, comm, nullptr),
              sdmaSuccess, "", f);
          const char *path = nullptr;
          sdmaCommGetLastPath(comm, &path);
          if (!path || !std::strstr(path, "buffers shared for this call"))
            f.push_back(std::string("path: ") + (path ? path : "none"));
          for (int r = 0; r < R; ++r)
            for (size_t i : {size_t(0), n / 2, n - 1})
              if (out[r * n + i] != int32_t(1000 * r + round + i % 7))
                f.push_back("shared all-gather: wrong data");
          expect(
              comm, "AlltoAll (shared)",
              sdmaAlltoAll(in.data(), out.data(), n, sdmaInt32, comm, nullptr),
              sdmaSuccess, "", f);
          for (int r = 0; r < R; ++r)
            for (size_t i : {size_t(0), n - 1})
              if (out[r * n + i] !=
                  int32_t(1000 * r + round + (rank * n + i) % 7))
                f.push_back("shared all-to-all: wrong data");
        }
        // Rank 1's receive buffer starts in a symmetric allocation and runs
        // past its end: it cannot be shared, and every rank refuses the
        // call alike (NotSymmetric: the caller would stage), nothing
        // written.
        int32_t *sym = nullptr;
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&sym, 1024), sdmaSuccess);
        std::vector<int32_t> in(n, rank), out(R * n, -1);
        expect(comm, "AllGather (rank 1's buffer straddles the heap)",
               sdmaAllGather(in.data(), rank == 1 ? sym : out.data(), n,
                             sdmaInt32, comm, nullptr),
               sdmaNotSymmetric,
               "rank 1's buffer 'output' cannot be shared with its peers", f);
        if (out[0] != -1 || out[R * n - 1] != -1)
          f.push_back("a refused shared call wrote its receive buffer");
        // Rank 1's send buffer, which only rank 1 reads (all-to-all pushes),
        // straddles the heap, and rank 2's receive buffer does: rank 1
        // refuses before it would share, yet says so in the exchange, so
        // every rank stages alike and the calls stay paired (a rank that
        // skipped the exchange would pair its next call with its peers'
        // retry). Then the staged call and a shared one, data checked.
        std::vector<int32_t> a2a(R * n), got(R * n, -1);
        for (size_t i = 0; i < R * n; ++i)
          a2a[i] = int32_t(100 * rank + i / n);
        expect(comm, "AlltoAll (ranks 1 and 2 straddle the heap)",
               sdmaAlltoAll(rank == 1 ? sym + 64 : a2a.data(),
                            rank == 2 ? sym + 64 : got.data(), n, sdmaInt32,
                            comm, nullptr),
               sdmaNotSymmetric, "", f);
        int32_t *stage = nullptr;
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&stage, 2 * R * n * 4),
                  sdmaSuccess);
        std::memcpy(stage, a2a.data(), R * n * 4);
        expect(comm, "AlltoAll (staged after the refusal)",
               sdmaAlltoAll(stage, stage + R * n, n, sdmaInt32, comm, nullptr),
               sdmaSuccess, "", f);
        for (int r = 0; r < R; ++r)
          if (stage[R * n + r * n] != 100 * r + rank)
            f.push_back("staged all-to-all after a refusal: wrong data");
        expect(
            comm, "AlltoAll (shared after the refusal)",
            sdmaAlltoAll(a2a.data(), got.data(), n, sdmaInt32, comm, nullptr),
            sdmaSuccess, "", f);
        for (int r = 0; r < R; ++r)
          if (got[r * n + n - 1] != 100 * r + rank)
            f.push_back("shared all-to-all after a refusal: wrong data");
        sdmaMemFree(comm, stage);
        sdmaMemFree(comm, sym);
        stillWorks(comm, rank, R, f);
      },
      3000, 1, 4096);
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
  // A size below -1 is refused at init, naming the field.
  sdmaUniqueId id;
  ASSERT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.heapBytes = 1 << 20;
  config.sharedBytes = -2;
  sdmaComm_t comm = nullptr;
  EXPECT_EQ(sdmaCommInitRankConfig(&comm, 1, id, 0, &config),
            sdmaInvalidArgument);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("sharedBytes"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
}

TEST(CApiResult, AOneRankCallIsACopyAndRepeatsAsOne) {
  // At one rank a collective is its input copied (CallPath::single); the
  // same arguments again repeat the copy without planning (CallReplay),
  // with the data of the moment, each set of arguments its own; in place
  // moves nothing; once the receive buffer is freed the call is refused.
  auto failures = job(1, [](sdmaComm_t comm, int rank,
                            std::vector<std::string> &f) {
    int32_t *in = nullptr, *out[2] = {nullptr, nullptr};
    ASSERT_EQ(sdmaMemAlloc(comm, (void **)&in, 4 * sizeof(int32_t)),
              sdmaSuccess);
    for (int32_t *&o : out)
      ASSERT_EQ(sdmaMemAlloc(comm, (void **)&o, 4 * sizeof(int32_t)),
                sdmaSuccess);
    for (int round = 0; round < 4; ++round) {
      int32_t *o = out[round % 2];
      for (int i = 0; i < 4; ++i)
        in[i] = 100 * round + i, o[i] = -1;
      expect(comm, "AllGather (one rank, repeated)",
             sdmaAllGather(in, o, 4, sdmaInt32, comm, nullptr), sdmaSuccess, "",
             f);
      for (int i = 0; i < 4; ++i)
        if (o[i] != 100 * round + i) {
          f.push_back("one-rank all-gather round " + std::to_string(round) +
                      ": element " + std::to_string(i) + " is " +
                      std::to_string(o[i]));
          break;
        }
      const char *path = nullptr;
      sdmaCommGetLastPath(comm, &path);
      if (!path || !std::strstr(path, "copy (auto: one rank") ||
          !std::strstr(path, "copied by"))
        f.push_back(std::string("one-rank path: ") + (path ? path : ""));
    }
    for (int round = 0; round < 2; ++round) {
      expect(comm, "AlltoAll (one rank, in place)",
             sdmaAlltoAll(in, in, 4, sdmaInt32, comm, nullptr), sdmaSuccess, "",
             f);
      const char *path = nullptr;
      sdmaCommGetLastPath(comm, &path);
      if (!path || !std::strstr(path, "in place: nothing to move"))
        f.push_back(std::string("one-rank in place: ") + (path ? path : ""));
    }
    if (in[3] != 303)
      f.push_back("in place changed the data: " + std::to_string(in[3]));
    ASSERT_EQ(sdmaMemFree(comm, out[1]), sdmaSuccess);
    sdmaResult_t got = sdmaAllGather(in, out[1], 4, sdmaInt32, comm, nullptr);
    if (got != sdmaInvalidArgument ||
        !std::strstr(sdmaGetLastError(comm), "not symmetric memory"))
      f.push_back("a repeated one-rank call on a freed buffer: " +
                  std::to_string(got) + " " + sdmaGetLastError(comm));
    sdmaMemFree(comm, out[0]);
    sdmaMemFree(comm, in);
    stillWorks(comm, rank, 1, f);
  });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

TEST(CApiResult, ARepeatedCallSeesMemoryThatWentAway) {
  // The same arguments again start the call made before (CallReplay), but
  // not once an allocation has gone: its receive buffer freed, the call is
  // refused as any call on freed memory is, on every rank.
  auto failures =
      job(2, [](sdmaComm_t comm, int rank, std::vector<std::string> &f) {
        int32_t *in = nullptr, *out = nullptr;
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&in, 4 * sizeof(int32_t)),
                  sdmaSuccess);
        ASSERT_EQ(sdmaMemAlloc(comm, (void **)&out, 8 * sizeof(int32_t)),
                  sdmaSuccess);
        for (int round = 0; round < 3; ++round) {
          for (int i = 0; i < 4; ++i)
            in[i] = 100 * round + 10 * rank + i;
          expect(comm, "AllGather (repeated)",
                 sdmaAllGather(in, out, 4, sdmaInt32, comm, nullptr),
                 sdmaSuccess, "", f);
          for (int r = 0; r < 2; ++r)
            for (int i = 0; i < 4; ++i)
              if (out[4 * r + i] != 100 * round + 10 * r + i) {
                f.push_back("repeated all-gather round " +
                            std::to_string(round) + ": wrong data");
                r = 2;
                break;
              }
        }
        ASSERT_EQ(sdmaMemFree(comm, out), sdmaSuccess);
        sdmaResult_t got = sdmaAllGather(in, out, 4, sdmaInt32, comm, nullptr);
        if (got != sdmaInvalidArgument && got != sdmaRemoteError)
          f.push_back("a repeated call on a freed buffer: " +
                      std::to_string(got) + " " + sdmaGetLastError(comm));
        else if (!std::strstr(sdmaGetLastError(comm), "no live allocation") &&
                 !std::strstr(sdmaGetLastError(comm), "refused"))
          f.push_back(std::string("a repeated call on a freed buffer: ") +
                      sdmaGetLastError(comm));
        sdmaMemFree(comm, in);
        stillWorks(comm, rank, 2, f);
      });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}
