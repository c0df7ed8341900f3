//===- NcclApiTest.cpp - a program written for NCCL, run on sdma ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// One rank of a job (sdma-launch sets RANK and WORLD_SIZE) that uses only
// NCCL's API (compiled against CUDA's nccl.h where it exists) and is linked
// to sdma's drop-in as libnccl.so.2. Its buffers are plain host memory
// (vectors; ncclMemAlloc's too on the CPU device, SDMA_DEVICE=cpu): every
// served call runs on pointers sdma never allocated, and every byte is
// checked against the collective's definition: AllGather (in and out of
// place), AlltoAll, Broadcast and Bcast at every root, Gather and Scatter
// at every root, AllReduce with each operator in int32, float and double
// (and ncclAvg),
// ReduceScatter, Reduce at every root, some inside a group; PreMulSum
// (NcclPreMulSumCases.cpp). Then NCCL's
// error behaviour: an unknown operator, an fp8 type and a bad root refused on
// every rank with ncclInvalidArgument and a message, ranks disagreeing on a
// count (one of them growing the staging area) refused on every rank as
// invalid usage, the communicator still usable after each; ncclSend and
// ncclRecv (NcclP2pCases.cpp); ncclCommSplit by parity (and
// NOCOLOR), an all-gather on each part; a watchdog thread polling the async
// error throughout; an abort from another thread, after which the communicator
// is refused. Exit 0 and
// "rank R of N: every NCCL call as expected" when all held.
//
//   sdma-launch --nproc-per-node=3 sdma-nccl-test ID_FILE
//
//===----------------------------------------------------------------------===//

#include "NcclTestSupport.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace sdma::nccltest;

