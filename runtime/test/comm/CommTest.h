//===- CommTest.h - one rank of the C API's multi-process test -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the cases (CommTest.cpp) and the benches (CommBench.cpp) of
// sdma-comm-test share: the command line, buffer copies for the device in
// use, the byte pattern, and a rank's state.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TEST_COMMTEST_H
#define SDMA_RUNTIME_TEST_COMMTEST_H

#include "sdma/sdma.h"

#include "cuda/CudaDriver.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace sdma::commtest {

using namespace sdma::rt;

struct Args {
  std::string kase = "collectives", schedule, routing = "uniform",
              layout = "packed", bad = "over";
  /// reductions: the element types to run ("f32,bf16", ...; "": all).
  std::string types;
  std::vector<size_t> counts{1, 7, 1000, 4099};
  int iters = 50, threadsAsRanks = 0, groupRanks = 0, tokens = 128;
  /// moe-bench --layout=expert: rows an expert's group is padded to.
  int majorAlign = 128;
  /// Before each collective a rank sleeps a random 0..jitterUs us (its own
  /// seed): the ranks reach every call at different times.
  int jitterUs = 0;
};

/// Host <-> buffer copies for the device in use (the CPU device's memory is
/// host memory; a GPU's goes through the driver).
struct Memory {
  const cuda::Driver *driver = nullptr;
  cuda::CUcontext context = nullptr;
  bool init(std::string &error) {
    const char *device = std::getenv("SDMA_DEVICE");
    // The CPU device's memory is host memory; on HIP (no AMD GPU here)
    // only joining is exercised.
    if (device &&
        (std::string(device) == "cpu" || std::string(device) == "hip"))
      return true;
    driver = cuda::Driver::get(error);
    if (!driver)
      return false;
    int ordinal = 0;
    if (const char *local = std::getenv("LOCAL_RANK")) {
      int count = 1;
      driver->cuDeviceGetCount(&count);
      ordinal = std::atoi(local) % std::max(1, count);
    }
    cuda::CUdevice dev = 0;
    return driver->cuDeviceGet(&dev, ordinal) == 0 &&
           driver->cuDevicePrimaryCtxRetain(&context, dev) == 0 &&
           driver->cuCtxSetCurrent(context) == 0;
  }
  void write(void *dst, const void *src, size_t n) const {
    if (!driver) {
      std::memcpy(dst, src, n);
      return;
    }
    driver->cuMemcpyHtoD_v2(reinterpret_cast<cuda::CUdeviceptr>(dst), src, n);
    // From pageable memory the copy may return before its DMA lands, and
    // the rank's stream is non-blocking (not ordered after it): a kernel
    // that starts at once (a low-latency call, no barrier to wait at) read
    // the bytes from before the write on an H200. Wait for the legacy
    // stream only (the copy's): a whole-context wait would also wait for
    // the kernels of ranks that are threads of this process, which may be
    // waiting for this rank's next call.
    driver->cuStreamSynchronize(nullptr);
  }
  void read(void *dst, const void *src, size_t n) const {
    if (!driver)
      std::memcpy(dst, src, n);
    else
      driver->cuMemcpyDtoH_v2(dst, reinterpret_cast<cuda::CUdeviceptr>(src), n);
  }
  void sync(sdmaStream_t stream) const {
    if (driver)
      driver->cuStreamSynchronize(static_cast<cuda::CUstream>(stream));
  }
};

