//===- sdma-capi-fuzz.cpp - random calls over the C API's argument space --===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A job of --ranks ranks (threads of this process, the CPU device) makes
// --calls random calls of sdma.h: every collective, all-to-allv, memory and
// schedule entry point, with arguments drawn from what a careless or
// hostile caller passes -- null, host memory, pointers inside and across
// symmetric allocations and past their ends, freed memory, counts of 0, 1,
// small, the heap's size and ones whose bytes wrap 64 bits, data types,
// operators and roots in and out of range. Every rank draws the same calls
// (one seed), so the ranks agree unless an argument differs by rank.
//
// What must hold: no crash and no hang (a watchdog ends the run if a call
// does not return within the timeout plus a margin); every result is a
// defined sdmaResult_t with a message when it is not sdmaSuccess; and every
// --check calls an all-gather on fresh buffers returns the right bytes,
// unless the communicator reported itself failed (then it is remade, and
// counted). Exit status: 0 when all of that held, 1 otherwise.
//
//   sdma-capi-fuzz --calls=100000 --ranks=1 --seed=1
//
//===----------------------------------------------------------------------===//

#include "sdma/sdma.h"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
struct Args {
  long calls = 10000;
  int ranks = 1;
  uint64_t seed = 1;
  long check = 200;
  unsigned long long timeoutMs = 500;
};

struct Totals {
  std::atomic<long> calls{0}, ok{0}, refused{0}, remade{0}, bad{0};
};

std::atomic<long> progress{0};

/// What the rank threads share: a barrier that also ORs a flag, and the
/// unique id of each generation of communicators (a failed communicator
/// stays failed, so the job remakes it, every rank together).
class Shared {
public:
  explicit Shared(int ranks) : ranks_(ranks) {}
  /// Waits for every rank; true if any rank passed true.
  bool any(bool mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    long round = round_;
    anyThisRound_ |= mine;
    if (++arrived_ == ranks_) {
      result_ = anyThisRound_;
      anyThisRound_ = false;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    return result_;
  }
  /// The id of generation `g` (rank 0 makes it).
  bool id(int g, int rank, sdmaUniqueId &id) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (rank == 0 && !ids_.count(g)) {
      if (sdmaGetUniqueId(&ids_[g]) != sdmaSuccess)
        return false;
      cv_.notify_all();
    }
    cv_.wait(lock, [&] { return ids_.count(g) != 0; });
    id = ids_[g];
    return true;
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int ranks_, arrived_ = 0;
  long round_ = 0;
  bool anyThisRound_ = false, result_ = false;
  std::map<int, sdmaUniqueId> ids_;
};

bool defined(sdmaResult_t r) {
  return r == sdmaSuccess || r == sdmaUnhandledCudaError ||
         r == sdmaSystemError || r == sdmaInternalError ||
         r == sdmaInvalidArgument || r == sdmaInvalidUsage ||
         r == sdmaRemoteError || r == sdmaInProgress;
}

/// One rank's fuzzing loop.
class Rank {
public:
  Rank(const Args &args, int rank, Shared &shared, Totals &totals)
      : args_(args), rank_(rank), shared_(shared), totals_(totals),
        random_(args.seed), host_(1 << 16) {}

  bool run() {
    if (!make())
      return false;
    for (long i = 0; i < args_.calls; ++i) {
      call();
      if (rank_ == 0)
        progress.store(i);
      if ((i + 1) % args_.check == 0 && !canary(i))
        return false;
    }
    sdmaCommDestroy(comm_);
    return totals_.bad == 0;
  }

private:
  bool make() {
    sdmaUniqueId id;
    if (!shared_.id(generation_++, rank_, id))
      return false;
    sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
    config.device = "cpu";
    config.heapBytes = 4 << 20;
    config.timeoutMs = args_.timeoutMs;
    if (sdmaCommInitRankConfig(&comm_, args_.ranks, id, rank_, &config) !=
        sdmaSuccess) {
      std::fprintf(stderr, "rank %d: init: %s\n", rank_,
                   sdmaGetLastError(nullptr));
      return false;
    }
    allocations_.clear();
    for (size_t bytes : {size_t(4096), size_t(65536), size_t(1 << 20)}) {
      void *p = nullptr;
      if (sdmaMemAlloc(comm_, &p, bytes) != sdmaSuccess)
        return false;
      allocations_.push_back({static_cast<char *>(p), bytes});
    }
    return true;
  }

  /// A communicator that failed (a count error, a timeout) stays failed:
  /// the job makes a new one, as a real job would.
  bool remake() {
    sdmaCommDestroy(comm_);
    if (rank_ == 0)
      ++totals_.remade;
    return make();
  }

  uint64_t pick(uint64_t n) { return random_() % n; }

