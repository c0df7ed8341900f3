//===- CommTest.cpp - one rank of the C API's multi-process test ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage (under sdma-launch, which sets RANK, WORLD_SIZE, SDMA_UNIQUE_ID):
//   sdma-comm-test --case=CASE [--schedule=PATH] [--counts=N,...]
//                  [--iters=N] [--threads-as-ranks=N] [--group-ranks=N]
//                  [--layout=L] [--bad=B]
//                  [--tokens=N] [--routing=R] [--jitter-us=N]
// Cases:
//   collectives  every collective, every root, in place and not, several
//                counts and types, twice (later runs are later epochs), a
//                user schedule from --schedule; every byte of every buffer
//                checked, including the ones that must not change;
//   low-latency  --iters calls back to back without a wait, small ones
//                (no job barrier) and large ones alternating, each with its
//                own buffers; every byte and every call's path checked;
//   graph        (cuda) AllGather captured in a CUDA graph, replayed with new
//                data each time, mixed with direct calls;
//   mismatch     rank 1 passes a different count: every rank must fail;
//   other-buffer rank 1 passes another (agreed before) output buffer: the
//                launch's call tag makes every rank fail, nothing written;
//   unregistered a malloc'd buffer: refused before launch;
//   too-small    rank 1 registers a smaller buffer (SDMA_CHECK_CALLS=0):
//                every rank fails, rank 0 naming rank 1's buffer;
//   other-schedule  rank 1 loads a different schedule: every rank fails;
//   foreign      rank 1 joins with a forged secret: refused, and rank 0
//                fails naming it as missing;
//   exit-early   the last rank leaves after joining (as a thread: makes
//                no call): every other rank's call fails naming it, none
//                hangs;
//   late-rank    (co-launched threads, SDMA_CHECK_CALLS=0,
//                SDMA_TIMEOUT_MS=T) the last rank makes its first call
//                after 1.5 T: the others' first call fails naming it, then
//                every rank's next all-gather is refused at once, out of
//                step (never run beside another rank's different call);
//   stale-shm    (cpu) shared memory segments a dead process left named
//                (older than a minute) are removed by a new communicator;
//                a live process's, or a young one, are kept;
//   shared       the caller's own memory (cuMemAlloc'd blocks; host vectors
//                on the CPU device) in calls shared per call
//                (SDMA_SHARED_BYTES): four rounds, every byte and the path
//                checked, the host's time of first and later uses printed
//                (CommShared.cpp);
//   registered   (cuda) cuMemAlloc'd memory at an offset in its block,
//                registered, used, deregistered and then refused; on the
//                CPU device, registering malloc'd memory is refused;
//   alltoallv    sdmaAlltoAllv, both layouts, five count shapes (uniform,
//                Zipf, zero, one hot peer, exactly capacity), three row
//                sizes, twice: every byte checked against the definition;
//   reductions   sdmaAllReduce (one-shot, two-shot, in place),
//                sdmaReduceScatter and sdmaReduce (every root), in place
//                and not, every element type (or --types=f32,bf16,...):
//                every byte checked against the definition
//                (CommReduce.cpp);
//   alltoallv-2d sdmaAlltoAllv2d (MoE dispatch into padded expert-major
//                rows) then sdmaAlltoAllv2dOffset (combine) on its output:
//                4 count shapes x 1-5 experts x 2 alignments, every byte,
//                split and offset checked against torch's definition;
//   alltoallv-2d-overflow  rank 0 sends an expert more than the capacity:
//                reported naming both ranks, nothing sent from rank 0;
//   alltoallv-2d-bad-offset  the combine given an offset past its input:
//                that segment reported and skipped, the others arrive;
//   alltoallv-2d-combine-overflow  the combine given a count over the
//                capacity: reported by the rank holding it (the copy is
//                pulled by another), that segment skipped, its receive
//                count 0, the others arrive;
//   alltoallv-overflow  rank 0 sends rank 1 a bad count (--bad=over|
//                negative|huge, --layout=slots|packed): rank 0's
//                asynchronous error names both, nothing is overwritten,
//                the receive counts say what arrived;
//   moe-bench    (cuda) DeepSeek-V3 MoE dispatch and combine through
//                sdmaAlltoAllv, --tokens=N --routing=uniform|skewed
//                --layout=packed|slots, or into expert-major rows through
//                sdmaAlltoAllv2d(Offset) (--layout=expert
//                --major-align=A), eager
//                and as one CUDA graph (use --threads-as-ranks on one GPU);
//                with --group-ranks (and --threads-as-ranks) one thread
//                makes every rank's call in a group, on one stream;
//   bench        per-call latency of AllGather and AlltoAll (CSV on rank 0);
//                with --group-ranks=N (no launcher) one thread makes N
//                ranks' calls in groups, every byte checked after;
//   baseline     (no launcher) the in-process cuda-ldst executor timed the
//                same way, programs from --schedule=DIR (NAME-R.hip).
// Exit status: 0 as expected, 1 not (the reason on stderr).
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace sdma::commtest;