namespace {

template <typename T>
void allReduce(ncclComm_t comm, ncclDataType_t type, ncclRedOp_t op, size_t n) {
  std::vector<T> in = input<T>(rank, n), out(n), want(n);
  for (size_t i = 0; i < n; ++i) {
    T acc = T(value(0, i));
    for (int r = 1; r < ranks; ++r) {
      T v = T(value(r, i));
      acc = op == ncclSum    ? acc + v
            : op == ncclProd ? acc * v
            : op == ncclMax  ? (v > acc ? v : acc)
                             : (v < acc ? v : acc);
    }
    want[i] = acc;
  }
  check(ncclAllReduce(in.data(), out.data(), n, type, op, comm, nullptr),
        ncclSuccess, "ncclAllReduce", comm);
  expect(out, want, "AllReduce op " + std::to_string(op));
  // In place.
  check(ncclAllReduce(in.data(), in.data(), n, type, op, comm, nullptr),
        ncclSuccess, "ncclAllReduce in place", comm);
  expect(in, want, "AllReduce in place op " + std::to_string(op));
}

void dataMovement(ncclComm_t comm, size_t n) {
  // AllGather, out of place into ncclMemAlloc'd memory, and in place.
  std::vector<int> mine = input<int>(rank, n), want = everyRank<int>(n);
  // ncclMemAlloc's memory is the host's on the CPU device (checked here
  // directly); on a GPU it is device memory, which this program (no CUDA
  // of its own) allocates and frees but reads through host buffers.
  const char *device = std::getenv("SDMA_DEVICE");
  bool hostMemory = device && std::string(device) == "cpu";
  int *out = nullptr;
  check(ncclMemAlloc((void **)&out, ranks * n * sizeof(int)), ncclSuccess,
        "ncclMemAlloc", nullptr);
  std::vector<int> hostOut(ranks * n);
  int *target = hostMemory ? out : hostOut.data();
  check(ncclAllGather(mine.data(), target, n, ncclInt32, comm, nullptr),
        ncclSuccess, "ncclAllGather", comm);
  expect(std::vector<int>(target, target + ranks * n), want, "AllGather");
  std::vector<int> inPlace(ranks * n, -99);
  std::memcpy(inPlace.data() + rank * n, mine.data(), n * sizeof(int));
  check(ncclAllGather(inPlace.data() + rank * n, inPlace.data(), n, ncclInt32,
                      comm, nullptr),
        ncclSuccess, "ncclAllGather in place", comm);
  expect(inPlace, want, "AllGather in place");
  check(ncclMemFree(out), ncclSuccess, "ncclMemFree", nullptr);

  // AlltoAll: block p of rank r's input goes to rank p.
  std::vector<float> a2a = input<float>(rank, ranks * n), a2aOut(ranks * n),
                     a2aWant = everyRank<float>(n, rank * n);
  check(ncclAlltoAll(a2a.data(), a2aOut.data(), n, ncclFloat32, comm, nullptr),
        ncclSuccess, "ncclAlltoAll", comm);
  expect(a2aOut, a2aWant, "AlltoAll");

  for (int root = 0; root < ranks; ++root) {
    std::string at = " root " + std::to_string(root);
    // Broadcast (others' send NULL) and Bcast, in a group.
    std::vector<double> b(n, -1), bWant = input<double>(root, n);
    std::vector<double> src = input<double>(rank, n);
    check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
    check(ncclBroadcast(rank == root ? src.data() : nullptr, b.data(), n,
                        ncclFloat64, root, comm, nullptr),
          ncclSuccess, "ncclBroadcast" + at, comm);
    check(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd", nullptr);
    expect(b, bWant, "Broadcast" + at);
    std::vector<uint8_t> c(n, 0);
    for (size_t i = 0; i < n; ++i)
      c[i] = uint8_t(rank == root ? 200 + i % 50 : 1);
    check(ncclBcast(c.data(), n, ncclUint8, root, comm, nullptr), ncclSuccess,
          "ncclBcast" + at, comm);
    for (size_t i = 0; i < n; ++i)
      if (c[i] != uint8_t(200 + i % 50)) {
        std::fprintf(stderr, "rank %d: Bcast%s wrong\n", rank, at.c_str());
        ++failures;
        break;
      }
    // Reduce (sum) to the root: only the root's receive buffer changes.
    std::vector<long long> red = input<long long>(rank, n), redOut(n, 7),
                           redWant(n, 7);
    if (rank == root)
      for (size_t i = 0; i < n; ++i) {
        redWant[i] = 0;
        for (int r = 0; r < ranks; ++r)
          redWant[i] += value(r, i);
      }
    check(ncclReduce(red.data(), redOut.data(), n, ncclInt64, ncclSum, root,
                     comm, nullptr),
          ncclSuccess, "ncclReduce" + at, comm);
    expect(redOut, redWant, "Reduce" + at);
    // Gather and Scatter.
    std::vector<int> g(ranks * n, -1), gWant(ranks * n, -1);
    if (rank == root)
      gWant = want;
    check(ncclGather(mine.data(), g.data(), n, ncclInt32, root, comm, nullptr),
          ncclSuccess, "ncclGather" + at, comm);
    expect(g, gWant, "Gather" + at);
    // NCCL ignores the receive buffer off the root: NULL there.
    std::fill(g.begin(), g.end(), -1);
    check(ncclGather(mine.data(), rank == root ? g.data() : nullptr, n,
                     ncclInt32, root, comm, nullptr),
          ncclSuccess, "ncclGather (NULL off the root)" + at, comm);
    expect(g, gWant, "Gather (NULL off the root)" + at);
    std::vector<int> sc = input<int>(rank, ranks * n), scOut(n);
    check(
        ncclScatter(sc.data(), scOut.data(), n, ncclInt32, root, comm, nullptr),
        ncclSuccess, "ncclScatter" + at, comm);
    check(ncclScatter(rank == root ? sc.data() : nullptr, scOut.data(), n,
                      ncclInt32, root, comm, nullptr),
          ncclSuccess, "ncclScatter (NULL off the root)" + at, comm);
    expect(scOut, input<int>(root, n, rank * n), "Scatter" + at);
  }
}

/// Buffers shared on first use (SDMA_NCCL_SHARED_BYTES at most the
/// calls' size): ncclMemAlloc'd memory that is no window, as a
/// caching-allocator block is on a GPU. Pieces at different offsets of one
/// block, a second block, the same buffers again (the block mapped once),
/// in place; every byte checked. NCCL_TEST_SHARE_HOST_RANK: that rank
/// passes host vectors instead, which cannot be shared, so every rank
/// stages that call alike. The CPU device only.
void sharedBuffers(ncclComm_t comm, size_t n) {
  int *block[2] = {nullptr, nullptr};
  size_t words = 4 * ranks * n;
  for (int *&b : block)
    check(ncclMemAlloc((void **)&b, words * sizeof(int)), ncclSuccess,
          "ncclMemAlloc", nullptr);
  if (!block[0] || !block[1])
    return;
  const char *host = std::getenv("NCCL_TEST_SHARE_HOST_RANK");
  bool plain = host && std::atoi(host) == rank;
  std::vector<int> hostBlock(words);
  std::vector<int> mine = input<int>(rank, n), want = everyRank<int>(n);
  for (int round = 0; round < 3; ++round) {
    // Round 0: block 0 at offset 0 and n; round 1: block 1 (new); round 2:
    // block 0 again, the output first.
    int *base = plain ? hostBlock.data() : block[round == 1];
    int *in = base + (round == 2 ? 2 * ranks * n : 0);
    int *out = base + (round == 2 ? 0 : ranks * n);
    std::string how = " (shared, round " + std::to_string(round) + ")";
    std::memcpy(in, mine.data(), n * sizeof(int));
    std::fill(out, out + ranks * n, -1);
    check(ncclAllGather(in, out, n, ncclInt32, comm, nullptr), ncclSuccess,
          "ncclAllGather" + how, comm);
    expect(std::vector<int>(out, out + ranks * n), want, "AllGather" + how);
    std::vector<int> a2a = input<int>(rank, ranks * n),
                     a2aWant = everyRank<int>(n, rank * n);
    std::memcpy(in, a2a.data(), ranks * n * sizeof(int));
    check(ncclAlltoAll(in, out, n, ncclInt32, comm, nullptr), ncclSuccess,
          "ncclAlltoAll" + how, comm);
    expect(std::vector<int>(out, out + ranks * n), a2aWant, "AlltoAll" + how);
    // In place: rank r's chunk at out + r * n.
    std::fill(out, out + ranks * n, -1);
    std::memcpy(out + rank * n, mine.data(), n * sizeof(int));
    check(ncclAllGather(out + rank * n, out, n, ncclInt32, comm, nullptr),
          ncclSuccess, "ncclAllGather in place" + how, comm);
    expect(std::vector<int>(out, out + ranks * n), want,
           "AllGather in place" + how);
    // A reduction: every rank's input summed into every rank's output.
    std::vector<int> sumWant(ranks * n, 0);
    for (size_t i = 0; i < ranks * n; ++i)
      for (int r = 0; r < ranks; ++r)
        sumWant[i] += value(r, i);
    for (size_t i = 0; i < ranks * n; ++i)
      in[i] = value(rank, i);
    check(ncclAllReduce(in, out, ranks * n, ncclInt32, ncclSum, comm, nullptr),
          ncclSuccess, "ncclAllReduce" + how, comm);
    expect(std::vector<int>(out, out + ranks * n), sumWant, "AllReduce" + how);
  }
  for (int *b : block)
    check(ncclMemFree(b), ncclSuccess, "ncclMemFree", nullptr);
}

/// Windows (ncclCommWindowRegister, collective, over ncclMemAlloc'd
/// memory, shared between the processes): an AllGather and an AlltoAll
/// whose buffers lie in windows run on them in place; the same on plain
/// buffers (staged). The CPU device only (this program reads the buffers
/// from the host). NCCL_TEST_MIXED_WINDOWS: rank 0 alone passes windows.
void windows(ncclComm_t comm, size_t n) {
  std::vector<int> mine = input<int>(rank, n), want = everyRank<int>(n);
  int *in = nullptr, *out = nullptr;
  check(ncclMemAlloc((void **)&in, ranks * n * sizeof(int)), ncclSuccess,
        "ncclMemAlloc", nullptr);
  check(ncclMemAlloc((void **)&out, ranks * n * sizeof(int)), ncclSuccess,
        "ncclMemAlloc", nullptr);
  if (!in || !out)
    return;
  ncclWindow_t winIn = nullptr, winOut = nullptr;
  check(ncclCommWindowRegister(comm, in, ranks * n * sizeof(int), &winIn, 0),
        ncclSuccess, "ncclCommWindowRegister", comm);
  check(ncclCommWindowRegister(comm, out, ranks * n * sizeof(int), &winOut, 0),
        ncclSuccess, "ncclCommWindowRegister", comm);
  std::vector<int> hostIn(ranks * n), hostOut(ranks * n);
  for (int plain = 0; plain < 2; ++plain) {
    int *src = plain ? hostIn.data() : in;
    int *dst = plain ? hostOut.data() : out;
    std::string how = plain ? " (plain buffers)" : " (windows)";
    std::memcpy(src, mine.data(), n * sizeof(int));
    std::fill(dst, dst + ranks * n, -1);
    check(ncclAllGather(src, dst, n, ncclInt32, comm, nullptr), ncclSuccess,
          "ncclAllGather" + how, comm);
    expect(std::vector<int>(dst, dst + ranks * n), want, "AllGather" + how);
    // AlltoAll: block p of rank r's input goes to rank p.
    std::vector<int> a2a = input<int>(rank, ranks * n),
                     a2aWant = everyRank<int>(n, rank * n);
    std::memcpy(src, a2a.data(), ranks * n * sizeof(int));
    check(ncclAlltoAll(src, dst, n, ncclInt32, comm, nullptr), ncclSuccess,
          "ncclAlltoAll" + how, comm);
    expect(std::vector<int>(dst, dst + ranks * n), a2aWant, "AlltoAll" + how);
  }
  check(ncclCommWindowDeregister(comm, winOut), ncclSuccess,
        "ncclCommWindowDeregister", comm);
  check(ncclCommWindowDeregister(comm, winIn), ncclSuccess,
        "ncclCommWindowDeregister", comm);
  check(ncclMemFree(out), ncclSuccess, "ncclMemFree", nullptr);
  check(ncclMemFree(in), ncclSuccess, "ncclMemFree", nullptr);
  // ncclMemAlloc's shared segments (sdma-6e63636c00000000-PID-0-N) are
  // gone once freed.
  std::string ours = "sdma-6e63636c00000000-" + std::to_string(getpid()) + "-";
  if (DIR *shm = opendir("/dev/shm")) {
    while (dirent *entry = readdir(shm))
      if (std::string(entry->d_name).rfind(ours, 0) == 0) {
        std::fprintf(stderr, "rank %d: /dev/shm/%s left after ncclMemFree\n",
                     rank, entry->d_name);
        ++failures;
      }
    closedir(shm);
  }
}

void reductions(ncclComm_t comm, size_t n) {
  for (int op = ncclSum; op <= ncclMin; ++op) {
    allReduce<int>(comm, ncclInt32, ncclRedOp_t(op), n);
    allReduce<double>(comm, ncclFloat64, ncclRedOp_t(op), n);
  }
  allReduce<float>(comm, ncclFloat32, ncclSum, n);
  // ncclAvg: the sum divided once by the rank count (integers truncate).
  std::vector<int> in32 = input<int>(rank, n), out32(n), want32(n);
  std::vector<double> in64 = input<double>(rank, n), out64(n), want64(n);
  for (size_t i = 0; i < n; ++i) {
    int sum = 0;
    for (int r = 0; r < ranks; ++r)
      sum += value(r, i);
    want32[i] = sum / ranks;
    want64[i] = double(sum) / ranks;
  }
  check(ncclAllReduce(in32.data(), out32.data(), n, ncclInt32, ncclAvg, comm,
                      nullptr),
        ncclSuccess, "ncclAllReduce ncclAvg int32", comm);
  expect(out32, want32, "AllReduce avg int32");
  check(ncclAllReduce(in64.data(), out64.data(), n, ncclFloat64, ncclAvg, comm,
                      nullptr),
        ncclSuccess, "ncclAllReduce ncclAvg float64", comm);
  expect(out64, want64, "AllReduce avg float64");
  // ReduceScatter: block `rank` of the sum.
  std::vector<float> in = input<float>(rank, ranks * n), out(n), want(n);
  for (size_t i = 0; i < n; ++i) {
    want[i] = 0;
    for (int r = 0; r < ranks; ++r)
      want[i] += float(value(r, rank * n + i));
  }
  check(ncclReduceScatter(in.data(), out.data(), n, ncclFloat32, ncclSum, comm,
                          nullptr),
        ncclSuccess, "ncclReduceScatter", comm);
  expect(out, want, "ReduceScatter");
}

void errors(ncclComm_t comm) {
  std::vector<float> a(16, 1), b(16 * ranks, 0);
  check(ncclAllReduce(a.data(), b.data(), 16, ncclFloat32, ncclNumOps, comm,
                      nullptr),
        ncclInvalidArgument, "ncclAllReduce operator 5", comm, "operator 5");
  check(ncclAllGather(a.data(), b.data(), 4, ncclFloat8e4m3, comm, nullptr),
        ncclInvalidArgument, "ncclAllGather fp8", comm, "datatype 10");
  check(ncclBroadcast(a.data(), b.data(), 4, ncclFloat32, ranks, comm, nullptr),
        ncclInvalidArgument, "ncclBroadcast bad root", comm, "not a rank");
  // A NULL receive buffer on the last rank only: refused on every rank,
  // there as an invalid argument, elsewhere as the remote rank's refusal.
  check(ncclAllGather(a.data(), rank == ranks - 1 ? nullptr : b.data(), 4,
                      ncclFloat32, comm, nullptr),
        rank == ranks - 1 ? ncclInvalidArgument : ncclRemoteError,
        "ncclAllGather NULL recv on one rank", comm,
        "the receive buffer must not be null");
  check(ncclGroupEnd(), ncclInvalidUsage, "ncclGroupEnd unopened", nullptr,
        "no ncclGroupStart");
  // Ranks that disagree on a count (rank 0's call would grow the staging
  // area, the others' would not): refused on every rank, not a hang.
  {
    size_t big = 1 << 20, count = rank == 0 ? big : 16;
    std::vector<float> in(big), out(big * ranks);
    ncclResult_t r =
        ncclAllGather(in.data(), out.data(), count, ncclFloat32, comm, nullptr);
    if (r != ncclInvalidUsage ||
        !std::strstr(ncclGetLastError(comm), "differs between ranks")) {
      std::fprintf(stderr,
                   "rank %d: AllGather with disagreeing counts: %d (%s)\n",
                   rank, int(r), ncclGetLastError(comm));
      ++failures;
    }
  }
  ncclResult_t async = ncclInternalError;
  check(ncclCommGetAsyncError(comm, &async), ncclSuccess,
        "ncclCommGetAsyncError", comm);
  check(async, ncclSuccess, "the async error", comm);
  // Still usable after the refusals.
  dataMovement(comm, 3);
}

/// ncclCommSplit: parity groups ordered by descending parent rank; at 3
/// ranks or more the last takes NCCL_SPLIT_NOCOLOR and gets NULL.
void split(ncclComm_t comm) {
  bool none = ranks > 2 && rank == ranks - 1;
  ncclComm_t sub = nullptr;
  check(ncclCommSplit(comm, none ? NCCL_SPLIT_NOCOLOR : rank % 2, -rank, &sub,
                      nullptr),
        ncclSuccess, "ncclCommSplit", comm);
  if (none) {
    if (sub) {
      std::fprintf(stderr, "rank %d: NCCL_SPLIT_NOCOLOR got a comm\n", rank);
      ++failures;
    }
    return;
  }
  if (!sub)
    return;
  std::vector<int> members;
  for (int q = ranks - 1; q >= 0; --q)
    if (q % 2 == rank % 2 && !(ranks > 2 && q == ranks - 1))
      members.push_back(q);
  int count = 0, me = -1;
  check(ncclCommCount(sub, &count), ncclSuccess, "split ncclCommCount", sub);
  check(ncclCommUserRank(sub, &me), ncclSuccess, "split ncclCommUserRank", sub);
  int position = 0;
  while (members[position] != rank)
    ++position;
  if (count != int(members.size()) || me != position) {
    std::fprintf(stderr, "rank %d: split comm: count %d rank %d\n", rank, count,
                 me);
    ++failures;
  }
  int mine = rank * 10 + 1;
  std::vector<int> got(members.size(), -1), want;
  for (int q : members)
    want.push_back(q * 10 + 1);
  check(ncclAllGather(&mine, got.data(), 1, ncclInt32, sub, nullptr),
        ncclSuccess, "split ncclAllGather", sub);
  expect(got, want, "AllGather on the split communicator");
  check(ncclCommDestroy(sub), ncclSuccess, "split ncclCommDestroy", nullptr);
}

/// How an all-gather on `comm` ends: its result, or once enqueued the
/// communicator's asynchronous error (a call with a dead peer fails one
/// way or the other).
ncclResult_t allGatherOutcome(ncclComm_t comm) {
  std::vector<int> in(4, rank), out(4 * ranks);
  ncclResult_t r =
      ncclAllGather(in.data(), out.data(), 4, ncclInt32, comm, nullptr);
  if (r != ncclSuccess)
    return r;
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm, &async);
  return async;
}

/// A stream of its own for a rank of this process on a GPU (ranks of one
/// process must not share the default stream: a rank's kernel would wait
/// for peers queued behind it), from the CUDA driver; null on the CPU
/// device. Runs on the rank's thread.
struct RankStream {
  void *stream = nullptr;
  int (*synchronize)(void *) = nullptr;
  int (*destroy)(void *) = nullptr;
  RankStream() {
    const char *device = std::getenv("SDMA_DEVICE");
    if (device && std::string(device) == "cpu")
      return;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda)
      return;
    auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(cuda, "cuInit"));
    auto retain = reinterpret_cast<int (*)(void **, int)>(
        dlsym(cuda, "cuDevicePrimaryCtxRetain"));
    auto current =
        reinterpret_cast<int (*)(void *)>(dlsym(cuda, "cuCtxSetCurrent"));
    auto create = reinterpret_cast<int (*)(void **, unsigned)>(
        dlsym(cuda, "cuStreamCreate"));
    synchronize =
        reinterpret_cast<int (*)(void *)>(dlsym(cuda, "cuStreamSynchronize"));
    destroy =
        reinterpret_cast<int (*)(void *)>(dlsym(cuda, "cuStreamDestroy_v2"));
    void *context = nullptr;
    if (!init || !retain || !current || !create || !synchronize || !destroy ||
        init(0) || retain(&context, 0) || current(context) ||
        create(&stream, 1 /* CU_STREAM_NON_BLOCKING */)) {
      std::fprintf(stderr, "rank %d: no CUDA stream of its own\n", rank);
      ++failures;
      stream = nullptr;
    }
  }
  ~RankStream() {
    if (stream) {
      synchronize(stream);
      destroy(stream);
    }
  }
};

