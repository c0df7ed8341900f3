//===- allreduce_bench.cu - sdma's all-reduce against fused kernels -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Sum all-reduce over R ranks sharing one GPU (default 8), 1 KiB to MAX
// (default 256 MiB) per rank, f32 and bf16, in one run: sdma's load/store
// programs (compiled schedules NAME-R.hip, made to compute in the type by
// LdstProgram::setReduction) and, timed the same way in the same process,
// two hand-written all-reduce kernels, each one launch for every rank:
//   fused-one-shot  block b of rank r reads every rank's input, adds in
//                   fp32 and stores rank r's output (R x R reads)
//   fused-two-shot  rank r's blocks reduce chunk r of the message (reading
//                   it from every rank) and store the result straight into
//                   every rank's output: reduce-scatter and all-gather in
//                   one pass, the least traffic an all-reduce can have
//                   (each element read R times, written R times)
// Both 16-byte vector loads, 512 threads, fp32 accumulation for bf16 (as
// sdma's kernel). Each point: median of RUNS runs, CUDA events around
// each; every output checked (the baselines' on the device against the
// exact sums; sdma's on the host by runAndCheck's exact evaluator, up to
// --check-max-mib, default 64: larger ones are timed only).
// Writes CSV to stdout.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime/include \
//     bench/allreduce_bench.cu <libsdmart.a> -ldl -o allreduce_bench
//   allreduce_bench PROGRAM_DIR [RUNS] [--ranks=R] [--max-mib=N]
//                   [--min-mib=N] [--check-max-mib=N] [--quick]
//                   [--types=f32,bf16]
// --min-mib: the smallest size (default 1 KiB), e.g. one size under ncu.
// --quick: sdma's one-shot and two-shot specialised kernels only.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.cuh"
#include "sdma/runtime/RunCheck.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <string>
#include <vector>

using namespace sdma::rt;

constexpr int kMaxRanks = 16;
struct Pointers {
  const int4 *in[kMaxRanks];
  int4 *out[kMaxRanks];
};

/// Eight bf16 or four f32 lanes of a 16-byte unit, added in fp32.
template <bool Bf16> struct Lanes;
template <> struct Lanes<false> {
  float v[4];
  __device__ void load(int4 u) {
    v[0] = __int_as_float(u.x), v[1] = __int_as_float(u.y);
    v[2] = __int_as_float(u.z), v[3] = __int_as_float(u.w);
  }
  __device__ void add(int4 u) {
    v[0] += __int_as_float(u.x), v[1] += __int_as_float(u.y);
    v[2] += __int_as_float(u.z), v[3] += __int_as_float(u.w);
  }
  __device__ int4 store() const {
    return make_int4(__float_as_int(v[0]), __float_as_int(v[1]),
                     __float_as_int(v[2]), __float_as_int(v[3]));
  }
};
template <> struct Lanes<true> {
  float v[8];
  __device__ void load(int4 u) {
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&u);
    for (int i = 0; i < 4; ++i) {
      float2 f = __bfloat1622float2(h[i]);
      v[2 * i] = f.x, v[2 * i + 1] = f.y;
    }
  }
  __device__ void add(int4 u) {
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&u);
    for (int i = 0; i < 4; ++i) {
      float2 f = __bfloat1622float2(h[i]);
      v[2 * i] += f.x, v[2 * i + 1] += f.y;
    }
  }
  __device__ int4 store() const {
    int4 u;
    __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&u);
    for (int i = 0; i < 4; ++i)
      h[i] = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
    return u;
  }
};

/// Grid: R x blocks. One-shot: block (r, b) sums units [b..) of every input
/// into rank r's output.
template <bool Bf16>
__global__ void fusedOneShot(Pointers p, int ranks, size_t units) {
  int r = blockIdx.y;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < units;
       i += stride) {
    Lanes<Bf16> acc;
    acc.load(p.in[r][i]);
    for (int q = 1; q < ranks; ++q)
      acc.add(p.in[(r + q) % ranks][i]);
    p.out[r][i] = acc.store();
  }
}

/// Two-shot in one pass: block (r, b) reduces units of chunk r and stores
/// them into every rank's output.
template <bool Bf16>
__global__ void fusedTwoShot(Pointers p, int ranks, size_t units) {
  int r = blockIdx.y;
  size_t per = units / ranks, first = r * per;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = first + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
       i < first + per; i += stride) {
    Lanes<Bf16> acc;
    acc.load(p.in[r][i]);
    for (int q = 1; q < ranks; ++q)
      acc.add(p.in[(r + q) % ranks][i]);
    int4 v = acc.store();
    for (int q = 0; q < ranks; ++q)
      p.out[(r + q) % ranks][i] = v;
  }
}

