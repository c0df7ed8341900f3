//===- CommMoeBench.cpp - sdma-comm-test's MoE all-to-allv bench ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// DeepSeek-V3's dispatch and combine (hidden 7168, bf16, top-8 of 256
// experts, 32 per rank) through sdmaAlltoAllv (--layout=packed or slots),
// or into expert-major rows padded to --major-align through
// sdmaAlltoAllv2d and its inverse (--layout=expert), with the split sizes
// in device memory. Every rank draws every rank's
// routing from one seed, so each knows the whole count matrix: the
// capacity, and the rows it must receive (every received row is checked,
// eager and replayed). Per rank and call, medians of event-timed calls:
// dispatch, combine, and dispatch + combine captured in one CUDA graph and
// replayed, each started on every rank at once (StartGate), and dispatch
// again free-running. Run with --threads-as-ranks: ranks that share one
// GPU must share its context to run at once (processes time-slice it).
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <random>

using namespace sdma::commtest;

namespace {

constexpr int kHidden = 7168, kExperts = 256, kTopK = 8;
constexpr size_t kRowBytes = kHidden * 2;

/// counts[r][g]: rows rank r sends global expert g (each token to its
/// top-8 experts, a row per (token, expert)); expert g is on rank
/// g / (256 / R).
std::vector<std::vector<int64_t>> expertRouting(int R, int tokens,
                                                bool skewed) {
  std::vector<double> weight(kExperts, 1.0);
  if (skewed) // Zipf-like over experts: low-numbered ranks are hot
    for (int e = 0; e < kExperts; ++e)
      weight[e] = 1.0 / std::pow(1.0 + e / 8.0, 1.5);
  std::vector<std::vector<int64_t>> m(R, std::vector<int64_t>(kExperts, 0));
  for (int r = 0; r < R; ++r) {
    std::mt19937_64 rng(1000 + r);
    for (int t = 0; t < tokens; ++t) {
      std::vector<double> w = weight;
      for (int k = 0; k < kTopK; ++k) {
        std::discrete_distribution<int> pick(w.begin(), w.end());
        int e = pick(rng);
        w[e] = 0; // distinct experts
        ++m[r][e];
      }
    }
  }
  return m;
}

/// counts[r][p]: rows rank r sends rank p.
std::vector<std::vector<int64_t>> routing(int R, int tokens, bool skewed) {
  auto g = expertRouting(R, tokens, skewed);
  std::vector<std::vector<int64_t>> m(R, std::vector<int64_t>(R, 0));
  for (int r = 0; r < R; ++r)
    for (int e = 0; e < kExperts; ++e)
      m[r][e / (kExperts / R)] += g[r][e];
  return m;
}

/// Byte b of row `row` of rank r's packed send buffer.
unsigned char byteOf(int r, int64_t row, size_t b) {
  return static_cast<unsigned char>(r * 37 + row * 11 + b * 3);
}

/// Starts the ranks' timed calls together. Each rank's stream first waits
/// on a word of pinned host memory; when every rank (a thread of this
/// process) has enqueued its call, the last to arrive raises the word.
/// Without it a rank's time includes its peers' host launch skew (the
/// threads wake from their event waits at different times), which is the
/// bench harness, not the collective.
class StartGate {
public:
  static StartGate &get() {
    static StartGate gate;
    return gate;
  }
  /// The word's device address; 0 when the driver cannot wait on host
  /// memory (then calls run ungated).
  cuda::CUdeviceptr init(const cuda::Driver *d) {
    std::lock_guard<std::mutex> lock(m_);
    if (!host_ && !failed_) {
      void *p = nullptr;
      failed_ = d->cuMemHostAlloc(&p, 8,
                                  cuda::CU_MEMHOSTALLOC_PORTABLE |
                                      cuda::CU_MEMHOSTALLOC_DEVICEMAP) ||
                d->cuMemHostGetDevicePointer_v2(&dev_, p, 0);
      host_ = static_cast<uint64_t *>(p);
      if (!failed_)
        __atomic_store_n(host_, 0, __ATOMIC_RELEASE);
    }
    return failed_ ? 0 : dev_;
  }
  /// Rank `round`'s arrival; false when the others did not all arrive
  /// within 30 s (the gate then opens for good so no stream stays blocked).
  bool open(int ranks, uint64_t round) {
    std::unique_lock<std::mutex> lock(m_);
    if (++arrived_ == ranks) {
      arrived_ = 0;
      __atomic_store_n(host_, round, __ATOMIC_RELEASE);
      cv_.notify_all();
      return true;
    }
    if (cv_.wait_for(lock, std::chrono::seconds(30), [&] {
          return __atomic_load_n(host_, __ATOMIC_ACQUIRE) >= round;
        }))
      return true;
    __atomic_store_n(host_, ~0ull >> 1, __ATOMIC_RELEASE);
    cv_.notify_all();
    return false;
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t *host_ = nullptr;
  cuda::CUdeviceptr dev_ = 0;
  bool failed_ = false;
  int arrived_ = 0;
};

struct Timer {
  const cuda::Driver *d;
  cuda::CUstream s;
  int ranks;
  cuda::CUdeviceptr gate = 0; // 0: ungated
  uint64_t round = 0;
  bool ok = true;
  cuda::CUevent a = nullptr, b = nullptr;
  Timer(const cuda::Driver *d, cuda::CUstream s, int ranks)
      : d(d), s(s), ranks(ranks) {
    d->cuEventCreate(&a, 0);
    d->cuEventCreate(&b, 0);
  }
  ~Timer() {
    d->cuEventDestroy_v2(a);
    d->cuEventDestroy_v2(b);
  }
  /// Median over `iters` calls; `gated`: every rank's call starts when the
  /// last rank has enqueued its own (StartGate).
  template <typename F> double medianUs(int iters, bool gated, F &&call) {
    std::vector<double> us;
    for (int i = 0; i < iters; ++i) {
      if (gated && (!gate || d->cuStreamWaitValue64(s, gate, ++round, 0)))
        ok = false, gated = false; // CU_STREAM_WAIT_VALUE_GEQ
      d->cuEventRecord(a, s);
      call();
      d->cuEventRecord(b, s);
      if (gated && !StartGate::get().open(ranks, round))
        ok = false;
      d->cuEventSynchronize(b);
      float ms = 0;
      d->cuEventElapsedTime(&ms, a, b);
      us.push_back(ms * 1000.0);
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }
};

} // namespace

namespace {
/// The end of every verify: the combine gave this rank's rows back, and no
/// kernel of the communicator failed.
void checkReturned(Rank &k, bool returned, const char *what) {
  if (!returned) {
    std::fprintf(stderr, "rank %d: %s: combine did not return the rows\n",
                 k.rank, what);
    ++k.failures;
  }
  sdmaResult_t async = sdmaSuccess;
  sdmaCommGetAsyncError(k.comm, &async);
  if (async != sdmaSuccess)
    k.check(async, what);
}

/// One layout's dispatch and combine, and what the timing reports.
struct MoeCall {
  std::function<void()> dispatch, combine, zero;
  std::function<void(const char *)> verify;
  int64_t capacity = 0, sent = 0, arrived = 0;
  char *send = nullptr, *recv = nullptr;
};

/// The count table the baselines move ("moe-bench counts" [r][p], or
/// "moe-bench expert-counts" [r][g]), printed by rank 0.
struct PrintedCounts {
  const char *name;
  const std::vector<std::vector<int64_t>> &table;
};

/// Warm-up, the checked eager calls, the gated and free-running timings, a
/// 1 KiB all-gather for the fixed cost, and dispatch + combine captured in
/// one CUDA graph and replayed; every row checked after each.
void timeMoe(Rank &k, const Args &args, const cuda::Driver *d, MoeCall &call,
             const PrintedCounts &counts) {
  int R = k.ranks, me = k.rank;
  char *send = call.send, *recv = call.recv;
  auto dispatch = [&] { call.dispatch(); };
  auto combine = [&] { call.combine(); };
  auto verify = [&](const char *what) { call.verify(what); };
  for (int i = 0; i < 3; ++i)
    dispatch(), combine();
  verify("eager");
  auto stream = static_cast<cuda::CUstream>(k.stream);
  Timer timer(d, stream, R);
  timer.gate = StartGate::get().init(d);
  // Gated (every rank's call starts at once: the collective's own time),
  // then free-running (each thread launches when it wakes: host skew in).
  double dispatchUs = timer.medianUs(args.iters, true, dispatch);
  double combineUs = timer.medianUs(args.iters, true, combine);
  double freeUs = timer.medianUs(args.iters, false, dispatch);
  verify("timed");
  // The fixed cost's comparison (gated like the calls): a 1 KiB
  // all-gather, the same kernel with its two job barriers but no counts.
  // Compiled and loaded first, outside the gate.
  auto gather = [&] {
    k.check(sdmaAllGather(send, recv, 1024, sdmaUint8, k.comm, k.stream),
            "all-gather probe");
  };
  gather();
  k.memory.sync(k.stream);
  double gatherUs = timer.medianUs(args.iters, true, gather);
  cuda::CUgraph g = nullptr;
  cuda::CUgraphExec exec = nullptr;
  if (d->cuStreamBeginCapture(stream,
                              cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) ||
      (dispatch(), combine(), d->cuStreamEndCapture(stream, &g)) ||
      d->cuGraphInstantiateWithFlags(&exec, g, 0)) {
    std::fprintf(stderr, "rank %d: capture failed\n", me);
    ++k.failures;
    return;
  }
  call.zero();
  d->cuGraphLaunch(exec, stream);
  verify("graph replay");
  double graphUs = timer.medianUs(args.iters, true, [&] {
    if (d->cuGraphLaunch(exec, stream))
      ++k.failures;
  });
  verify("graph replays");
  if (!timer.ok) {
    std::fprintf(stderr,
                 "rank %d: the start gate failed (no host-memory "
                 "stream waits, or a rank never arrived)\n",
                 me);
    ++k.failures;
  }
  d->cuGraphExecDestroy(exec);
  d->cuGraphDestroy(g);
  if (!k.failures && me == 0) { // the matrix, for the baselines to move
    std::string text = counts.name;
    for (auto &row : counts.table)
      for (int64_t v : row)
        text += " " + std::to_string(v);
    std::printf("%s\n", text.c_str());
  }
  if (!k.failures)
    std::printf("moe-bench rank %d of %d: layout %s tokens %d routing %s "
                "capacity %lld "
                "sent %lld received %lld dispatch_us %.2f combine_us %.2f "
                "graph_us %.2f dispatch_ungated_us %.2f allgather_1k_us %.2f "
                "(every row checked)\n",
                me, R, args.layout.c_str(), args.tokens, args.routing.c_str(),
                (long long)call.capacity, (long long)call.sent,
                (long long)call.arrived, dispatchUs, combineUs, graphUs, freeUs,
                gatherUs);
}
/// The threads of a --group-ranks run meeting between their steps.
class ThreadBarrier {
public:
  static ThreadBarrier &get() {
    static ThreadBarrier barrier;
    return barrier;
  }
  void wait(int ranks) {
    std::unique_lock<std::mutex> lock(m_);
    uint64_t generation = generation_;
    if (++arrived_ == ranks) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

/// With --group-ranks (and --threads-as-ranks, the ranks sharing one
/// stream): rank 0's thread makes every rank's dispatch, then combine, in
/// one group each (one launch for all ranks: sdmaGroupEnd), timed as
/// timeMoe times a rank's call (event-timed medians, started once the group
/// is enqueued); the other threads wait, keeping their calls alive. Every
/// row checked after the eager and the timed calls.
void timeMoeGroup(Rank &k, const Args &args, const cuda::Driver *d,
                  MoeCall &call) {
  static std::vector<MoeCall *> calls;
  static std::mutex m;
  int R = k.ranks;
  {
    std::lock_guard<std::mutex> lock(m);
    calls.resize(R);
    calls[k.rank] = &call;
  }
  ThreadBarrier::get().wait(R);
  if (k.rank == 0) {
    auto group = [&](bool dispatch) {
      sdmaGroupStart();
      for (MoeCall *c : calls)
        dispatch ? c->dispatch() : c->combine();
      k.check(sdmaGroupEnd(), dispatch ? "dispatch group" : "combine group");
    };
    for (int i = 0; i < 3; ++i)
      group(true), group(false);
    for (MoeCall *c : calls)
      c->verify("group eager");
    Timer timer(d, static_cast<cuda::CUstream>(k.stream), 1);
    timer.gate = StartGate::get().init(d);
    double dispatchUs = timer.medianUs(args.iters, true, [&] { group(true); });
    double combineUs = timer.medianUs(args.iters, true, [&] { group(false); });
    for (MoeCall *c : calls)
      c->verify("group timed");
    if (!timer.ok)
      ++k.failures;
    if (!k.failures)
      std::printf("moe-bench group of %d: layout %s tokens %d routing %s "
                  "dispatch_us %.2f combine_us %.2f (one thread, one group "
                  "a call; every row checked)\n",
                  R, args.layout.c_str(), args.tokens, args.routing.c_str(),
                  dispatchUs, combineUs);
  }
  ThreadBarrier::get().wait(R);
}

int64_t padRows(int64_t n, int64_t align) {
  return std::max(align, (n + align - 1) / align * align);
}

/// --layout=expert: the dispatch into expert-major rows (each local
/// expert's group padded to --major-align), its combine back with the
/// dispatch's splits and offsets; every row, split and offset checked.
void moeBenchExpert(Rank &k, const Args &args, const cuda::Driver *d) {
  int R = k.ranks, me = k.rank, E = kExperts / R;
  int64_t A = args.majorAlign;
  auto g = expertRouting(R, args.tokens, args.routing == "skewed");
  // Capacity: a segment's rows, and R * C must hold what any rank sends
  // and any rank's padded groups.
  int64_t C = 0;
  for (int r = 0; r < R; ++r) {
    int64_t sent = 0, padded = 0;
    for (int64_t v : g[r])
      sent += v, C = std::max(C, v);
    for (int e = 0; e < E; ++e) {
      int64_t rows = 0;
      for (int q = 0; q < R; ++q)
        rows += g[q][size_t(r) * E + e];
      padded += padRows(rows, A);
    }
    C = std::max({C, (sent + R - 1) / R, (padded + R - 1) / R});
  }
  C = (C + 63) / 64 * 64;
  size_t n = size_t(R) * E, bytes = size_t(R) * C * kRowBytes;
  // The combine returns the rows into `back` (not `send`, which holds them
  // already: a combine that moved nothing would pass).
  char *send = static_cast<char *>(k.alloc(bytes));
  char *recv = static_cast<char *>(k.alloc(bytes));
  char *back = static_cast<char *>(k.alloc(bytes));
  auto *counts = static_cast<int64_t *>(k.alloc(5 * n * sizeof(int64_t)));
  if (!send || !recv || !back || !counts)
    return;
  int64_t *outSO = counts + n, *backSO = counts + 3 * n;
  int64_t sent = 0;
  for (int64_t v : g[me])
    sent += v;
  // Rows packed by global expert (rank-major): row id i of this rank.
  std::vector<unsigned char> host(size_t(R) * C * kRowBytes, 0);
  for (int64_t i = 0; i < sent; ++i)
    for (size_t b = 0; b < kRowBytes; ++b)
      host[i * kRowBytes + b] = byteOf(me, i, b);
  k.memory.write(send, host.data(), host.size());
  k.memory.write(counts, g[me].data(), n * sizeof(int64_t));
  // Where segment (e, r) lands here, and where it starts on r.
  std::vector<int64_t> at(n), from(n), rows(n);
  int64_t end = 0;
  for (int e = 0; e < E; ++e) {
    int64_t start = end;
    for (int r = 0; r < R; ++r) {
      size_t j = size_t(e) * R + r;
      at[j] = end;
      rows[j] = g[r][size_t(me) * E + e];
      for (size_t i = 0; i < size_t(me) * E + e; ++i)
        from[j] += g[r][i];
      end += rows[j];
    }
    end = start + padRows(end - start, A);
  }
  MoeCall call;
  call.dispatch = [&] {
    k.check(sdmaAlltoAllv2d(send, counts, recv, outSO, E, C, A, kHidden,
                            sdmaBfloat16, k.comm, k.stream),
            "dispatch");
  };
  call.combine = [&] {
    k.check(sdmaAlltoAllv2dOffset(recv, outSO, back, backSO, E, C, kHidden,
                                  sdmaBfloat16, k.comm, k.stream),
            "combine");
  };
  call.zero = [&] { // what a replay must write again
    std::vector<unsigned char> zero(bytes, 0);
    std::vector<int64_t> poison(4 * n, -1);
    k.memory.write(recv, zero.data(), zero.size());
    k.memory.write(back, zero.data(), zero.size());
    k.memory.write(outSO, poison.data(), poison.size() * sizeof(int64_t));
  };
  // The combine's splits and offsets: what this rank sent, packed.
  std::vector<int64_t> wantBack(2 * n);
  for (size_t i = 0, at = 0; i < n; at += g[me][i], ++i)
    wantBack[i] = g[me][i], wantBack[n + i] = int64_t(at);
  call.verify = [&](const char *what) {
    k.memory.sync(k.stream);
    std::vector<unsigned char> in(bytes), out(bytes);
    std::vector<int64_t> so(2 * n), bso(2 * n);
    k.memory.read(in.data(), recv, bytes);
    k.memory.read(out.data(), back, bytes);
    k.memory.read(so.data(), outSO, 2 * n * sizeof(int64_t));
    k.memory.read(bso.data(), backSO, 2 * n * sizeof(int64_t));
    if (bso != wantBack) {
      std::fprintf(stderr,
                   "rank %d: %s: the combine's out_splits_offsets "
                   "are wrong\n",
                   me, what);
      ++k.failures;
    }
    for (size_t j = 0; j < n && !k.failures; ++j) {
      if (so[j] != rows[j] || so[n + j] != at[j]) {
        std::fprintf(stderr,
                     "rank %d: %s: out_splits_offsets[%zu] is (%lld, "
                     "%lld), expected (%lld, %lld)\n",
                     me, what, j, (long long)so[j], (long long)so[n + j],
                     (long long)rows[j], (long long)at[j]);
        ++k.failures;
      }
      int r = int(j % R);
      for (int64_t i = 0; i < rows[j] && !k.failures; ++i)
        for (size_t b = 0; b < kRowBytes; b += 61)
          if (in[(at[j] + i) * kRowBytes + b] != byteOf(r, from[j] + i, b)) {
            std::fprintf(stderr,
                         "rank %d: %s: row %lld of expert %zu from "
                         "rank %d wrong\n",
                         me, what, (long long)i, j / R, r);
            ++k.failures;
            break;
          }
    }
    checkReturned(k, out == host, what);
  };
  call.zero(); // rows past what the combine returns stay 0, as in `host`
  call.capacity = C, call.sent = sent, call.arrived = end;
  call.send = send, call.recv = recv;
  if (args.groupRanks)
    timeMoeGroup(k, args, d, call);
  else
    timeMoe(k, args, d, call, {"moe-bench expert-counts", g});
}
} // namespace

void sdma::commtest::moeBench(Rank &k, const Args &args) {
  const cuda::Driver *d = k.memory.driver;
  if (!d || !d->cuStreamBeginCapture) {
    std::fprintf(stderr, "rank %d: moe-bench needs the CUDA device\n", k.rank);
    ++k.failures;
    return;
  }
  if (args.layout == "expert")
    return moeBenchExpert(k, args, d);
  int R = k.ranks, me = k.rank;
  bool skewed = args.routing == "skewed";
  auto m = routing(R, args.tokens, skewed);
  int64_t C = 0;
  for (auto &row : m)
    C = std::max(C, *std::max_element(row.begin(), row.end()));
  C = std::max<int64_t>(64, (C + 63) / 64 * 64);
  // Slots: slot p of the send buffer holds the rows for p (the rows are
  // laid out packed all the same; only where they go differs).
  bool slots = args.layout == "slots";
  auto layout = slots ? sdmaAlltoAllvSlots : sdmaAlltoAllvPacked;
  size_t bytes = R * C * kRowBytes;
  char *send = static_cast<char *>(k.alloc(bytes));
  char *recv = static_cast<char *>(k.alloc(bytes));
  auto *counts = static_cast<int64_t *>(k.alloc(3 * R * sizeof(int64_t)));
  if (!send || !recv || !counts)
    return;
  // Where segment p starts in the send buffer and segment r in the
  // receive buffer: packed, or one slot of C rows each.
  int64_t n = 0, arrived = 0;
  std::vector<int64_t> sendAt(R), recvAt(R);
  for (int p = 0; p < R; ++p) {
    sendAt[p] = slots ? p * C : n;
    recvAt[p] = slots ? p * C : arrived;
    n += m[me][p], arrived += m[p][me];
  }
  int64_t sendRows = slots ? R * C : n, recvRows = slots ? R * C : arrived;
  // Row i for p is this rank's (packed) row number sendAt'(p) + i.
  std::vector<unsigned char> host(sendRows * kRowBytes, 0);
  for (int p = 0, id = 0; p < R; ++p)
    for (int64_t i = 0; i < m[me][p]; ++i, ++id)
      for (size_t b = 0; b < kRowBytes; ++b)
        host[(sendAt[p] + i) * kRowBytes + b] = byteOf(me, id, b);
  k.memory.write(send, host.data(), host.size());
  k.memory.write(counts, m[me].data(), R * sizeof(int64_t));
  int64_t *got = counts + R, *back = counts + 2 * R;
  auto dispatch = [&] {
    k.check(sdmaAlltoAllv(send, counts, recv, got, C, kHidden, sdmaBfloat16,
                          layout, k.comm, k.stream),
            "dispatch");
  };
  auto combine = [&] {
    k.check(sdmaAlltoAllv(recv, got, send, back, C, kHidden, sdmaBfloat16,
                          layout, k.comm, k.stream),
            "combine");
  };
  // Every received row from its sender's packed position; the combine
  // puts this rank's rows back.
  auto verify = [&](const char *what) {
    k.memory.sync(k.stream);
    std::vector<unsigned char> in(recvRows * kRowBytes);
    std::vector<unsigned char> out(sendRows * kRowBytes);
    k.memory.read(in.data(), recv, in.size());
    k.memory.read(out.data(), send, out.size());
    for (int r = 0; r < R && !k.failures; ++r) {
      int64_t from = 0;
      for (int q = 0; q < me; ++q)
        from += m[r][q];
      for (int64_t i = 0; i < m[r][me] && !k.failures; ++i)
        for (size_t b = 0; b < kRowBytes; b += 61)
          if (in[(recvAt[r] + i) * kRowBytes + b] != byteOf(r, from + i, b)) {
            std::fprintf(stderr, "rank %d: %s: row %lld from rank %d wrong\n",
                         me, what, (long long)i, r);
            ++k.failures;
            break;
          }
    }
    checkReturned(k, out == host, what);
  };
  MoeCall call;
  call.dispatch = dispatch;
  call.combine = combine;
  call.verify = verify;
  call.zero = [&] {
    std::vector<unsigned char> zero(recvRows * kRowBytes, 0);
    k.memory.write(recv, zero.data(), zero.size());
  };
  call.capacity = C, call.sent = n, call.arrived = arrived;
  call.send = send, call.recv = recv;
  if (args.groupRanks)
    timeMoeGroup(k, args, d, call);
  else
    timeMoe(k, args, d, call, {"moe-bench counts", m});
}