  void *pointer() {
    switch (pick(9)) {
    case 0:
      return nullptr;
    case 1:
      return host_.data() + pick(1024);
    case 2:
      return reinterpret_cast<void *>(uintptr_t(0x1000) + pick(4096));
    case 3: { // inside the heap, before the first allocation: the control area
      return allocations_[0].ptr - 4096 + pick(2048);
    }
    default: {
      const Allocation &a = allocations_[pick(allocations_.size())];
      return a.ptr + (pick(4) == 0 ? pick(a.bytes + 512) : 0);
    }
    }
  }

  size_t count() {
    switch (pick(8)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
      return SIZE_MAX / (1 + pick(16));
    case 3:
      return (size_t(1) << 62) + pick(8);
    case 4:
      return 1 << 20;
    default:
      return 1 + pick(2048);
    }
  }

  sdmaDataType_t type() {
    return static_cast<sdmaDataType_t>(pick(8) == 0 ? int(pick(40)) - 20
                                                    : int(pick(sdmaNumTypes)));
  }
  sdmaRedOp_t op() {
    return static_cast<sdmaRedOp_t>(pick(8) == 0 ? int(pick(20)) - 10
                                                 : int(pick(sdmaNumOps)));
  }
  int root() { return int(pick(args_.ranks + 3)) - 1; }

  void record(sdmaResult_t r, const char *what) {
    ++totals_.calls;
    if (!defined(r)) {
      ++totals_.bad;
      std::fprintf(stderr, "rank %d: %s returned undefined result %d\n", rank_,
                   what, int(r));
    } else if (r == sdmaSuccess) {
      ++totals_.ok;
    } else {
      ++totals_.refused;
      if (!*sdmaGetLastError(comm_) && !*sdmaGetLastError(nullptr)) {
        ++totals_.bad;
        std::fprintf(stderr, "rank %d: %s refused (%d) without a message\n",
                     rank_, what, int(r));
      }
    }
  }

  void call() {
    void *a = pointer(), *b = pointer();
    size_t n = count();
    switch (pick(14)) {
    case 0:
      return record(sdmaAllGather(a, b, n, type(), comm_, nullptr),
                    "AllGather");
    case 1:
      return record(sdmaAlltoAll(a, pick(3) ? b : a, n, type(), comm_, nullptr),
                    "AlltoAll");
    case 2:
      return record(sdmaBroadcast(a, b, n, type(), root(), comm_, nullptr),
                    "Broadcast");
    case 3:
      return record(sdmaScatter(a, b, n, type(), root(), comm_, nullptr),
                    "Scatter");
    case 4:
      return record(sdmaGather(a, b, n, type(), root(), comm_, nullptr),
                    "Gather");
    case 5:
      return record(
          sdmaAllReduce(a, pick(3) ? b : a, n, type(), op(), comm_, nullptr),
          "AllReduce");
    case 6:
      return record(sdmaReduceScatter(a, b, n, type(), op(), comm_, nullptr),
                    "ReduceScatter");
    case 7:
      return record(sdmaReduce(a, b, n, type(), op(), root(), comm_, nullptr),
                    "Reduce");
    case 8: {
      // Counts on the host (the CPU device reads them there): small,
      // negative, past the capacity.
      for (int64_t &c : counts_)
        c = int64_t(pick(12)) - 2;
      size_t capacity = pick(4) == 0 ? count() : 1 + pick(16);
      int64_t *recv = pick(2) ? receive_ : nullptr;
      return record(sdmaAlltoAllv(a, pick(8) ? counts_ : nullptr, b, recv,
                                  capacity, 1 + pick(64), type(),
                                  static_cast<sdmaAlltoAllvLayout_t>(pick(3)),
                                  comm_, nullptr),
                    "AlltoAllv");
    }
    case 9: {
      void *p = nullptr;
      size_t bytes = pick(2) ? count() : pick(1 << 16);
      sdmaResult_t r = sdmaMemAlloc(comm_, &p, bytes);
      record(r, "MemAlloc");
      if (r == sdmaSuccess)
        record(sdmaMemFree(comm_, pick(8) ? p : a), "MemFree");
      return;
    }
    case 10: {
      void *handle = nullptr;
      return record(sdmaMemRegister(comm_, a, n, &handle), "MemRegister");
    }
    case 11:
      return record(sdmaMemFree(comm_, a), "MemFree");
    case 12: {
      sdmaResult_t async = sdmaSuccess;
      return record(sdmaCommGetAsyncError(comm_, &async), "GetAsyncError");
    }
    default: {
      int c = 0, r = 0;
      record(sdmaCommCount(comm_, &c), "CommCount");
      return record(sdmaCommUserRank(comm_, &r), "UserRank");
    }
    }
  }

