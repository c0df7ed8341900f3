//===- BenchCommon.cuh - what the benchmark harnesses share ----*- CUDA -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// CK (a CUDA runtime call that must succeed, else exit naming it) and
// timeRuns (CUDA events around each of `runs` calls after three warm-ups),
// timeOnce (one call between two events).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_BENCH_BENCHCOMMON_CUH
#define SDMA_BENCH_BENCHCOMMON_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,           \
                   cudaGetErrorString(e));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// Microseconds of one call of f(), between events e0 and e1 on `stream`.
template <typename F>
static double timeOnce(cudaStream_t stream, cudaEvent_t e0, cudaEvent_t e1,
                       F f) {
  CK(cudaEventRecord(e0, stream));
  f();
  CK(cudaEventRecord(e1, stream));
  CK(cudaEventSynchronize(e1));
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  return ms * 1000.0;
}

/// Times f() `runs` times, events around each call.
template <typename F>
static std::vector<double> timeRuns(cudaStream_t stream, int runs, F f) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int w = 0; w < 3; ++w)
    f();
  CK(cudaStreamSynchronize(stream));
  std::vector<double> us;
  for (int i = 0; i < runs; ++i)
    us.push_back(timeOnce(stream, e0, e1, f));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return us;
}

#endif // SDMA_BENCH_BENCHCOMMON_CUH