namespace {

/// Every collective at `count` elements of `type` (bytes per element `s`).
void collectives(Rank &k, size_t count, sdmaDataType_t type, size_t s,
                 int round) {
  int R = k.ranks, me = k.rank;
  size_t c = count * s;
  std::string tagline = " count " + std::to_string(count) + " type " +
                        std::to_string(type) + " round " +
                        std::to_string(round);
  char *one = static_cast<char *>(k.alloc(c));
  char *all = static_cast<char *>(k.alloc(R * c));
  char *all2 = static_cast<char *>(k.alloc(R * c));
  if (!one || !all || !all2)
    return;
  // AllGather, then in place.
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    k.fill(all, R * c, me, -1);
    char *send = inPlace ? all + me * c : one;
    k.fill(send, c, me, 1);
    k.jitter();
    k.check(sdmaAllGather(send, all, count, type, k.comm, k.stream),
            "sdmaAllGather");
    k.memory.sync(k.stream);
    std::vector<unsigned char> want(R * c);
    for (int r = 0; r < R; ++r)
      for (size_t i = 0; i < c; ++i)
        want[r * c + i] = pattern(r, 1, i);
    k.expect(all, want,
             "AllGather" + std::string(inPlace ? " in place" : "") + tagline);
    k.expectPath("AllGather" + tagline);
  }
  // AlltoAll, then in place.
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    k.fill(all, R * c, me, 2);
    char *recv = inPlace ? all : all2;
    if (!inPlace)
      k.fill(all2, R * c, me, -1);
    k.jitter();
    k.check(sdmaAlltoAll(all, recv, count, type, k.comm, k.stream),
            "sdmaAlltoAll");
    k.memory.sync(k.stream);
    std::vector<unsigned char> want(R * c);
    for (int p = 0; p < R; ++p)
      for (size_t i = 0; i < c; ++i)
        want[p * c + i] = pattern(p, 2, me * c + i);
    k.expect(recv, want,
             "AlltoAll" + std::string(inPlace ? " in place" : "") + tagline);
    k.expectPath("AlltoAll" + tagline);
  }
  // Broadcast from `root` of the pattern `tag`; with `nullOffRoot`, the
  // non-roots pass a NULL sendbuff (NCCL's convention: only the root reads
  // its own; the ranks agree only on buffers others reach).
  auto broadcast = [&](int root, int tag, bool nullOffRoot, const char *what,
                       const std::string &label) {
    k.fill(one, c, me, me == root ? tag : -1);
    k.fill(all, c, me, -1);
    k.jitter();
    k.check(sdmaBroadcast(nullOffRoot && me != root ? nullptr : one, all, count,
                          type, root, k.comm, k.stream),
            what);
    k.memory.sync(k.stream);
    std::vector<unsigned char> want(c);
    for (size_t i = 0; i < c; ++i)
      want[i] = pattern(root, tag, i);
    k.expect(all, want, label);
    k.expectPath(label);
  };
  for (int root = 0; root < R; ++root) {
    std::string at = " root " + std::to_string(root) + tagline;
    broadcast(root, 3, false, "sdmaBroadcast", "Broadcast" + at);
    std::vector<unsigned char> want(c);
    // Scatter.
    k.fill(all, R * c, me, me == root ? 4 : -1);
    k.fill(one, c, me, -1);
    k.jitter();
    k.check(sdmaScatter(all, one, count, type, root, k.comm, k.stream),
            "sdmaScatter");
    k.memory.sync(k.stream);
    for (size_t i = 0; i < c; ++i)
      want[i] = pattern(root, 4, me * c + i);
    k.expect(one, want, "Scatter" + at);
    k.expectPath("Scatter" + at);
    // Gather: only the root's buffer changes.
    k.fill(one, c, me, 5);
    k.fill(all, R * c, me, -1);
    k.jitter();
    k.check(sdmaGather(one, all, count, type, root, k.comm, k.stream),
            "sdmaGather");
    k.memory.sync(k.stream);
    std::vector<unsigned char> gathered(R * c, kUntouched);
    if (me == root)
      for (int r = 0; r < R; ++r)
        for (size_t i = 0; i < c; ++i)
          gathered[r * c + i] = pattern(r, 5, i);
    k.expect(all, gathered, "Gather" + at);
    k.expectPath("Gather" + at);
  }
  broadcast(R - 1, 6, true, "sdmaBroadcast (send NULL off the root)",
            "Broadcast, send NULL off the root" + tagline);
  k.check(sdmaMemFree(k.comm, all2), "sdmaMemFree");
  k.check(sdmaMemFree(k.comm, all), "sdmaMemFree");
  k.check(sdmaMemFree(k.comm, one), "sdmaMemFree");
}