/// Element i of rank r's input: a small integer, exact in bf16 sums of 8.
__host__ __device__ inline int inputValue(int r, size_t i) {
  return int((i * 7 + (size_t)r * 13 + (i >> 10)) % 17) - 8;
}

template <bool Bf16> __global__ void fill(void *in, int r, size_t n) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float v = (float)inputValue(r, i);
    if (Bf16)
      static_cast<__nv_bfloat16 *>(in)[i] = __float2bfloat16(v);
    else
      static_cast<float *>(in)[i] = v;
  }
}

template <bool Bf16>
__global__ void check(const void *out, int ranks, size_t n,
                      unsigned long long *wrong) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    int want = 0;
    for (int r = 0; r < ranks; ++r)
      want += inputValue(r, i);
    float got =
        Bf16 ? __bfloat162float(static_cast<const __nv_bfloat16 *>(out)[i])
             : static_cast<const float *>(out)[i];
    if (got != (float)want)
      atomicAdd(wrong, 1ull);
  }
}

static int R = 8;

static void row(const char *type, const std::string &variant, size_t bytes,
                const std::vector<double> &us, uint64_t wrong,
                uint64_t checked) {
  double t = median(us);
  // nccl-tests: algbw = message / time, busbw = algbw x 2 (R - 1) / R.
  double algbw = (double)bytes / (t * 1e3);
  std::printf("all_reduce,%s,%s,%zu,%.3f,%.3f,%.3f,%d,%llu,%llu,%d\n", type,
              variant.c_str(), bytes, t, algbw, algbw * 2 * (R - 1) / R,
              (int)us.size(), (unsigned long long)wrong,
              (unsigned long long)checked, R);
  std::fflush(stdout);
}

