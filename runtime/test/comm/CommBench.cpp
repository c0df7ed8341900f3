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
/// drop-in does without sharing). SDMA_BENCH_MIN_BYTES starts the sizes.
void bench(Rank &k, int iters) {
  int R = k.ranks;
  const char *mode = std::getenv("SDMA_BENCH_BUFFERS");
  std::string buffers = mode && *mode ? mode : "symmetric";
  const char *least = std::getenv("SDMA_BENCH_MIN_BYTES");
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
  for (size_t bytes = least ? std::strtoull(least, nullptr, 10) : 1024;
       bytes <= (64u << 20); bytes *= 4) {
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
      for (size_t bytes = 1024; bytes <= (64u << 20); bytes *= 4) {
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