/// A user schedule (an all-gather: input 1 chunk, output `ranks`).
void userSchedule(Rank &k, const std::string &path) {
  sdmaSchedule_t schedule = nullptr;
  if (!k.check(sdmaScheduleLoad(k.comm, path.c_str(), &schedule),
               "sdmaScheduleLoad"))
    return;
  int n = 0;
  const char *name = nullptr;
  long long chunks = 0;
  sdmaScheduleGetBufferCount(schedule, &n);
  sdmaScheduleGetBuffer(schedule, 1, &name, &chunks);
  if (n != 2 || chunks != k.ranks) {
    std::fprintf(stderr, "rank %d: %s: %d buffers, output %lld chunks\n",
                 k.rank, path.c_str(), n, chunks);
    ++k.failures;
    return;
  }
  int R = k.ranks;
  // The middle size above the others: with SDMA_DMA_MIN_BYTES between
  // them, the load/store kernel runs after the DMA path on one program.
  for (size_t c : {size_t(5), size_t(12345), size_t(4096)}) {
    char *in = static_cast<char *>(k.alloc(c));
    char *out = static_cast<char *>(k.alloc(R * c));
    if (!in || !out) // reported (a failed communicator allocates nothing)
      break;
    for (int round = 0; round < 2; ++round) {
      k.fill(in, c, k.rank, 6 + round);
      k.fill(out, R * c, k.rank, -1);
      void *buffers[] = {in, out};
      k.check(sdmaScheduleLaunch(schedule, buffers, 2, c, sdmaUint8, k.stream),
              "sdmaScheduleLaunch");
      k.memory.sync(k.stream);
      std::vector<unsigned char> want(R * c);
      for (int r = 0; r < R; ++r)
        for (size_t i = 0; i < c; ++i)
          want[r * c + i] = pattern(r, 6 + round, i);
      k.expect(out, want, "schedule " + path + " " + std::to_string(c));
      k.expectPath("schedule " + path + " " + std::to_string(c));
    }
    sdmaMemFree(k.comm, out);
    sdmaMemFree(k.comm, in);
  }
  sdmaScheduleFree(schedule);
}

/// Expects `result` to be a failure whose message holds `needle`.