template <bool Bf16>
static void baselines(const char *type, size_t s, int runs, int sms,
                      const Pointers &p, cudaStream_t stream,
                      unsigned long long *wrong) {
  size_t units = s / 16, n = s / (Bf16 ? 2 : 4);
  for (int r = 0; r < R; ++r)
    fill<Bf16><<<256, 512, 0, stream>>>((void *)p.in[r], r, n);
  for (int two = 0; two < 2; ++two) {
    if (two && units % R)
      continue;
    // One block per 512 units, at most 4 blocks per SM over the R ranks.
    size_t work = two ? units / R : units;
    int blocks = (int)std::clamp<size_t>((work + 511) / 512, 1,
                                         std::max(1, 4 * sms / R));
    dim3 grid(blocks, R);
    auto launch = [&] {
      if (two)
        fusedTwoShot<Bf16><<<grid, 512, 0, stream>>>(p, R, units);
      else
        fusedOneShot<Bf16><<<grid, 512, 0, stream>>>(p, R, units);
    };
    std::vector<double> us = timeRuns(stream, runs, launch);
    CK(cudaGetLastError());
    CK(cudaMemsetAsync(wrong, 0, 8, stream));
    for (int r = 0; r < R; ++r)
      check<Bf16><<<256, 512, 0, stream>>>(p.out[r], R, n, wrong);
    unsigned long long bad = 0;
    CK(cudaMemcpyAsync(&bad, wrong, 8, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    row(type, two ? "fused-two-shot" : "fused-one-shot", s, us, bad,
        (uint64_t)R * s);
    for (int r = 0; r < R; ++r)
      CK(cudaMemsetAsync(p.out[r], 0, s, stream));
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s PROGRAM_DIR [RUNS] [--ranks=R] [--max-mib=N] "
                 "[--min-mib=N] [--check-max-mib=N] [--quick] "
                 "[--types=f32,bf16]\n",
                 argv[0]);
    return 1;
  }
  std::string dir = argv[1];
  int runs = 50;
  size_t maxBytes = 256u << 20, checkMax = 64u << 20, minBytes = 1024;
  bool quick = false;
  std::string types = "f32,bf16";
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--ranks=", 0) == 0)
      R = std::atoi(a.c_str() + 8);
    else if (a.rfind("--max-mib=", 0) == 0)
      maxBytes = (size_t)std::atoi(a.c_str() + 10) << 20;
    else if (a.rfind("--min-mib=", 0) == 0)
      minBytes = (size_t)std::atoi(a.c_str() + 10) << 20;
    else if (a == "--quick")
      quick = true;
    else if (a.rfind("--types=", 0) == 0)
      types = a.substr(8);
    else if (a.rfind("--check-max-mib=", 0) == 0)
      checkMax = (size_t)std::atoi(a.c_str() + 16) << 20;
    else
      runs = std::atoi(a.c_str());
  }
  if (R < 1 || R > kMaxRanks) {
    std::fprintf(stderr, "--ranks: 1..%d\n", kMaxRanks);
    return 1;
  }
  std::vector<size_t> sizes;
  for (size_t s = 1024; s <= maxBytes; s *= 4)
    if (s >= minBytes)
      sizes.push_back(s);
  Pointers p{};
  for (int r = 0; r < R; ++r) {
    CK(cudaMalloc((void **)&p.in[r], maxBytes));
    CK(cudaMalloc((void **)&p.out[r], maxBytes));
  }
  unsigned long long *wrong;
  CK(cudaMalloc(&wrong, 8));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::printf("collective,type,variant,bytes_per_rank,median_us,algbw_GBps,"
              "busbw_GBps,runs,wrong_elements,checked_bytes,ranks\n");
  for (const char *type : {"f32", "bf16"}) {
    if (("," + types + ",").find("," + std::string(type) + ",") ==
        std::string::npos)
      continue;
    struct Entry {
      std::string name;
      std::unique_ptr<Executor> executor;
      Plan plan;
    };
    std::vector<Entry> sdma;
    // NAME-R.hip (specialised kernel) and NAME-R.table.hip (the table
    // kernel of the same schedule, "-table").
    for (const char *name :
         {"all_reduce_one_shot", "all_reduce_two_shot", "all_reduce_ring"})
      for (const char *kernel : {"", ".inline", ".table", ".2bpsm", ".regs"}) {
        // --quick: the specialised one-shot and two-shot only (default,
        // -2bpsm, -regs).
        // ".2bpsm": the specialised kernel compiled to fit two blocks per
        // SM (SDMA_MIN_BLOCKS: registers capped at 64).
        // ".regs": the specialised kernel with its reduce rows' pointers
        // kept in registers (SDMA_SEG_PTR_CAP 0) instead of staged in
        // shared memory.
        bool two = std::string(kernel) == ".2bpsm";
        bool regs = std::string(kernel) == ".regs";
        if (quick && ((*kernel && !two && !regs) ||
                      std::string(name) == "all_reduce_ring"))
          continue;
        std::string error;
        // ".inline": the specialised kernel with its segment routines
        // inlined into every phase (SDMA_SEG_INLINE).
        bool inlined = std::string(kernel) == ".inline";
        std::string path = dir + "/" + name + "-" + std::to_string(R) +
                           (inlined || two || regs ? "" : kernel) + ".hip";
        std::optional<LdstProgram> program = LdstProgram::load(path, error);
        if (program && inlined) {
          // Only for a kernel that calls its segment routines.
          if (program->source.find("#define SDMA_SEG_INLINE SDMA_INLINE") !=
              std::string::npos)
            continue;
          program->source =
              "#define SDMA_SEG_INLINE SDMA_INLINE\n" + program->source;
        }
        if (program && two)
          program->source = "#define SDMA_MIN_BLOCKS 2\n" + program->source;
        if (program && regs)
          program->source = "#define SDMA_SEG_PTR_CAP 0\n" + program->source;
        if (!program || !program->setReduction(type, "sum", error)) {
          std::fprintf(stderr, "%s: %s\n", path.c_str(), error.c_str());
          return 1;
        }
        CompiledSchedule compiled{program->layout(), *program, std::nullopt};
        auto executor =
            createExecutor("cuda-ldst", compiled, ExecutorOptions{}, error);
        if (!executor) {
          std::fprintf(stderr, "%s: %s\n", path.c_str(), error.c_str());
          return 1;
        }
        std::string variant = std::string("sdma-") + (name + 11);
        std::replace(variant.begin(), variant.end(), '_', '-');
        if (*kernel)
          variant += "-" + std::string(kernel + 1);
        sdma.push_back({variant, std::move(executor), compiled.plan});
      }
    bool bf16 = std::string(type) == "bf16";
    for (size_t s : sizes) {
      if (bf16)
        baselines<true>(type, s, runs, sms, p, stream, wrong);
      else
        baselines<false>(type, s, runs, sms, p, stream, wrong);
      RunCheckOptions chain;
      chain.timedRuns = runs;
      chain.compareWithReference = false;
      for (Entry &entry : sdma) {
        const Plan &plan = entry.plan;
        size_t chunks = plan.buffers[plan.collective->input].chunks;
        if (s % (chunks * (bf16 ? 2 : 4)))
          continue;
        std::string error;
        RunCheckResult result;
        // Checked on the host (the exact evaluator) up to --check-max-mib;
        // larger messages are timed only (checked_bytes 0).
        bool ok =
            s <= checkMax
                ? runAndCheck(*entry.executor, plan, s / chunks, chain, result,
                              error)
                : entry.executor->prepare(s / chunks, error) &&
                      entry.executor->time(runs, result.microseconds, error);
        if (!ok) {
          std::fprintf(stderr, "%s %s %zu: %s\n", entry.name.c_str(), type, s,
                       error.c_str());
          return 1;
        }
        row(type, entry.name, s, result.microseconds, result.check.wrongBytes,
            result.check.checkedBytes);
      }
    }
  }
  return 0;
}