/// The byte rank `r` puts at index `i` of its buffer with tag `tag`.
inline unsigned char pattern(int r, int tag, size_t i) {
  uint64_t x = (uint64_t(r) + 1) * 0x9E3779B97F4A7C15ull ^
               (uint64_t(tag) << 40) ^ (i * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 29;
  return static_cast<unsigned char>(x * 0x94D049BB133111EBull >> 56);
}
constexpr unsigned char kUntouched = 0xEE;

struct Rank {
  int rank = 0, ranks = 1;
  sdmaComm_t comm = nullptr;
  sdmaStream_t stream = nullptr;
  Memory memory;
  int failures = 0;
  int jitterUs = 0;
  unsigned seed = 1;

  /// Args::jitterUs's random delay.
  void jitter() {
    if (!jitterUs)
      return;
    seed = seed * 1103515245u + 12345u + unsigned(rank);
    std::this_thread::sleep_for(
        std::chrono::microseconds((seed >> 8) % unsigned(jitterUs + 1)));
  }

  bool check(sdmaResult_t result, const char *what) {
    if (result == sdmaSuccess)
      return true;
    std::fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what,
                 sdmaGetErrorString(result), sdmaGetLastError(comm));
    ++failures;
    return false;
  }
  void *alloc(size_t bytes) {
    void *p = nullptr;
    check(sdmaMemAlloc(comm, &p, bytes), "sdmaMemAlloc");
    return p;
  }
  void fill(void *p, size_t n, int r, int tag) {
    std::vector<unsigned char> v(n);
    for (size_t i = 0; i < n; ++i)
      v[i] = tag < 0 ? kUntouched : pattern(r, tag, i);
    memory.write(p, v.data(), n);
  }
  /// With $SDMA_EXPECT_PATH set ("dma", "ldst"), the last collective's
  /// path (sdmaCommGetLastPath) must start with `want` (default: it).
  void expectPath(const std::string &what, const char *want = nullptr) {
    const char *expected = std::getenv("SDMA_EXPECT_PATH");
    if (!expected || !*expected)
      return;
    if (!want)
      want = expected;
    const char *path = nullptr;
    if (!check(sdmaCommGetLastPath(comm, &path), "sdmaCommGetLastPath"))
      return;
    if (std::strncmp(path, want, std::strlen(want)) != 0) {
      std::fprintf(stderr, "rank %d: %s took path '%s', expected '%s'\n", rank,
                   what.c_str(), path, want);
      ++failures;
    }
  }
  /// Compares buffer `p` with `expect`; reports the first wrong byte.
  void expect(const void *p, const std::vector<unsigned char> &expect,
              const std::string &what) {
    std::vector<unsigned char> got(expect.size());
    memory.read(got.data(), p, got.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != expect[i]) {
        std::fprintf(stderr, "rank %d: %s: byte %zu is %d, expected %d\n", rank,
                     what.c_str(), i, got[i], expect[i]);
        ++failures;
        return;
      }
  }
};

/// 0 when `result` is a failure whose message mentions `needle`.
inline int expectFailure(Rank &k, sdmaResult_t result, const char *needle) {
  const char *message = sdmaGetLastError(k.comm);
  if (result != sdmaSuccess && std::strstr(message, needle)) {
    std::printf("rank %d refused as expected (%s): %s\n", k.rank,
                sdmaGetErrorString(result), message);
    return 0;
  }
  std::fprintf(stderr,
               "rank %d: expected a failure mentioning '%s'; got %s: %s\n",
               k.rank, needle, sdmaGetErrorString(result), message);
  return 1;
}

/// sdmaAlltoAllv against its definition (CommAlltoAllv.cpp).
void allToAllv(Rank &k);
/// CommP2p.cpp: sdmaSend/sdmaRecv, grouped and alone.
void pointToPoint(Rank &k);
/// A bad count (args.bad, args.layout): reported, never an overwrite.
int allToAllvOverflow(Rank &k, const Args &args);
/// sdmaAlltoAllv2d and sdmaAlltoAllv2dOffset (CommMoe2d.cpp).
void allToAllv2d(Rank &k);
int allToAllv2dOverflow(Rank &k);
int allToAllv2dBadOffset(Rank &k, bool overCapacity);

/// sdmaAllReduce, sdmaReduceScatter and sdmaReduce against their
/// definition (CommReduce.cpp).
void reductions(Rank &k, const Args &args);
/// Every (schedule, root, type, operator) the communicator can run, once
/// each, every byte checked; returns how many there were.
int reductionVariants(Rank &k);

/// `calls` collectives back to back, low-latency and not (CommLowLatency.cpp).
int lowLatency(Rank &k, int calls);

/// DeepSeek-V3 dispatch/combine through sdmaAlltoAllv (CommMoeBench.cpp).
void moeBench(Rank &k, const Args &args);

/// Per-call latency of AllGather, AlltoAll and AllReduce: `iters` calls back
/// to back, then one wait (CSV on rank 0).
void bench(Rank &k, int iters);
/// Buffers shared for a call on first use (CommShared.cpp).
void shared(Rank &k);
/// The in-process executor timed the same way (no launcher).
int baseline(const Args &args);
/// The bench's all-gather and all-to-all with one thread making every
/// rank's call in groups (--group-ranks=N; CommBench.cpp).
int groupBench(const Args &args, int ranks);

} // namespace sdma::commtest

#endif // SDMA_RUNTIME_TEST_COMMTEST_H