/// AllGather captured in a CUDA graph and replayed with new data, mixed
/// with direct calls (the kernel's run counter lives on the device).
void graph(Rank &k) {
  const cuda::Driver *d = k.memory.driver;
  if (!d || !d->cuStreamBeginCapture) {
    std::fprintf(stderr, "rank %d: graph needs the CUDA device\n", k.rank);
    ++k.failures;
    return;
  }
  int R = k.ranks;
  size_t count = 3001, c = count * 4;
  char *in = static_cast<char *>(k.alloc(c));
  char *out = static_cast<char *>(k.alloc(R * c));
  // Warm up (compiles and checks the call outside the capture).
  k.fill(in, c, k.rank, 20);
  k.check(sdmaAllGather(in, out, count, sdmaFloat32, k.comm, k.stream),
          "warm-up");
  k.memory.sync(k.stream);
  auto stream = static_cast<cuda::CUstream>(k.stream);
  cuda::CUgraph g = nullptr;
  cuda::CUgraphExec exec = nullptr;
  if (d->cuStreamBeginCapture(stream, cuda::CU_STREAM_CAPTURE_MODE_RELAXED) ||
      !k.check(sdmaAllGather(in, out, count, sdmaFloat32, k.comm, k.stream),
               "captured sdmaAllGather") ||
      d->cuStreamEndCapture(stream, &g) ||
      d->cuGraphInstantiateWithFlags(&exec, g, 0)) {
    std::fprintf(stderr, "rank %d: capture failed\n", k.rank);
    ++k.failures;
    return;
  }
  for (int round = 0; round < 6; ++round) {
    int tag = 21 + round;
    k.fill(in, c, k.rank, tag);
    k.fill(out, R * c, k.rank, -1);
    if (round % 3 == 2)
      k.check(sdmaAllGather(in, out, count, sdmaFloat32, k.comm, k.stream),
              "direct sdmaAllGather");
    else if (d->cuGraphLaunch(exec, stream)) {
      std::fprintf(stderr, "rank %d: cuGraphLaunch failed\n", k.rank);
      ++k.failures;
    }
    k.memory.sync(k.stream);
    std::vector<unsigned char> want(R * c);
    for (int r = 0; r < R; ++r)
      for (size_t i = 0; i < c; ++i)
        want[r * c + i] = pattern(r, tag, i);
    k.expect(out, want,
             std::string(round % 3 == 2 ? "direct" : "graph") + " replay " +
                 std::to_string(round));
  }
  d->cuGraphExecDestroy(exec);
  d->cuGraphDestroy(g);
  std::printf("rank %d: graph replays checked\n", k.rank);
}

/// Memory the caller allocated (cuMemAlloc: a block with the buffers at an
/// offset, as a caching allocator hands out), registered and used.
void registered(Rank &k) {
  int R = k.ranks;
  size_t count = 777, c = count * 4;
  const cuda::Driver *d = k.memory.driver;
  if (!d) {
    std::vector<char> host(2 * R * c);
    void *handle = nullptr;
    sdmaResult_t result =
        sdmaMemRegister(k.comm, host.data(), host.size(), &handle);
    if (expectFailure(k, result, "shares only memory from sdmaMemAlloc"))
      ++k.failures;
    return;
  }
  cuda::CUdeviceptr block = 0;
  d->cuMemAlloc_v2(&block, 4096 + 2 * R * c);
  char *in = reinterpret_cast<char *>(block) + 4096, *out = in + R * c;
  void *hin = nullptr, *hout = nullptr;
  if (!k.check(sdmaMemRegister(k.comm, in, R * c, &hin), "register in") ||
      !k.check(sdmaMemRegister(k.comm, out, R * c, &hout), "register out"))
    return;
  for (int round = 0; round < 2; ++round) {
    k.fill(in, R * c, k.rank, 30 + round);
    k.fill(out, R * c, k.rank, -1);
    k.check(sdmaAlltoAll(in, out, count, sdmaFloat32, k.comm, k.stream),
            "sdmaAlltoAll on registered memory");
    k.memory.sync(k.stream);
    std::vector<unsigned char> want(R * c);
    for (int p = 0; p < R; ++p)
      for (size_t i = 0; i < c; ++i)
        want[p * c + i] = pattern(p, 30 + round, k.rank * c + i);
    k.expect(out, want, "AlltoAll on registered memory");
  }
  k.check(sdmaMemDeregister(k.comm, hout), "deregister");
  k.check(sdmaMemDeregister(k.comm, hin), "deregister");
  // Deregistered memory is refused.
  sdmaResult_t result =
      sdmaAlltoAll(in, out, count, sdmaFloat32, k.comm, k.stream);
  if (expectFailure(k, result, "not symmetric memory"))
    ++k.failures;
  d->cuStreamSynchronize(static_cast<cuda::CUstream>(k.stream));
  d->cuMemFree_v2(block);
  if (!k.failures)
    std::printf("rank %d: registered memory checked\n", k.rank);
}

