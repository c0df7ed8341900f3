//===- CommMoeBench.cpp - sdma-comm-test's MoE all-to-allv bench ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// DeepSeek-V3's dispatch and combine (hidden 7168, bf16, top-8 of 256
// experts, 32 per rank) through sdmaAlltoAllv (packed), with the split
// sizes in device memory. Every rank draws every rank's routing from one
// seed, so each knows the whole count matrix: the capacity, and the rows
// it must receive (every received row is checked, eager and replayed).
// Per rank and call, medians of event-timed calls: dispatch, combine, and
// dispatch + combine captured in one CUDA graph and replayed. Run with
// --threads-as-ranks: ranks that share one GPU must share its context to
// run at once (processes time-slice it).
//
//===----------------------------------------------------------------------===//

#include "CommTest.h"

#include <algorithm>
#include <random>

using namespace sdma::commtest;

namespace {

constexpr int kHidden = 7168, kExperts = 256, kTopK = 8;
constexpr size_t kRowBytes = kHidden * 2;

/// counts[r][p]: rows rank r sends rank p (each token to the ranks of its
/// top-8 experts, a row per (token, expert)).
std::vector<std::vector<int64_t>> routing(int R, int tokens, bool skewed) {
  std::vector<double> weight(kExperts, 1.0);
  if (skewed) // Zipf-like over experts: low-numbered ranks are hot
    for (int e = 0; e < kExperts; ++e)
      weight[e] = 1.0 / std::pow(1.0 + e / 8.0, 1.5);
  std::vector<std::vector<int64_t>> m(R, std::vector<int64_t>(R, 0));
  int perRank = kExperts / R;
  for (int r = 0; r < R; ++r) {
    std::mt19937_64 rng(1000 + r);
    for (int t = 0; t < tokens; ++t) {
      std::vector<double> w = weight;
      for (int k = 0; k < kTopK; ++k) {
        std::discrete_distribution<int> pick(w.begin(), w.end());
        int e = pick(rng);
        w[e] = 0; // distinct experts
        ++m[r][e / perRank];
      }
    }
  }
  return m;
}

/// Byte b of row `row` of rank r's packed send buffer.
unsigned char byteOf(int r, int64_t row, size_t b) {
  return static_cast<unsigned char>(r * 37 + row * 11 + b * 3);
}

struct Timer {
  const cuda::Driver *d;
  cuda::CUstream s;
  cuda::CUevent a = nullptr, b = nullptr;
  Timer(const cuda::Driver *d, cuda::CUstream s) : d(d), s(s) {
    d->cuEventCreate(&a, 0);
    d->cuEventCreate(&b, 0);
  }
  ~Timer() {
    d->cuEventDestroy_v2(a);
    d->cuEventDestroy_v2(b);
  }
  template <typename F> double medianUs(int iters, F &&call) {
    std::vector<double> us;
    for (int i = 0; i < iters; ++i) {
      d->cuEventRecord(a, s);
      call();
      d->cuEventRecord(b, s);
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

void sdma::commtest::moeBench(Rank &k, const Args &args) {
  const cuda::Driver *d = k.memory.driver;
  if (!d || !d->cuStreamBeginCapture) {
    std::fprintf(stderr, "rank %d: moe-bench needs the CUDA device\n", k.rank);
    ++k.failures;
    return;
  }
  int R = k.ranks, me = k.rank;
  bool skewed = args.routing == "skewed";
  auto m = routing(R, args.tokens, skewed);
  int64_t C = 0;
  for (auto &row : m)
    C = std::max(C, *std::max_element(row.begin(), row.end()));
  C = (C + 63) / 64 * 64;
  size_t bytes = R * C * kRowBytes;
  char *send = static_cast<char *>(k.alloc(bytes));
  char *recv = static_cast<char *>(k.alloc(bytes));
  auto *counts = static_cast<int64_t *>(k.alloc(3 * R * sizeof(int64_t)));
  if (!send || !recv || !counts)
    return;
  int64_t n = 0, arrived = 0;
  for (int p = 0; p < R; ++p)
    n += m[me][p], arrived += m[p][me];
  std::vector<unsigned char> host(n * kRowBytes);
  for (int64_t row = 0; row < n; ++row)
    for (size_t b = 0; b < kRowBytes; ++b)
      host[row * kRowBytes + b] = byteOf(me, row, b);
  k.memory.write(send, host.data(), host.size());
  k.memory.write(counts, m[me].data(), R * sizeof(int64_t));
  int64_t *got = counts + R, *back = counts + 2 * R;
  auto dispatch = [&] {
    k.check(sdmaAlltoAllv(send, counts, recv, got, C, kHidden, sdmaBfloat16,
                          sdmaAlltoAllvPacked, k.comm, k.stream),
            "dispatch");
  };
  auto combine = [&] {
    k.check(sdmaAlltoAllv(recv, got, send, back, C, kHidden, sdmaBfloat16,
                          sdmaAlltoAllvPacked, k.comm, k.stream),
            "combine");
  };
  // Every received row from its sender's packed position; the combine
  // puts this rank's rows back.
  auto verify = [&](const char *what) {
    k.memory.sync(k.stream);
    std::vector<unsigned char> in(arrived * kRowBytes), out(n * kRowBytes);
    k.memory.read(in.data(), recv, in.size());
    k.memory.read(out.data(), send, out.size());
    int64_t at = 0;
    for (int r = 0; r < R && !k.failures; ++r) {
      int64_t from = 0;
      for (int q = 0; q < me; ++q)
        from += m[r][q];
      for (int64_t i = 0; i < m[r][me] && !k.failures; ++i, ++at)
        for (size_t b = 0; b < kRowBytes; b += 61)
          if (in[at * kRowBytes + b] != byteOf(r, from + i, b)) {
            std::fprintf(stderr, "rank %d: %s: row %lld from rank %d wrong\n",
                         me, what, (long long)i, r);
            ++k.failures;
            break;
          }
    }
    if (out != host) {
      std::fprintf(stderr, "rank %d: %s: combine did not return the rows\n",
                   me, what);
      ++k.failures;
    }
    sdmaResult_t async = sdmaSuccess;
    sdmaCommGetAsyncError(k.comm, &async);
    if (async != sdmaSuccess)
      k.check(async, what);
  };
  for (int i = 0; i < 3; ++i)
    dispatch(), combine();
  verify("eager");
  auto stream = static_cast<cuda::CUstream>(k.stream);
  Timer timer(d, stream);
  double dispatchUs = timer.medianUs(args.iters, dispatch);
  double combineUs = timer.medianUs(args.iters, combine);
  verify("timed");
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
  std::vector<unsigned char> zero(bytes, 0);
  k.memory.write(recv, zero.data(), bytes);
  d->cuGraphLaunch(exec, stream);
  verify("graph replay");
  double graphUs = timer.medianUs(args.iters, [&] {
    if (d->cuGraphLaunch(exec, stream))
      ++k.failures;
  });
  verify("graph replays");
  d->cuGraphExecDestroy(exec);
  d->cuGraphDestroy(g);
  if (!k.failures && me == 0) { // the matrix, for the baselines to move
    std::string text = "moe-bench counts";
    for (auto &row : m)
      for (int64_t v : row)
        text += " " + std::to_string(v);
    std::printf("%s\n", text.c_str());
  }
  if (!k.failures)
    std::printf("moe-bench rank %d of %d: tokens %d routing %s capacity %lld "
                "sent %lld received %lld dispatch_us %.2f combine_us %.2f "
                "graph_us %.2f (every row checked)\n",
                me, R, args.tokens, args.routing.c_str(), (long long)C,
                (long long)n, (long long)arrived, dispatchUs, combineUs,
                graphUs);
}