  /// A correct all-gather on fresh buffers: the communicator still works.
  /// One that failed (a count error, a timeout after ranks' calls diverged
  /// on a rank-dependent refusal -- calls are compared across ranks only
  /// the first time) is remade by every rank together and must then work.
  bool canary(long at) {
    sdmaResult_t async = sdmaSuccess;
    sdmaCommGetAsyncError(comm_, &async);
    std::string why;
    bool failed = async != sdmaSuccess || !gather(at, why);
    if (!shared_.any(failed))
      return true;
    if (!remake())
      return false;
    if (gather(at, why))
      return true;
    ++totals_.bad;
    std::fprintf(stderr, "rank %d: canary after call %ld: %s\n", rank_, at,
                 why.c_str());
    return false;
  }

  /// The all-gather itself; `why` says what went wrong.
  bool gather(long at, std::string &why) {
    const size_t n = 64;
    char *in = nullptr, *out = nullptr;
    sdmaResult_t r = sdmaMemAlloc(comm_, (void **)&in, n);
    if (r == sdmaSuccess)
      r = sdmaMemAlloc(comm_, (void **)&out, n * args_.ranks);
    if (r == sdmaSuccess) {
      for (size_t i = 0; i < n; ++i)
        in[i] = char(rank_ * 31 + i + at);
      r = sdmaAllGather(in, out, n, sdmaInt8, comm_, nullptr);
    }
    if (r != sdmaSuccess) {
      why = sdmaGetLastError(comm_);
      return false;
    }
    for (int q = 0; q < args_.ranks; ++q)
      for (size_t i = 0; i < n; ++i)
        if (out[q * n + i] != char(q * 31 + i + at)) {
          why = "wrong bytes";
          return false;
        }
    sdmaMemFree(comm_, out);
    sdmaMemFree(comm_, in);
    return true;
  }

  struct Allocation {
    char *ptr;
    size_t bytes;
  };
  const Args &args_;
  int rank_;
  Shared &shared_;
  int generation_ = 0;
  Totals &totals_;
  std::mt19937_64 random_;
  std::vector<char> host_;
  std::vector<Allocation> allocations_;
  int64_t counts_[64] = {};
  int64_t receive_[64] = {};
  sdmaComm_t comm_ = nullptr;
};

bool parse(int argc, char **argv, Args &args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *name) -> const char * {
      size_t n = std::strlen(name);
      return a.compare(0, n, name) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char *v = value("--calls="))
      args.calls = std::atol(v);
    else if (const char *v = value("--ranks="))
      args.ranks = std::atoi(v);
    else if (const char *v = value("--seed="))
      args.seed = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("--check="))
      args.check = std::atol(v);
    else if (const char *v = value("--timeout-ms="))
      args.timeoutMs = std::strtoull(v, nullptr, 10);
    else {
      std::fprintf(stderr,
                   "usage: sdma-capi-fuzz [--calls=N] [--ranks=R] [--seed=S] "
                   "[--check=K] [--timeout-ms=T]\n");
      return false;
    }
  }
  return args.calls > 0 && args.ranks >= 1 && args.ranks <= 16 &&
         args.check > 0 && args.timeoutMs > 0;
}
} // namespace

int main(int argc, char **argv) {
  Args args;
  if (!parse(argc, argv, args))
    return 2;
  Shared shared(args.ranks);
  Totals totals;
  std::atomic<bool> done{false};
  // The watchdog: no call may take longer than the timeout and a margin.
  std::thread watchdog([&] {
    long last = -1;
    auto since = std::chrono::steady_clock::now();
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      long now = progress.load();
      if (now != last) {
        last = now;
        since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - since >
                 std::chrono::milliseconds(4 * args.timeoutMs + 10000)) {
        std::fprintf(stderr,
                     "sdma-capi-fuzz: HANG: no progress after call "
                     "%ld\n",
                     now);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  });
  std::vector<std::thread> threads;
  std::vector<int> status(args.ranks, 0);
  for (int r = 0; r < args.ranks; ++r)
    threads.emplace_back([&, r] {
      Rank rank(args, r, shared, totals);
      status[r] = rank.run() ? 0 : 1;
    });
  for (std::thread &t : threads)
    t.join();
  done = true;
  watchdog.join();
  int failed = 0;
  for (int s : status)
    failed |= s;
  std::printf("sdma-capi-fuzz: %d rank(s), seed %" PRIu64 ": %ld calls, %ld "
              "succeeded, %ld refused, %ld communicators remade, %ld "
              "violations, %s\n",
              args.ranks, args.seed, totals.calls.load(), totals.ok.load(),
              totals.refused.load(), totals.remade.load(), totals.bad.load(),
              failed ? "FAILED" : "ok");
  return failed;
}