/// Ranks as threads that co-launch (CoLaunch.h): the last rank comes late
/// to its first call (after 1.5x the timeout); the others' first call
/// fails naming it, nothing started. Which call each rank makes next is
/// then unknown, so every rank's next call (the late rank's first) is
/// refused at once, "out of step", long before the timeout: never a late
/// rank's call run beside its peers' next one.
int lateRank(Rank &k, char *in, char *out) {
  int late = k.ranks - 1;
  const char *timeout = std::getenv("SDMA_TIMEOUT_MS");
  int ms = timeout ? std::atoi(timeout) : 0;
  if (ms <= 0) {
    std::fprintf(stderr, "late-rank needs SDMA_TIMEOUT_MS\n");
    return 1;
  }
  int failures = 0;
  if (k.rank == late) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms * 3 / 2));
  } else {
    sdmaResult_t result =
        sdmaAllGather(in, out, 16, sdmaFloat32, k.comm, k.stream);
    k.memory.sync(k.stream);
    if (result == sdmaSuccess)
      sdmaCommGetAsyncError(k.comm, &result);
    failures +=
        expectFailure(k, result, ("rank " + std::to_string(late)).c_str());
  }
  auto start = std::chrono::steady_clock::now();
  sdmaResult_t result = sdmaAllGather(in, out, 64, sdmaUint8, k.comm, k.stream);
  k.memory.sync(k.stream);
  double took = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  failures += expectFailure(k, result, "out of step from here on");
  if (took > ms / 2.0) {
    std::fprintf(stderr, "rank %d: the refusal took %.0f ms (timeout %d)\n",
                 k.rank, took, ms);
    ++failures;
  }
  if (!failures)
    std::printf("rank %d of %d: the call after the refused one refused at "
                "once\n",
                k.rank, k.ranks);
  return failures;
}