/// ncclCommInitAll: `ndev` ranks in this one process, every one on device
/// 0 (sdma runs several ranks on a GPU), each all-reducing on a thread and
/// (on a GPU) a stream of its own; bad arguments refused.
int initAll(int ndev) {
  check(ncclCommInitAll(nullptr, ndev, nullptr), ncclInvalidArgument,
        "ncclCommInitAll without comms", nullptr, "comms is NULL");
  std::vector<ncclComm_t> comms(ndev);
  check(ncclCommInitAll(comms.data(), 0, nullptr), ncclInvalidArgument,
        "ncclCommInitAll of 0 devices", nullptr, "below 1");
  std::vector<int> devices(ndev, 0);
  check(ncclCommInitAll(comms.data(), ndev, devices.data()), ncclSuccess,
        "ncclCommInitAll", nullptr);
  std::vector<std::vector<int>> data(ndev);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev && comms[i]; ++i) {
    int count = 0, me = -1;
    ncclCommCount(comms[i], &count);
    ncclCommUserRank(comms[i], &me);
    if (count != ndev || me != i) {
      std::fprintf(stderr, "comm %d: count %d, rank %d\n", i, count, me);
      ++failures;
    }
    data[i] = input<int>(i, 64);
    threads.emplace_back([&, i] {
      RankStream stream;
      check(ncclAllReduce(data[i].data(), data[i].data(), data[i].size(),
                          ncclInt32, ncclSum, comms[i],
                          static_cast<cudaStream_t>(stream.stream)),
            ncclSuccess, "ncclAllReduce on an InitAll communicator", comms[i]);
    });
  }
  for (std::thread &t : threads)
    t.join();
  std::vector<int> want(64, 0);
  for (int r = 0; r < ndev; ++r)
    for (size_t k = 0; k < want.size(); ++k)
      want[k] += value(r, k);
  for (int i = 0; i < ndev; ++i)
    expect(data[i], want,
           "AllReduce on InitAll communicator " + std::to_string(i));
  // nccl-tests' single-thread pattern: this thread makes every rank's
  // all-reduce in one group (twice: the first meets every rank on the
  // host, the second is a replay), each rank on a stream of its own.
  std::vector<RankStream> streams(ndev);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < ndev; ++i)
      data[i] = input<int>(i, 64);
    check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
    for (int i = 0; i < ndev && comms[i]; ++i)
      check(ncclAllReduce(data[i].data(), data[i].data(), data[i].size(),
                          ncclInt32, ncclSum, comms[i],
                          static_cast<cudaStream_t>(streams[i].stream)),
            ncclSuccess, "ncclAllReduce in a group over every rank", comms[i]);
    check(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd over every rank", nullptr);
    for (int i = 0; i < ndev; ++i) {
      if (streams[i].synchronize)
        streams[i].synchronize(streams[i].stream);
      expect(data[i], want,
             "AllReduce in a group, round " + std::to_string(round) +
                 ", communicator " + std::to_string(i));
    }
  }
  // A broadcast from rank 1 in one group (only the root stages its input:
  // the ranks hold different numbers of copies before their launches), and
  // a PreMulSum all-reduce (x2) whose operator each rank destroys inside
  // the group, as torch's coalescing does.
  {
    std::vector<std::vector<float>> b(ndev), s(ndev);
    std::vector<ncclRedOp_t> ops(ndev);
    float two = 2.0f;
    check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
    for (int i = 0; i < ndev && comms[i]; ++i) {
      b[i] = i == 1 ? input<float>(1, 40000) : std::vector<float>(40000, -1.0f);
      s[i] = input<float>(i, 32);
      check(ncclBroadcast(b[i].data(), b[i].data(), b[i].size(), ncclFloat32, 1,
                          comms[i],
                          static_cast<cudaStream_t>(streams[i].stream)),
            ncclSuccess, "ncclBroadcast in a group over every rank", comms[i]);
      check(ncclRedOpCreatePreMulSum(&ops[i], &two, ncclFloat32,
                                     ncclScalarHostImmediate, comms[i]),
            ncclSuccess, "ncclRedOpCreatePreMulSum in a group", comms[i]);
      check(ncclAllReduce(s[i].data(), s[i].data(), s[i].size(), ncclFloat32,
                          ops[i], comms[i],
                          static_cast<cudaStream_t>(streams[i].stream)),
            ncclSuccess, "ncclAllReduce (PreMulSum) in a group", comms[i]);
      check(ncclRedOpDestroy(ops[i], comms[i]), ncclSuccess,
            "ncclRedOpDestroy in a group", comms[i]);
    }
    check(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd (broadcast, PreMulSum)",
          nullptr);
    std::vector<float> premul(32, 0.0f);
    for (int r = 0; r < ndev; ++r)
      for (size_t k = 0; k < premul.size(); ++k)
        premul[k] += 2.0f * float(value(r, k));
    for (int i = 0; i < ndev; ++i) {
      if (streams[i].synchronize)
        streams[i].synchronize(streams[i].stream);
      expect(b[i], input<float>(1, 40000),
             "Broadcast in a group, communicator " + std::to_string(i));
      expect(s[i], premul,
             "PreMulSum in a group, communicator " + std::to_string(i));
    }
  }
  // Destroyed one after another on this thread, as NCCL's programs do
  // (nccl-tests in one process): no destroy may wait for the others.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < ndev; ++i) {
    expect(data[i], want,
           "AllReduce on InitAll communicator " + std::to_string(i));
    if (comms[i])
      check(ncclCommDestroy(comms[i]), ncclSuccess, "ncclCommDestroy", nullptr);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (seconds > 5) {
    std::fprintf(stderr,
                 "destroying InitAll's communicators on one thread took "
                 "%.1f s: a destroy waited for its peers\n",
                 seconds);
    ++failures;
  }
  std::printf("ncclCommInitAll: %d ranks in one process, all-reduce from a "
              "thread each and from one thread in a group %s\n",
              ndev, failures ? "WRONG" : "as expected");
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (const char *ndev = std::getenv("NCCL_TEST_INIT_ALL"))
    return initAll(std::atoi(ndev));
  if (argc != 2 || !std::getenv("RANK") || !std::getenv("WORLD_SIZE")) {
    std::fprintf(stderr, "usage: sdma-launch --nproc-per-node=N %s ID_FILE\n",
                 argv[0]);
    return 2;
  }
  rank = std::atoi(std::getenv("RANK"));
  ranks = std::atoi(std::getenv("WORLD_SIZE"));
  int version = 0;
  check(ncclGetVersion(&version), ncclSuccess, "ncclGetVersion", nullptr);
  if (version != 22809) {
    std::fprintf(stderr, "rank %d: ncclGetVersion says %d\n", rank, version);
    ++failures;
  }
  ncclUniqueId id = exchangeId(argv[1]);
  ncclComm_t comm = nullptr;
  // NCCL_CTA_POLICY_ZERO (no SMs) cannot be honoured: refused, named.
  ncclConfig_t zero = NCCL_CONFIG_INITIALIZER;
  zero.CTAPolicy = 2;
  check(ncclCommInitRankConfig(&comm, ranks, id, rank, &zero),
        ncclInvalidArgument, "ncclCommInitRankConfig CTAPolicy zero", nullptr,
        "NCCL_CTA_POLICY_ZERO");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  check(ncclCommInitRankConfig(&comm, ranks, id, rank, &config), ncclSuccess,
        "ncclCommInitRankConfig", nullptr);
  if (!comm)
    return 1;
  if (std::getenv("NCCL_TEST_ACROSS_NODES"))
    return acrossNodes(comm);
  if (std::getenv("NCCL_TEST_ABORT_INFLIGHT")) {
    // Rank 0 receives from rank 1, which never sends; another thread
    // aborts the communicator (torch's watchdog does): the receive returns
    // at once with an error, not after the timeout.
    if (rank != 0) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      ncclCommAbort(comm);
      return 0;
    }
    std::vector<int> in(100000);
    ncclResult_t got = ncclSuccess;
    auto start = std::chrono::steady_clock::now();
    std::thread receiver([&] {
      got = ncclRecv(in.data(), in.size(), ncclInt32, 1, comm, nullptr);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ncclResult_t aborted = ncclCommAbort(comm);
    receiver.join();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    bool ok = aborted == ncclSuccess && got != ncclSuccess && s < 10;
    std::printf("rank 0: abort stopped an in-flight receive: %s\n",
                ok ? "yes" : ncclGetErrorString(got));
    return ok ? 0 : 1;
  }
  if (std::getenv("NCCL_TEST_MIXED_WINDOWS")) {
    // Rank 0 alone passes windows, twice (each signature seen before, so
    // the second time only the launch's call tag can tell): every rank's
    // call is refused, nothing written.
    size_t n = 16;
    int *in = nullptr, *out = nullptr;
    ncclMemAlloc((void **)&in, n * sizeof(int));
    ncclMemAlloc((void **)&out, ranks * n * sizeof(int));
    ncclWindow_t wi = nullptr, wo = nullptr;
    check(ncclCommWindowRegister(comm, in, n * sizeof(int), &wi, 0),
          ncclSuccess, "ncclCommWindowRegister", comm);
    check(ncclCommWindowRegister(comm, out, ranks * n * sizeof(int), &wo, 0),
          ncclSuccess, "ncclCommWindowRegister", comm);
    std::vector<int> hostIn(n, rank), hostOut(ranks * n, -1);
    std::fill(out, out + ranks * n, -1);
    for (bool windows : {true, false}) // both signatures, agreed once each
      check(ncclAllGather(windows ? in : hostIn.data(),
                          windows ? out : hostOut.data(), n, ncclInt32, comm,
                          nullptr),
            ncclSuccess, "ncclAllGather", comm);
    std::fill(out, out + ranks * n, -1);
    std::fill(hostOut.begin(), hostOut.end(), -1);
    ncclResult_t r = ncclAllGather(rank == 0 ? in : hostIn.data(),
                                   rank == 0 ? out : hostOut.data(), n,
                                   ncclInt32, comm, nullptr);
    bool untouched = *std::max_element(out, out + ranks * n) == -1 &&
                     *std::max_element(hostOut.begin(), hostOut.end()) == -1;
    std::printf(
        "rank %d, windows on rank 0 only: %s\n", rank,
        r != ncclSuccess &&
                std::strstr(ncclGetLastError(comm), "made different calls") &&
                untouched
            ? "refused, nothing written"
            : ncclGetLastError(comm));
    ncclCommAbort(comm);
    return 0;
  }
  if (const char *mode = std::getenv("NCCL_TEST_SHRINK")) {
    // The last rank dies after init; the others shrink it away (torch's
    // shrink_group): "abort" after a call that failed on the dead rank,
    // with NCCL_SHRINK_ABORT; "default" straight away. The new
    // communicator's all-reduce is checked.
    if (rank == ranks - 1)
      std::_Exit(0);
    bool abort = std::string(mode) == "abort";
    if (abort && allGatherOutcome(comm) == ncclSuccess) {
      std::fprintf(stderr, "rank %d: a call with a dead peer succeeded\n",
                   rank);
      return 1;
    }
    int dead = ranks - 1, mine = rank;
    ncclComm_t sub = nullptr;
    // Excluding oneself, or a rank out of range, is refused.
    check(ncclCommShrink(comm, &mine, 1, &sub, nullptr, NCCL_SHRINK_DEFAULT),
          ncclInvalidArgument, "ncclCommShrink of oneself", comm,
          "excluded ranks do not call");
    int wild = ranks;
    check(ncclCommShrink(comm, &wild, 1, &sub, nullptr, NCCL_SHRINK_DEFAULT),
          ncclInvalidArgument, "ncclCommShrink out of range", comm,
          "out of range");
    check(ncclCommShrink(comm, &dead, 1, &sub, nullptr,
                         abort ? NCCL_SHRINK_ABORT : NCCL_SHRINK_DEFAULT),
          ncclSuccess, "ncclCommShrink", comm);
    int n = 0, me = -1;
    if (sub) {
      ncclCommCount(sub, &n);
      ncclCommUserRank(sub, &me);
    }
    std::vector<int> v(8, rank + 1);
    if (sub)
      check(ncclAllReduce(v.data(), v.data(), v.size(), ncclInt32, ncclSum, sub,
                          nullptr),
            ncclSuccess, "ncclAllReduce after the shrink", sub);
    int want = (ranks - 1) * ranks / 2; // ranks 0..R-2, each rank + 1
    bool ok = sub && n == ranks - 1 && me == rank &&
              std::all_of(v.begin(), v.end(), [&](int x) { return x == want; });
    std::printf("rank %d: shrunk (%s) to %d of %d, all-reduce %s\n", rank, mode,
                n, ranks, ok ? "as expected" : "WRONG");
    if (sub)
      ncclCommDestroy(sub);
    ncclCommAbort(comm);
    return ok && !failures ? 0 : 1;
  }
  if (std::getenv("NCCL_TEST_EXIT_EARLY")) {
    // The last rank dies after init: every other rank's next call fails
    // within the timeout naming it (ncclRemoteError), no hang, no crash.
    if (rank == ranks - 1)
      std::_Exit(0);
    // A send longer than the pair's ring to the dead rank: it times out
    // naming the rank; the communicator has failed for every later call.
    std::vector<int> big(100000, rank);
    ncclResult_t sent =
        ncclSend(big.data(), big.size(), ncclInt32, ranks - 1, comm, nullptr);
    std::printf(
        "rank %d sending to a dead peer: %s\n", rank,
        sent == ncclRemoteError &&
                std::strstr(
                    ncclGetLastError(comm),
                    ("sending to rank " + std::to_string(ranks - 1)).c_str())
            ? "timed out, named"
            : ncclGetLastError(comm));
    ncclResult_t outcome = allGatherOutcome(comm);
    std::string why = ncclGetLastError(comm);
    bool named =
        why.find("rank " + std::to_string(ranks - 1)) != std::string::npos;
    std::printf("rank %d after a peer died: %s (%s)\n", rank,
                ncclGetErrorString(outcome), named ? "named" : why.c_str());
    ncclCommAbort(comm);
    return outcome == ncclRemoteError && named ? 0 : 1;
  }
  int count = 0, me = -1;
  check(ncclCommCount(comm, &count), ncclSuccess, "ncclCommCount", comm);
  check(ncclCommUserRank(comm, &me), ncclSuccess, "ncclCommUserRank", comm);
  if (count != ranks || me != rank) {
    std::fprintf(stderr, "rank %d: count %d rank %d\n", rank, count, me);
    ++failures;
  }
  // A watchdog, as torch's: another thread polls the async error for as
  // long as the calls run.
  std::atomic<bool> done{false};
  std::atomic<int> polls{0};
  std::thread watchdog([&] {
    while (!done) {
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(comm, &async) != ncclSuccess ||
          async != ncclSuccess) {
        std::fprintf(stderr, "rank %d: the watchdog saw an error\n", rank);
        ++failures;
        return;
      }
      ++polls;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  dataMovement(comm, 1);
  dataMovement(comm, 1001);
  if (const char *device = std::getenv("SDMA_DEVICE");
      device && std::string(device) == "cpu") {
    windows(comm, 1);
    windows(comm, 777);
    if (std::getenv("SDMA_NCCL_SHARED_BYTES"))
      sharedBuffers(comm, 3000);
  }
  reductions(comm, 5);
  reductions(comm, 1000);
  preMulSum(comm);
  pointToPoint(comm);
  errors(comm);
  split(comm);
  done = true;
  watchdog.join();
  if (polls == 0) {
    std::fprintf(stderr, "rank %d: the watchdog never ran\n", rank);
    ++failures;
  }
  check(ncclCommFinalize(comm), ncclSuccess, "ncclCommFinalize", comm);
  // Aborted from another thread (torch's watchdog does); then gone.
  std::thread aborter([&] {
    check(ncclCommAbort(comm), ncclSuccess, "ncclCommAbort", nullptr);
  });
  aborter.join();
  check(ncclCommDestroy(comm), ncclInvalidArgument,
        "ncclCommDestroy after abort", nullptr, "not a live communicator");
  int after = 0;
  check(ncclCommCount(comm, &after), ncclInvalidArgument,
        "ncclCommCount after destroy", nullptr, "not a live communicator");
  if (failures)
    return 1;
  std::printf("rank %d of %d: every NCCL call as expected\n", rank, ranks);
  return 0;
}
