//===- CommBench.cpp - the C API's per-call latency, and its baseline -----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include "sdma/runtime/BackendRegistry.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

namespace sdma::commtest {

namespace {
double microsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Five repetitions of `iters` calls back to back and one wait (false:
/// it failed), per call: the median of the whole and of the host's share
/// (the time to enqueue the calls), printed as a row of the bench's CSV.
template <typename Call, typename Wait>
bool timeCalls(const char *op, int ranks, size_t bytes, int iters, Call call,
               Wait wait, bool print) {
  std::vector<double> samples, host;
  for (int rep = 0; rep < 5; ++rep) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      call();
    host.push_back(microsSince(start) / iters);
    if (!wait())
      return false;
    samples.push_back(microsSince(start) / iters);
  }
  std::sort(samples.begin(), samples.end());
  std::sort(host.begin(), host.end());
  if (print)
    std::printf("%s,%d,%zu,%.2f,%.2f\n", op, ranks, bytes, samples[2], host[2]);
  return true;
}
/// The sizes every bench mode times: 1 KiB to 64 MiB by fours, or from
/// SDMA_BENCH_MIN_BYTES to SDMA_BENCH_MAX_BYTES (one size for a profiler).
std::vector<size_t> benchSizes() {
  auto bound = [](const char *name, size_t otherwise) {
    const char *value = std::getenv(name);
    return value && *value ? size_t(std::strtoull(value, nullptr, 10))
                           : otherwise;
  };
  std::vector<size_t> sizes;
  size_t most =
      std::min<size_t>(bound("SDMA_BENCH_MAX_BYTES", 64u << 20), 64u << 20);
  for (size_t bytes = std::max<size_t>(bound("SDMA_BENCH_MIN_BYTES", 1024), 4);
       bytes <= most; bytes *= 4)
    sizes.push_back(bytes);
  return sizes;
}
} // namespace

/// Per-call latency: `iters` calls back to back, then one wait; and the
/// host's share of it, the time to enqueue the calls (where it is about
/// the whole, the host's per-call work is the bound, not the GPU's).
///
/// SDMA_BENCH_BUFFERS says where the buffers are: "symmetric" (default,
/// sdmaMemAlloc), "plain" (the caller's own allocation, cuMemAlloc'd on a
/// GPU, a host vector on the CPU device: the calls share them where
/// SDMA_SHARED_BYTES lets them, else fail) or "staged" (plain buffers
/// copied into symmetric memory and out around each call, as the NCCL
/// drop-in does without sharing). SDMA_BENCH_MIN_BYTES and
/// SDMA_BENCH_MAX_BYTES bound the sizes (benchSizes).
void bench(Rank &k, int iters) {
  int R = k.ranks;
  const char *mode = std::getenv("SDMA_BENCH_BUFFERS");
  std::string buffers = mode && *mode ? mode : "symmetric";
  if (k.rank == 0)
    std::printf("op,ranks,bytes,us_per_call,host_us_per_call\n");
  // A failed call fails the communicator, which refuses every later one.
  // Every rank still makes the same calls (allocations, frees and a
  // signature's first call are agreed between the ranks, failed or not),
  // but only a rank's first three failures are printed, and no size that
  // saw one is reported.
  auto note = [&k](sdmaResult_t result, const char *what) {
    if (result == sdmaSuccess)
      return;
    if (k.failures < 3)
      k.check(result, what);
    else
      ++k.failures;
  };
  for (size_t bytes : benchSizes()) {
    size_t chunk = std::max<size_t>(4, bytes / R / 4 * 4);
    char *in = static_cast<char *>(k.alloc(chunk * R));
    char *out = static_cast<char *>(k.alloc(chunk * R));
    // The caller's own buffers, where the mode has them.
    std::vector<char> hostIn, hostOut;
    cuda::CUdeviceptr block = 0;
    char *userIn = in, *userOut = out;
    if (buffers != "symmetric") {
      if (k.memory.driver) {
        k.memory.driver->cuMemAlloc_v2(&block, 2 * chunk * R + 256);
        userIn = reinterpret_cast<char *>(block) + 256;
      } else {
        hostIn.resize(2 * chunk * R);
        userIn = hostIn.data();
      }
      userOut = userIn + chunk * R;
    }
    bool staged = buffers == "staged";
    char *callIn = staged ? in : userIn, *callOut = staged ? out : userOut;
    // All-gather, all-to-all, and an all-reduce (sum) of the whole buffer
    // (its bytes are the message's, as nccl-tests counts them).
    for (int op = 0; op < 3; ++op) {
      size_t inBytes = op == 0 ? chunk : chunk * R;
      auto call = [&] {
        if (staged)
          if (sdmaResult_t r =
                  sdmaMemcpyAsync(k.comm, in, userIn, inBytes, k.stream))
            return r;
        sdmaResult_t r =
            op == 0   ? sdmaAllGather(callIn, callOut, chunk / 4, sdmaFloat32,
                                      k.comm, k.stream)
            : op == 1 ? sdmaAlltoAll(callIn, callOut, chunk / 4, sdmaFloat32,
                                     k.comm, k.stream)
                      : sdmaAllReduce(callIn, callOut, chunk * R / 4,
                                      sdmaFloat32, sdmaSum, k.comm, k.stream);
        if (staged && r == sdmaSuccess)
          r = sdmaMemcpyAsync(k.comm, userOut, out, chunk * R, k.stream);
        return r;
      };
      for (int i = 0; i < 3; ++i)
        note(call(), "warm-up");
      k.memory.sync(k.stream);
      timeCalls(
          op == 0   ? "allgather"
          : op == 1 ? "alltoall"
                    : "allreduce",
          R, chunk * R, iters, [&] { note(call(), "call"); },
          [&] {
            k.memory.sync(k.stream);
            return k.failures == 0;
          },
          k.rank == 0);
    }
    sdmaMemFree(k.comm, out);
    sdmaMemFree(k.comm, in);
    if (block)
      k.memory.driver->cuMemFree_v2(block);
  }
}

/// bench()'s all-gather and all-to-all with every rank's call made by one
/// thread: `ranks` communicators (made, and their buffers allocated, on a
/// thread each, as ncclCommInitAll does), each size's calls a group
/// (sdmaGroupStart, a call per rank, sdmaGroupEnd: one launch for the ranks
/// that share the GPU). A stream per rank, or one for all with
/// SDMA_BENCH_ONE_STREAM=1 (=legacy: the legacy default stream). After the
/// timed calls every byte is checked.
int groupBench(const Args &args, int ranks) {
  sdmaUniqueId id;
  if (sdmaGetUniqueId(&id) != sdmaSuccess)
    return 1;
  const char *one = std::getenv("SDMA_BENCH_ONE_STREAM");
  bool oneStream = one && std::string(one) == "1";
  std::vector<Rank> k(ranks);
  auto each = [&](const std::function<void(Rank &)> &body) {
    std::vector<std::thread> threads;
    for (Rank &r : k)
      threads.emplace_back([&] { body(r); });
    for (std::thread &t : threads)
      t.join();
  };
  std::string error;
  // The streams are made here, where memory.init made the GPU's context
  // current (a new thread has none: its stream would be the legacy one).
  for (int r = 0; r < ranks; ++r) {
    k[r].rank = r;
    k[r].ranks = ranks;
    if (!k[r].memory.init(error))
      return std::fprintf(stderr, "%s\n", error.c_str()), 1;
    if (k[r].memory.driver &&
        k[r].memory.driver->cuStreamCreate(
            reinterpret_cast<cuda::CUstream *>(&k[r].stream), 1))
      return std::fprintf(stderr, "rank %d: cuStreamCreate failed\n", r), 1;
  }
  each([&](Rank &r) {
    r.check(sdmaCommInitRank(&r.comm, ranks, id, r.rank), "init");
  });
  for (Rank &r : k)
    if (r.failures)
      return 1;
  if (oneStream)
    for (Rank &r : k)
      r.stream = k[0].stream;
  // SDMA_BENCH_ONE_STREAM=legacy: every rank on the legacy default stream.
  if (one && std::string(one) == "legacy")
    for (Rank &r : k)
      r.stream = nullptr;
  std::printf("op,ranks,bytes,us_per_call,host_us_per_call\n");
  int failed = 0;
  for (size_t bytes : benchSizes()) {
    if (failed)
      break;
    size_t chunk = std::max<size_t>(4, bytes / ranks / 4 * 4);
    std::vector<char *> in(ranks), out(ranks);
    each([&](Rank &r) {
      in[r.rank] = static_cast<char *>(r.alloc(chunk * ranks));
      out[r.rank] = static_cast<char *>(r.alloc(chunk * ranks));
    });
    // A heap too small for this size (named by alloc): the sizes so far.
    for (Rank &r : k)
      if (!in[r.rank] || !out[r.rank])
        failed = 1;
    if (failed)
      break;
    for (int op = 0; op < 2 && !failed; ++op) {
      auto group = [&] {
        sdmaGroupStart();
        for (Rank &r : k)
          op == 0 ? sdmaAllGather(in[r.rank], out[r.rank], chunk / 4,
                                  sdmaFloat32, r.comm, r.stream)
                  : sdmaAlltoAll(in[r.rank], out[r.rank], chunk / 4,
                                 sdmaFloat32, r.comm, r.stream);
        if (sdmaResult_t result = sdmaGroupEnd(); result && !failed++)
          std::fprintf(stderr, "group of %zu bytes: %s\n", bytes,
                       sdmaGetLastError(nullptr));
      };
      auto wait = [&] {
        for (Rank &r : k)
          r.memory.sync(r.stream);
        return failed == 0;
      };
      for (Rank &r : k)
        r.fill(in[r.rank], chunk * ranks, r.rank, op + 1);
      for (int i = 0; i < 3; ++i)
        group();
      wait();
      timeCalls(op == 0 ? "allgather" : "alltoall", ranks, chunk * ranks,
                args.iters, group, wait, true);
      // Every byte: rank q's chunk p is rank p's chunk (q for all-to-all)
      // of its input.
      for (Rank &r : k) {
        std::vector<unsigned char> got(chunk * ranks);
        r.memory.read(got.data(), out[r.rank], got.size());
        for (int p = 0; p < ranks && !failed; ++p)
          for (size_t i = 0; i < chunk; ++i) {
            size_t from = (op == 0 ? 0 : size_t(r.rank) * chunk) + i;
            if (got[p * chunk + i] != pattern(p, op + 1, from)) {
              std::fprintf(
                  stderr, "rank %d: byte %zu of %zu-byte %s is wrong\n", r.rank,
                  p * chunk + i, bytes, op == 0 ? "allgather" : "alltoall");
              ++failed;
              break;
            }
          }
      }
    }
    each([&](Rank &r) {
      sdmaMemFree(r.comm, out[r.rank]);
      sdmaMemFree(r.comm, in[r.rank]);
    });
  }
  each([&](Rank &r) { sdmaCommDestroy(r.comm); });
  return failed ? 1 : 0;
}

/// The in-process executor (every rank in one launch) timed as bench()
/// times the C API: `iters` launches back to back, then one wait.
int baseline(const Args &args) {
  std::printf("op,ranks,bytes,us_per_call,host_us_per_call\n");
  for (int R : {1, 2, 4, 8}) {
    for (int op = 0; op < 2; ++op) {
      std::string name = op ? "all_to_all_direct" : "all_gather_direct";
      std::string path = args.schedule + "/" + name + "-" + std::to_string(R) +
                         ".hip",
                  error;
      std::optional<LdstProgram> program = LdstProgram::load(path, error);
      if (!program) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
      }
      CompiledSchedule compiled;
      compiled.plan = program->layout();
      compiled.ldst = *program;
      ExecutorOptions options;
      auto executor = createExecutor("cuda-ldst", compiled, options, error);
      if (!executor) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
      }
      for (size_t bytes : benchSizes()) {
        size_t chunk = std::max<size_t>(4, bytes / R / 4 * 4);
        if (!executor->prepare(chunk, error))
          return std::fprintf(stderr, "%s\n", error.c_str()), 1;
        for (int i = 0; i < 3; ++i)
          executor->launch(error);
        executor->wait(error);
        if (!timeCalls(
                op ? "alltoall" : "allgather", R, chunk * R, args.iters,
                [&] { executor->launch(error); },
                [&] { return executor->wait(error); }, true))
          return std::fprintf(stderr, "%s\n", error.c_str()), 1;
      }
    }
  }
  return 0;
}

} // namespace sdma::commtest