int runCase(Rank &k, const Args &args) {
  const std::string &c = args.kase;
  if (c == "collectives") {
    for (int round = 0; round < 2; ++round)
      for (size_t count : args.counts) {
        collectives(k, count, sdmaInt8, 1, round);
        collectives(k, count, sdmaFloat64, 8, round);
      }
    if (!args.schedule.empty())
      userSchedule(k, args.schedule);
    if (!k.failures)
      std::printf("rank %d of %d: every byte as expected\n", k.rank, k.ranks);
    return k.failures ? 1 : 0;
  }
  if (c == "registered") {
    registered(k);
    return k.failures ? 1 : 0;
  }
  if (c == "shared") {
    shared(k);
    return k.failures ? 1 : 0;
  }
  if (c == "graph") {
    graph(k);
    return k.failures ? 1 : 0;
  }
  if (c == "low-latency")
    return lowLatency(k, args.iters);
  if (c == "bench") {
    bench(k, args.iters);
    return k.failures ? 1 : 0;
  }
  if (c == "alltoallv") {
    allToAllv(k);
    return k.failures ? 1 : 0;
  }
  if (c == "p2p") {
    pointToPoint(k);
    if (!k.failures)
      std::printf("rank %d of %d: every point-to-point byte as expected\n",
                  k.rank, k.ranks);
    return k.failures ? 1 : 0;
  }
  if (c == "reductions") {
    reductions(k, args);
    if (!k.failures)
      std::printf("rank %d of %d: every reduction as expected\n", k.rank,
                  k.ranks);
    return k.failures ? 1 : 0;
  }
  if (c == "variants") {
    int n = reductionVariants(k);
    if (!k.failures)
      std::printf("rank %d of %d: %d reduction variants as expected\n", k.rank,
                  k.ranks, n);
    return k.failures ? 1 : 0;
  }
  if (c == "alltoallv-overflow")
    return allToAllvOverflow(k, args);
  if (c == "alltoallv-2d") {
    allToAllv2d(k);
    return k.failures ? 1 : 0;
  }
  if (c == "alltoallv-2d-overflow")
    return allToAllv2dOverflow(k);
  if (c == "alltoallv-2d-bad-offset")
    return allToAllv2dBadOffset(k, false);
  if (c == "alltoallv-2d-combine-overflow")
    return allToAllv2dBadOffset(k, true);
  if (c == "moe-bench") {
    moeBench(k, args);
    return k.failures ? 1 : 0;
  }
  char *in = static_cast<char *>(k.alloc(4096));
  char *out = static_cast<char *>(k.alloc(4096 * k.ranks));
  if (c == "one-call") {
    // One all-gather, checked (what a compile that fails stops).
    k.fill(in, 64, k.rank, 1);
    if (!k.check(sdmaAllGather(in, out, 64, sdmaUint8, k.comm, k.stream),
                 "sdmaAllGather"))
      return 1;
    k.memory.sync(k.stream);
    for (int r = 0; r < k.ranks; ++r) {
      std::vector<unsigned char> want(64);
      for (size_t i = 0; i < 64; ++i)
        want[i] = pattern(r, 1, i);
      k.expect(out + 64 * r, want, "AllGather from rank " + std::to_string(r));
    }
    return k.failures ? 1 : 0;
  }
  if (c == "mismatch")
    return expectFailure(k,
                         sdmaAllGather(in, out, k.rank == 1 ? 64 : 32,
                                       sdmaFloat32, k.comm, k.stream),
                         "differs between ranks");
  if (c == "other-buffer") {
    // Two output buffers, each used by every rank first (each signature
    // then agreed once), then rank 1 alone gathers into the other one: the
    // host does not compare signatures it has seen, the launch does (its
    // call tag), and every rank refuses before any byte moves.
    char *other = static_cast<char *>(k.alloc(4096 * k.ranks));
    for (char *o : {out, other}) {
      k.fill(in, 64, k.rank, 1);
      if (!k.check(sdmaAllGather(in, o, 64, sdmaUint8, k.comm, k.stream),
                   "sdmaAllGather"))
        return 1;
      k.memory.sync(k.stream);
    }
    k.fill(out, 64 * k.ranks, k.rank, -1);
    k.fill(other, 64 * k.ranks, k.rank, -1);
    sdmaResult_t result = sdmaAllGather(in, k.rank == 1 ? other : out, 64,
                                        sdmaUint8, k.comm, k.stream);
    k.memory.sync(k.stream);
    if (result == sdmaSuccess)
      sdmaCommGetAsyncError(k.comm, &result);
    // A GPU's DMA path cannot withdraw the copies it enqueued behind the
    // entry barrier (GpuDmaKernel.h): there only the refusal is checked.
    const char *device = std::getenv("SDMA_DEVICE");
    const char *path = std::getenv("SDMA_PATH");
    bool gpuDma = !(device && std::string(device) == "cpu") && path &&
                  std::string(path) == "dma";
    std::vector<unsigned char> untouched(64 * k.ranks, kUntouched);
    if (!gpuDma) {
      k.expect(out, untouched, "the output after a refused call");
      k.expect(other, untouched, "the other output after a refused call");
    }
    return expectFailure(k, result, "made different calls") + k.failures;
  }
  if (c == "unregistered") {
    std::vector<char> host(4096);
    return expectFailure(
        k, sdmaAllGather(host.data(), out, 16, sdmaFloat32, k.comm, k.stream),
        "not symmetric memory");
  }
  if (c == "too-small") {
    void *handle = nullptr;
    size_t size = k.rank == 1 ? 256 : 4096 * k.ranks;
    if (!k.check(sdmaMemRegister(k.comm, out, size, &handle),
                 "sdmaMemRegister"))
      return 1;
    // Rank 1's own view is fine: its call is enqueued and its kernel waits
    // for the others until the timeout (the asynchronous error on a GPU).
    sdmaResult_t result =
        sdmaAllGather(in, out, 1024, sdmaUint8, k.comm, k.stream);
    k.memory.sync(k.stream);
    if (result == sdmaSuccess)
      sdmaCommGetAsyncError(k.comm, &result);
    return expectFailure(k, result,
                         k.rank == 1 ? "timed out"
                                     : "rank 1's buffer 'output' is too small");
  }
  if (c == "other-schedule") {
    std::string text =
        "sdma.schedule @s ranks(%R) buffers(%b : ranks) {\n"
        "  affine.for %r = 0 to %R {\n"
        "    %n = sdma.rank_add %r, " +
        std::to_string(k.rank == 1 ? 1 : 0) +
        "\n    sdma.copy %b[%r, 1] on %r -> %b[%r, 1] on %n\n  }\n}\n";
    sdmaSchedule_t schedule = nullptr;
    return expectFailure(k, sdmaScheduleLoad(k.comm, text.c_str(), &schedule),
                         "differs between ranks");
  }
  if (c == "late-rank")
    return lateRank(k, in, out);
  if (c == "exit-early") {
    int leaver = k.ranks - 1;
    // Leaves without a word: its process, or as a thread (its communicator
    // left alive) makes no call.
    if (k.rank == leaver && args.threadsAsRanks)
      return 0;
    if (k.rank == leaver)
      std::_Exit(0);
    sdmaResult_t result =
        sdmaAllGather(in, out, 16, sdmaFloat32, k.comm, k.stream);
    k.memory.sync(k.stream);
    if (result == sdmaSuccess)
      sdmaCommGetAsyncError(k.comm, &result);
    return expectFailure(k, result, ("rank " + std::to_string(leaver)).c_str());
  }
  std::fprintf(stderr, "unknown case %s\n", c.c_str());
  return 1;
}

/// Rank 1 plays a foreign process: the job's address, a forged secret. The
/// root refuses it; rank 0 then fails naming rank 1 as missing.
int foreign(int rank, int ranks, sdmaUniqueId id) {
  Rank k;
  k.rank = rank;
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  config.timeoutMs = 2000;
  if (rank == 1)
    id.internal[20] ^= 1; // the secret's first byte
  sdmaResult_t result =
      sdmaCommInitRankConfig(&k.comm, ranks, id, rank, &config);
  return expectFailure(k, result, rank == 1 ? "refused" : "rank 1");
}

/// Plants segments named as the CPU device names them (/sdma-<job>-<pid>-
/// <rank>-<n>) before the communicator starts: one of a process that has
/// exited, an hour old, must be gone after sdmaCommInitRank; one of the same
/// dead process but new, and one of this live process, must stay.
int staleShm(int rank, int ranks, const sdmaUniqueId &id) {
  pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  waitpid(dead, nullptr, 0);
  char job[17];
  std::snprintf(job, sizeof(job), "%016llx", 0x5dead000000000ull + rank);
  auto name = [&](pid_t pid, int n) {
    return "/sdma-" + std::string(job) + "-" + std::to_string(pid) + "-0-" +
           std::to_string(n);
  };
  auto plant = [&](const std::string &segment, bool old) {
    int fd = shm_open(segment.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
      return false;
    timespec when[2] = {{std::time(nullptr) - 3600, 0},
                        {std::time(nullptr) - 3600, 0}};
    bool ok = !old || futimens(fd, when) == 0;
    close(fd);
    return ok;
  };
  auto exists = [](const std::string &segment) {
    return access(("/dev/shm" + segment).c_str(), F_OK) == 0;
  };
  std::string stale = name(dead, 0), young = name(dead, 1),
              live = name(getpid(), 2);
  Rank k;
  k.rank = rank;
  if (!plant(stale, true) || !plant(young, false) || !plant(live, true)) {
    std::fprintf(stderr, "rank %d: cannot plant segments: %s\n", rank,
                 std::strerror(errno));
    return 1;
  }
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = "cpu";
  bool joined =
      k.check(sdmaCommInitRankConfig(&k.comm, ranks, id, rank, &config),
              "sdmaCommInitRankConfig");
  bool staleGone = !exists(stale), youngKept = exists(young),
       liveKept = exists(live);
  shm_unlink(stale.c_str());
  shm_unlink(young.c_str());
  shm_unlink(live.c_str());
  if (joined)
    sdmaCommDestroy(k.comm);
  if (!joined || !staleGone || !youngKept || !liveKept) {
    std::fprintf(stderr,
                 "rank %d: stale %s, young %s, live %s (want gone, kept, "
                 "kept)\n",
                 rank, staleGone ? "gone" : "kept", youngKept ? "kept" : "gone",
                 liveKept ? "kept" : "gone");
    return 1;
  }
  std::printf("rank %d: stale shared memory removed, a live or young "
              "process's kept\n",
              rank);
  return 0;
}

int runRank(int rank, int ranks, const sdmaUniqueId &id, const Args &args) {
  if (args.kase == "foreign")
    return foreign(rank, ranks, id);
  if (args.kase == "stale-shm")
    return staleShm(rank, ranks, id);
  Rank k;
  k.rank = rank;
  k.ranks = ranks;
  std::string error;
  if (!k.memory.init(error)) {
    std::fprintf(stderr, "rank %d: %s\n", rank, error.c_str());
    return 1;
  }
  // --group-ranks with --threads-as-ranks: one stream for every rank (a
  // group's calls run as one launch).
  static std::mutex sharedMutex;
  static sdmaStream_t shared = nullptr;
  if (k.memory.driver) {
    std::lock_guard<std::mutex> lock(sharedMutex);
    if (!args.groupRanks || !shared)
      k.memory.driver->cuStreamCreate(
          reinterpret_cast<cuda::CUstream *>(&k.stream), 1);
    if (args.groupRanks && !shared)
      shared = k.stream;
    if (args.groupRanks)
      k.stream = shared;
  }
  if (!k.check(sdmaCommInitRank(&k.comm, ranks, id, rank), "sdmaCommInitRank"))
    return 1;
  k.jitterUs = args.jitterUs;
  k.seed = 7919u * unsigned(rank + 1);
  int status = runCase(k, args);
  if (args.kase != "exit-early" || status)
    sdmaCommDestroy(k.comm);
  return status;
}
} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--case=", 0) == 0)
      args.kase = a.substr(7);
    else if (a.rfind("--schedule=", 0) == 0)
      args.schedule = a.substr(11);
    else if (a.rfind("--iters=", 0) == 0)
      args.iters = std::atoi(a.c_str() + 8);
    else if (a.rfind("--tokens=", 0) == 0)
      args.tokens = std::atoi(a.c_str() + 9);
    else if (a.rfind("--routing=", 0) == 0)
      args.routing = a.substr(10);
    else if (a.rfind("--layout=", 0) == 0)
      args.layout = a.substr(9);
    else if (a.rfind("--major-align=", 0) == 0)
      args.majorAlign = std::atoi(a.c_str() + 14);
    else if (a.rfind("--types=", 0) == 0)
      args.types = a.substr(8);
    else if (a.rfind("--bad=", 0) == 0)
      args.bad = a.substr(6);
    else if (a.rfind("--jitter-us=", 0) == 0)
      args.jitterUs = std::atoi(a.c_str() + 12);
    else if (a.rfind("--threads-as-ranks=", 0) == 0)
      args.threadsAsRanks = std::atoi(a.c_str() + 19);
    else if (a.rfind("--group-ranks=", 0) == 0)
      args.groupRanks = std::atoi(a.c_str() + 14);
    else if (a.rfind("--counts=", 0) == 0) {
      args.counts.clear();
      for (const char *p = a.c_str() + 9; *p;) {
        args.counts.push_back(std::strtoull(p, const_cast<char **>(&p), 10));
        if (*p == ',')
          ++p;
      }
    } else {
      std::fprintf(stderr, "sdma-comm-test: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (args.kase == "baseline")
    return baseline(args);
  if (args.kase == "bench" && args.groupRanks > 0)
    return groupBench(args, args.groupRanks);
  sdmaUniqueId id;
  if (args.threadsAsRanks > 0) {
    // One process, one thread per rank (each its own communicator and
    // stream), as a bench against the in-process executor.
    if (sdmaGetUniqueId(&id) != sdmaSuccess)
      return 1;
    std::vector<int> status(args.threadsAsRanks, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < args.threadsAsRanks; ++r)
      threads.emplace_back(
          [&, r] { status[r] = runRank(r, args.threadsAsRanks, id, args); });
    for (std::thread &t : threads)
      t.join();
    return *std::max_element(status.begin(), status.end());
  }
  const char *rank = std::getenv("RANK"), *size = std::getenv("WORLD_SIZE"),
             *text = std::getenv("SDMA_UNIQUE_ID");
  if (!rank || !size || !text ||
      sdmaUniqueIdFromString(text, &id) != sdmaSuccess) {
    std::fprintf(stderr, "sdma-comm-test: run under sdma-launch (RANK, "
                         "WORLD_SIZE and SDMA_UNIQUE_ID unset or bad)\n");
    return 2;
  }
  return runRank(std::atoi(rank), std::atoi(size), id, args);
}
