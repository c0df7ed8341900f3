//===- collective_bench.cu - sdma's kernels against the baselines ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// All-gather and all-to-all over R ranks (default 8, sharing one GPU), 1 KiB
// to MAX (default 64 MiB) per rank, in one run: every sdma load/store program
// given (compiled schedules: NAME-R.hip + NAME-R.json), the DMA plans on CUDA
// streams (plain, batched copies, replayed graph) and, measured the same way
// in the same process, the two baselines of ../shared/MEASUREMENTS.md:
//   memcpy-per-transfer  one cudaMemcpyAsync per (source, destination) pair
//   fused-kernel         one hand-written copy kernel for all transfers
//                        (grid = transfers x 1..32 blocks, 512 threads, int4;
//                        one GPU only)
// With --devices=0,1,.. the ranks are spread over GPUs (one per rank when
// there are as many), and each copy-engine variant is also run while a
// kernel occupies every SM of every GPU: "sm_free_us" is the time of its
// cross-GPU copies then (copies that need no SM finish long before the
// 200 ms blocker; same-GPU copies run on SMs on NVIDIA and are left out).
// Each point: median of RUNS runs, CUDA events around each collective; all
// outputs checked after timing. Writes CSV to stdout.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime/include bench/collective_bench.cu
//   \
//     <libsdmart.a> -ldl -o collective_bench
//   collective_bench PROGRAM_DIR [RUNS] [--ranks=R] [--devices=0,1]
//                    [--max-mib=N] [--ldst-only] [--only=COLLECTIVE]
//                    [--programs=NAME,...] [--variants=SUFFIX,...]
//                    [--sizes=BYTES,...] [--interleave] [--chunk-const]
// --ldst-only: the fused kernel and the load/store programs alone (no
// memcpy baseline, no DMA plans).
// --interleave (with --ldst-only, one GPU): RUNS rounds, each timing the
// fused kernel and every program once, in an order rotated round by round,
// so that drift of the machine (clocks, other tenants) falls on all alike;
// paired_vs_fused is the median over rounds of the program's time / the
// fused kernel's time in the same round (-1 when not interleaved). Outputs
// are checked before and after the rounds.
// --chunk-const (with --interleave): also each program as emitted, rebuilt
// for every size with that size's chunk compiled in (SDMA_CHUNK_BYTES:
// every offset and count a constant), as NAME-cconst.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.cuh"
#include "sdma/runtime/RunCheck.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <optional>
#include <string>
#include <vector>

using namespace sdma::rt;

static int R = 8;

struct Copy {
  const int4 *src;
  int4 *dst;
  size_t n16;
};

__global__ void fusedCopy(const Copy *copies, int ncopies, int bpc) {
  int c = blockIdx.x / bpc, b = blockIdx.x % bpc;
  if (c >= ncopies)
    return;
  Copy cp = copies[c];
  size_t stride = (size_t)bpc * blockDim.x;
  for (size_t i = (size_t)b * blockDim.x + threadIdx.x; i < cp.n16; i += stride)
    cp.dst[i] = cp.src[i];
}

/// A kernel that holds every SM it gets until `ns` have passed.
__global__ void occupy(unsigned long long ns) {
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > ns)
      break;
  }
}

static std::string gDevices; // for the CSV

static void row(const char *collective, const std::string &variant,
                size_t bytesPerRank, const std::vector<double> &us,
                uint64_t wrong, uint64_t checked, double smFreeUs = -1,
                double pairedRatio = -1) {
  double t = median(us);
  // nccl-tests' conventions: all-gather's algbw counts the whole output
  // (R x the per-rank input), all-to-all's the per-rank buffer; busbw =
  // algbw x (R - 1) / R for both.
  bool ag = std::string(collective) == "all_gather";
  double bytes = ag ? (double)bytesPerRank * R : (double)bytesPerRank;
  double algbw = bytes / (t * 1e3);
  std::printf("%s,%s,%zu,%.3f,%.3f,%.3f,%d,%llu,%llu,%d,%s,%.1f,%.4f\n",
              collective, variant.c_str(), bytesPerRank, t, algbw,
              algbw * (R - 1) / (double)R, (int)us.size(),
              (unsigned long long)wrong, (unsigned long long)checked, R,
              gDevices.c_str(), smFreeUs, pairedRatio);
  std::fflush(stdout);
}

/// One program in an interleaved comparison.
struct Timed {
  Executor *executor;
  const Plan *plan;
  std::string name;
};

/// Checks `what`'s outputs on the device (left by its last run) against
/// the collective; adds to `wrong` and `checked`.
static void checkLeft(const Timed &what, size_t chunk, uint64_t &wrong,
                      uint64_t &checked) {
  std::string error;
  std::optional<HostMemory> memory =
      HostMemory::create(*what.plan, chunk, error);
  if (!memory || !what.executor->download(*memory, error)) {
    std::fprintf(stderr, "%s: %s\n", what.name.c_str(), error.c_str());
    std::exit(1);
  }
  CheckResult again = checkOutputs(*what.plan, *memory);
  wrong += again.wrongBytes;
  checked += again.checkedBytes;
}

/// --interleave: `runs` rounds of the fused kernel and every program once
/// each (the order rotated by one per round), then one row per variant
/// with its median and the median over rounds of its time / the fused
/// kernel's in the same round.
template <typename Fused, typename Check>
static void interleaved(const char *collective, size_t s, cudaStream_t stream,
                        int runs, Fused fused, Check check,
                        std::vector<Timed> &programs) {
  const size_t n = programs.size() + 1; // 0: the fused kernel
  std::vector<uint64_t> wrong(n, 0), checked(n, 0);
  std::vector<size_t> chunk(n, 0);
  // Checked once before the rounds (fill, run, compare).
  RunCheckOptions once;
  once.timedRuns = 0;
  once.compareWithReference = false;
  for (size_t v = 1; v < n; ++v) {
    const Timed &p = programs[v - 1];
    chunk[v] = s / p.plan->buffers[p.plan->collective->input].chunks;
    RunCheckResult result;
    std::string error;
    if (!runAndCheck(*p.executor, *p.plan, chunk[v], once, result, error)) {
      std::fprintf(stderr, "%s: %s\n", p.name.c_str(), error.c_str());
      std::exit(1);
    }
    wrong[v] += result.check.wrongBytes;
    checked[v] += result.check.checkedBytes;
  }
  timeRuns(stream, 1, fused); // warm
  CK(cudaStreamSynchronize(stream));
  check(wrong[0], checked[0]);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<std::vector<double>> us(n);
  for (int i = 0; i < runs; ++i)
    for (size_t k = 0; k < n; ++k) {
      size_t v = (i + k) % n;
      if (v == 0) {
        us[0].push_back(timeOnce(stream, e0, e1, fused));
        continue;
      }
      std::vector<double> one;
      std::string error;
      if (!programs[v - 1].executor->time(1, one, error) || one.size() != 1) {
        std::fprintf(stderr, "%s: %s\n", programs[v - 1].name.c_str(),
                     error.c_str());
        std::exit(1);
      }
      us[v].push_back(one[0]);
    }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  // After the rounds: what the last runs left.
  uint64_t w = 0, c = 0;
  CK(cudaStreamSynchronize(stream));
  check(w, c);
  wrong[0] += w;
  checked[0] += c;
  row(collective, "fused-kernel", s, us[0], wrong[0], checked[0], -1, 1.0);
  for (size_t v = 1; v < n; ++v) {
    checkLeft(programs[v - 1], chunk[v], wrong[v], checked[v]);
    std::vector<double> ratio;
    for (int i = 0; i < runs; ++i)
      ratio.push_back(us[v][i] / us[0][i]);
    row(collective, programs[v - 1].name, s, us[v], wrong[v], checked[v], -1,
        median(ratio));
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s PROGRAM_DIR [RUNS] [--ranks=R] [--devices=0,1] "
        "[--max-mib=N] [--min-mib=N] [--ldst-only] [--only=COLLECTIVE] "
        "[--programs=NAME,...] [--variants=SUFFIX,...] "
        "[--sizes=BYTES,...] [--interleave] [--chunk-const]\n",
        argv[0]);
    return 1;
  }
  std::string dir = argv[1];
  int runs = 50;
  size_t maxBytes = 64u << 20, minBytes = 1024;
  std::vector<int> devices;
  bool ldstOnly = false, interleave = false, chunkConst = false;
  std::string only; // one collective: all_gather or all_to_all
  std::string pick; // --programs=NAME,...: only these load/store programs
  // --variants=SUFFIX,...: only these variants of each load/store program
  // ("default" for the program as emitted, else the suffix without its
  // dash: u4, r2, table, ...).
  std::string variants;
  // --sizes=BYTES,...: these sizes per rank (a K or M suffix: KiB, MiB)
  // instead of 1 KiB, 4 KiB, ... up to --max-mib.
  std::vector<size_t> sizes;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--ranks=", 0) == 0)
      R = std::atoi(a.c_str() + 8);
    else if (a == "--ldst-only")
      ldstOnly = true;
    else if (a == "--interleave")
      interleave = true;
    else if (a == "--chunk-const")
      chunkConst = true;
    else if (a.rfind("--only=", 0) == 0)
      only = a.substr(7);
    else if (a.rfind("--programs=", 0) == 0)
      pick = "," + a.substr(11) + ",";
    else if (a.rfind("--variants=", 0) == 0)
      variants = "," + a.substr(11) + ",";
    else if (a.rfind("--max-mib=", 0) == 0)
      maxBytes = (size_t)std::atoi(a.c_str() + 10) << 20;
    else if (a.rfind("--sizes=", 0) == 0) {
      for (size_t p = 8; p < a.size();) {
        size_t q = a.find(',', p);
        std::string item = a.substr(p, q == std::string::npos ? q : q - p);
        size_t bytes = std::strtoull(item.c_str(), nullptr, 10);
        char unit = item.empty() ? 0 : item.back();
        bytes <<= unit == 'K' ? 10 : unit == 'M' ? 20 : 0;
        if (bytes < 1024 || bytes % 1024) {
          std::fprintf(stderr, "--sizes: %s is not a multiple of 1 KiB\n",
                       item.c_str());
          return 1;
        }
        sizes.push_back(bytes);
        p = q == std::string::npos ? a.size() : q + 1;
      }
    } else if (a.rfind("--min-mib=", 0) == 0)
      minBytes = (size_t)std::atoi(a.c_str() + 10) << 20;
    else if (a.rfind("--devices=", 0) == 0) {
      gDevices = a.substr(10);
      for (size_t p = 0; p < gDevices.size();) {
        size_t q = gDevices.find(',', p);
        devices.push_back(std::atoi(gDevices.substr(p, q - p).c_str()));
        p = q == std::string::npos ? gDevices.size() : q + 1;
      }
    } else
      runs = std::atoi(a.c_str());
  }
  bool multi = devices.size() > 1;
  if (interleave && (!ldstOnly || multi)) {
    std::fprintf(stderr, "--interleave needs --ldst-only and one GPU\n");
    return 1;
  }
  if (chunkConst && !interleave) {
    std::fprintf(stderr, "--chunk-const needs --interleave\n");
    return 1;
  }
  if (devices.empty())
    gDevices = "0";
  for (char &c : gDevices)
    if (c == ',')
      c = '+';
  auto deviceOf = [&](int r) {
    if (devices.empty())
      return 0;
    int per = (R + (int)devices.size() - 1) / (int)devices.size();
    return devices[r / per];
  };
  ExecutorOptions cudaOptions;
  cudaOptions.cuda.devices = devices;
  if (sizes.empty()) {
    for (size_t s = 1024; s <= maxBytes; s *= 4)
      if (s >= minBytes)
        sizes.push_back(s);
  } else {
    maxBytes = *std::max_element(sizes.begin(), sizes.end());
  }

  // Baseline buffers: per rank an input and an output of R x the largest.
  std::vector<char *> in(R), out(R);
  for (int r = 0; r < R; ++r) {
    CK(cudaSetDevice(deviceOf(r)));
    CK(cudaMalloc(&in[r], maxBytes));
    CK(cudaMalloc(&out[r], maxBytes * R));
  }
  for (int a : devices)
    for (int b : devices)
      if (a != b) {
        CK(cudaSetDevice(a));
        cudaError_t peer = cudaDeviceEnablePeerAccess(b, 0);
        if (peer != cudaErrorPeerAccessAlreadyEnabled)
          CK(peer);
      }
  CK(cudaSetDevice(deviceOf(0)));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Copy *deviceCopies;
  CK(cudaMalloc(&deviceCopies, sizeof(Copy) * R * R));

  std::printf("collective,variant,bytes_per_rank,median_us,algbw_GBps,"
              "busbw_GBps,runs,wrong_bytes,checked_bytes,ranks,gpus,"
              "sm_free_us,paired_vs_fused\n");
  for (const char *collective : {"all_gather", "all_to_all"}) {
    if (!only.empty() && only != collective)
      continue;
    bool ag = std::string(collective) == "all_gather";
    std::vector<std::string> programs =
        ag ? std::vector<std::string>{"all_gather_direct", "all_gather_bcast",
                                      "all_gather_ring"}
           : std::vector<std::string>{"all_to_all_direct"};
    if (!pick.empty())
      programs.erase(std::remove_if(programs.begin(), programs.end(),
                                    [&](const std::string &p) {
                                      return pick.find("," + p + ",") ==
                                             std::string::npos;
                                    }),
                     programs.end());
    // sdma's executors, each with the plan its bytes are checked against.
    struct Entry {
      std::string name;
      std::unique_ptr<Executor> executor;
      Plan plan;
      bool probe; // copy engines over several GPUs: also time SM-free
      ExecutorOptions options;
    };
    std::vector<Entry> sdma;
    // --chunk-const: the programs rebuilt per size.
    struct ConstProgram {
      std::string name;
      LdstProgram program;
      Plan plan;
    };
    std::vector<ConstProgram> constPrograms;
    for (const std::string &name : programs) {
      std::string error;
      std::string base = dir + "/" + name + "-" + std::to_string(R);
      auto plan = Plan::load(base + ".json", error);
      // NAME-R.hip is the specialised kernel; NAME-R.table.hip, when there,
      // the table kernel of the same schedule.
      auto program =
          plan ? LdstProgram::load(base + ".hip", error) : std::nullopt;
      if (!program) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), error.c_str());
        return 1;
      }
      std::string variant = "sdma-ldst-" + name.substr(name.rfind('_') + 1);
      // A program on an executor with `options`, as variant + suffix.
      auto add = [&](const LdstProgram &ldst, const std::string &suffix,
                     const ExecutorOptions &options) {
        std::string key = suffix.empty() ? "default" : suffix.substr(1);
        if (!variants.empty() &&
            variants.find("," + key + ",") == std::string::npos)
          return true;
        CompiledSchedule compiled{*plan, ldst, std::nullopt};
        auto executor = createExecutor("cuda-ldst", compiled, options, error);
        if (!executor) {
          std::fprintf(stderr, "%s%s: %s\n", variant.c_str(), suffix.c_str(),
                       error.c_str());
          return false;
        }
        sdma.push_back(
            {variant + suffix, std::move(executor), *plan, false, options});
        return true;
      };
      // The table kernel also compiled with SDMA_STAGED_OPS (each phase's
      // ops resolved into shared memory first); on several GPUs, the
      // program launched on every GPU at once, one host thread each
      // (CudaOptions::parallelLaunch).
      ExecutorOptions staged = cudaOptions, pooled = cudaOptions;
      staged.cuda.stagedOps = true;
      pooled.cuda.parallelLaunch = true;
      // A specialised kernel that calls its segment routines (many
      // segments) also with them inlined into every phase (SDMA_SEG_INLINE).
      LdstProgram inlined = *program;
      inlined.source = "#define SDMA_SEG_INLINE SDMA_INLINE\n" + inlined.source;
      bool calls =
          program->specialised &&
          program->source.find("#define SDMA_SEG_INLINE SDMA_INLINE") ==
              std::string::npos;
      // The direct program compiled to fit four blocks per SM
      // (SDMA_MIN_BLOCKS: registers capped at 32), against the occupancy
      // gap to the fused kernel at large sizes.
      LdstProgram four = *program, three = *program;
      four.source = "#define SDMA_MIN_BLOCKS 4\n" + four.source;
      three.source = "#define SDMA_MIN_BLOCKS 3\n" + three.source;
      bool direct = name.find("direct") != std::string::npos;
      // The direct program on grids sized for 4 and 2 units of 16 bytes
      // per thread instead of the default 1 (fewer blocks; 4 was the
      // default until bench/results/grid-h200.csv).
      // The direct program without tiled segments (SDMA_SEG_TILE 0: each
      // op's units in one sweep, ops one after another).
      LdstProgram untiled = *program;
      untiled.source = "#define SDMA_SEG_TILE 0\n" + untiled.source;
      // The direct program with two and four units per thread per round
      // of a segment (SDMA_SEG_ROUND; default 1, 4 until
      // bench/results/round-h200.csv): more loads in flight per thread,
      // more registers, fewer resident blocks.
      LdstProgram r2 = *program, r4 = *program;
      r2.source = "#define SDMA_SEG_ROUND 2\n" + r2.source;
      r4.source = "#define SDMA_SEG_ROUND 4\n" + r4.source;
      // Without size classes (CudaOptions::sizeClasses: small chunks run a
      // build with the chunk compiled in): the generic build at every size.
      ExecutorOptions noClass = cudaOptions;
      noClass.cuda.sizeClasses = false;
      ExecutorOptions u4 = cudaOptions, u2 = cudaOptions;
      u4.cuda.unitsPerThread = 4;
      u2.cuda.unitsPerThread = 2;
      if (chunkConst &&
          (variants.empty() || variants.find(",cconst,") != std::string::npos))
        constPrograms.push_back({variant + "-cconst", *program, *plan});
      if (!add(*program, "", cudaOptions) ||
          (program->specialised && !add(*program, "-noclass", noClass)) ||
          (direct && !add(*program, "-u4", u4)) ||
          (direct && !add(untiled, "-untiled", cudaOptions)) ||
          (direct && !add(*program, "-u2", u2)) ||
          (direct && !add(r2, "-r2", cudaOptions)) ||
          (direct && !add(r4, "-r4", cudaOptions)) ||
          (direct && !add(four, "-4bpsm", cudaOptions)) ||
          (direct && !add(three, "-3bpsm", cudaOptions)) ||
          (calls && !add(inlined, "-inline", cudaOptions)) ||
          (devices.size() > 1 && name == programs.front() &&
           !add(*program, "-pool", pooled)))
        return 1;
      // NAME-R.prev.hip, when there: another compiler's program of the
      // same schedule (an A/B of a code-generation change in one run).
      if (FILE *f = std::fopen((base + ".prev.hip").c_str(), "r")) {
        std::fclose(f);
        auto prev = LdstProgram::load(base + ".prev.hip", error);
        if (!prev || !add(*prev, "-prev", cudaOptions)) {
          std::fprintf(stderr, "%s: %s\n", name.c_str(), error.c_str());
          return 1;
        }
      }
      if (FILE *f = std::fopen((base + ".table.hip").c_str(), "r")) {
        std::fclose(f);
        auto table = LdstProgram::load(base + ".table.hip", error);
        if (!table || !add(*table, "-table", cudaOptions) ||
            !add(*table, "-table-staged", staged)) {
          std::fprintf(stderr, "%s: %s\n", name.c_str(), error.c_str());
          return 1;
        }
      }
    }

    // The same schedule's DMA plans on CUDA streams (copy engines across
    // GPUs; on one GPU the copies run on the SMs): pcpy and b2b plans, b2b
    // with batched copies, and both replayed from a CUDA graph.
    std::string direct = ag ? "all_gather_direct" : "all_to_all_direct";
    struct CeVariant {
      const char *name, *suffix;
      CeOptions options;
    };
    // (Batched copies cannot be captured into a graph: the driver refuses.)
    // -k: each queue run's device-local copies as one copy-list kernel
    // (CeOptions::localCopyKernel; on one GPU that is every copy).
    CeOptions plain, batch, graph, plainK, graphK;
    batch.batch = true;
    graph.graph = true;
    plainK.localCopyKernel = graphK.localCopyKernel = true;
    graphK.graph = true;
    std::vector<CeVariant> ceVariants = {
        CeVariant{"pcpy", "", plain},
        CeVariant{"b2b", "-b2b", plain},
        CeVariant{"b2b-batch", "-b2b", batch},
        CeVariant{"pcpy-graph", "", graph},
        CeVariant{"b2b-graph", "-b2b", graph},
        CeVariant{"b2b-k", "-b2b", plainK},
        CeVariant{"pcpy-graph-k", "", graphK},
        CeVariant{"b2b-graph-k", "-b2b", graphK}};
    if (ldstOnly)
      ceVariants.clear();
    for (const CeVariant &v : ceVariants) {
      std::string error;
      std::string path =
          dir + "/" + direct + "-" + std::to_string(R) + v.suffix + ".json";
      auto plan = Plan::load(path, error);
      ExecutorOptions options = cudaOptions;
      options.ce = v.options;
      std::unique_ptr<Executor> executor;
      if (plan)
        executor = createExecutor(
            "cuda-ce", CompiledSchedule{*plan, std::nullopt, std::nullopt},
            options, error);
      if (!executor) {
        std::fprintf(stderr, "%s (%s): %s\n", path.c_str(), v.name,
                     error.c_str());
        return 1;
      }
      sdma.push_back({std::string("sdma-ce-") + v.name, std::move(executor),
                      *plan, multi, options});
    }

    for (size_t s : sizes) {
      // The baselines' transfers: all-gather moves s bytes per pair,
      // all-to-all s / R.
      size_t piece = ag ? s : s / R;
      std::vector<Copy> copies;
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j)
          copies.push_back({(const int4 *)(in[i] + (ag ? 0 : j * piece)),
                            (int4 *)(out[j] + i * piece), piece / 16});
      CK(cudaSetDevice(deviceOf(0)));
      CK(cudaMemcpy(deviceCopies, copies.data(), sizeof(Copy) * copies.size(),
                    cudaMemcpyHostToDevice));
      // Fill inputs with a pattern: byte = f(rank, index).
      std::vector<unsigned char> host(s);
      for (int r = 0; r < R; ++r) {
        for (size_t i = 0; i < s; ++i)
          host[i] = (unsigned char)(r * 131 + i * 7 + (i >> 9));
        CK(cudaMemcpy(in[r], host.data(), s, cudaMemcpyHostToDevice));
      }
      auto check = [&](uint64_t &wrong, uint64_t &checked) {
        std::vector<unsigned char> got(s * (ag ? R : 1));
        wrong = checked = 0;
        for (int j = 0; j < R; ++j) {
          size_t outBytes = ag ? s * R : s;
          CK(cudaMemcpy(got.data(), out[j], outBytes, cudaMemcpyDeviceToHost));
          for (int i = 0; i < R; ++i)
            for (size_t k = 0; k < piece; ++k) {
              size_t srcIndex = (ag ? 0 : j * piece) + k;
              unsigned char want =
                  (unsigned char)(i * 131 + srcIndex * 7 + (srcIndex >> 9));
              wrong += got[i * piece + k] != want;
              ++checked;
            }
          CK(cudaMemset(out[j], 0, outBytes));
        }
      };
      uint64_t wrong, checked;

      auto memcpys = [&] {
        for (const Copy &c : copies)
          CK(cudaMemcpyAsync(c.dst, c.src, piece, cudaMemcpyDeviceToDevice,
                             stream));
      };
      std::vector<double> t;
      if (!ldstOnly) {
        t = timeRuns(stream, runs, memcpys);
        CK(cudaStreamSynchronize(stream));
        check(wrong, checked);
        row(collective, "memcpy-per-transfer", s, t, wrong, checked);
      }

      int bpc = (int)std::max<size_t>(
          1, std::min<size_t>(32, piece / (512 * 16 * 4)));
      auto fused = [&] {
        fusedCopy<<<R * R * bpc, 512, 0, stream>>>(deviceCopies, R * R, bpc);
      };
      if (interleave) {
        std::vector<Timed> timed;
        for (Entry &entry : sdma)
          timed.push_back({entry.executor.get(), &entry.plan, entry.name});
        std::vector<std::unique_ptr<Executor>> rebuilt;
        for (const ConstProgram &c : constPrograms) {
          size_t chunk = s / c.plan.buffers[c.plan.collective->input].chunks;
          LdstProgram fixed = sizeClassProgram(c.program, chunk);
          std::string error;
          rebuilt.push_back(createExecutor(
              "cuda-ldst", CompiledSchedule{c.plan, fixed, std::nullopt},
              cudaOptions, error));
          if (!rebuilt.back()) {
            std::fprintf(stderr, "%s: %s\n", c.name.c_str(), error.c_str());
            return 1;
          }
          timed.push_back({rebuilt.back().get(), &c.plan, c.name});
        }
        interleaved(collective, s, stream, runs, fused, check, timed);
        continue;
      }
      if (!multi) {
        t = timeRuns(stream, runs, fused);
        CK(cudaStreamSynchronize(stream));
        check(wrong, checked);
        row(collective, "fused-kernel", s, t, wrong, checked);
      }

      // sdma's executors: fill, run once and check, time, then check every
      // output again (runAndCheck; the bytes are the collective's, not
      // compared with the simulator here).
      RunCheckOptions chain;
      chain.timedRuns = runs;
      chain.checkAfterTiming = true;
      chain.compareWithReference = false;
      for (Entry &entry : sdma) {
        const Plan &plan = entry.plan;
        size_t chunk = s / plan.buffers[plan.collective->input].chunks;
        std::string error;
        RunCheckResult result;
        if (!runAndCheck(*entry.executor, plan, chunk, chain, result, error)) {
          std::fprintf(stderr, "%s: %s\n", entry.name.c_str(), error.c_str());
          std::exit(1);
        }
        // Do the copy-engine copies need SMs? The plan's cross-GPU part
        // alone (same-GPU copies dropped: NVIDIA runs those on SMs), once,
        // while a kernel holds every SM of every GPU for 200 ms.
        double smFreeUs = -1;
        if (entry.probe) {
          Plan peers = plan;
          for (Stream &stream : peers.streams)
            stream.commands.erase(
                std::remove_if(stream.commands.begin(), stream.commands.end(),
                               [&](const Command &c) {
                                 return c.kind == Command::Kind::Copy &&
                                        deviceOf(c.slices[0].rank) ==
                                            deviceOf(c.slices[1].rank);
                               }),
                stream.commands.end());
          auto peerExecutor = createExecutor(
              "cuda-ce", CompiledSchedule{peers, std::nullopt, std::nullopt},
              entry.options, error);
          if (!peerExecutor || !peerExecutor->prepare(chunk, error) ||
              !peerExecutor->run(error)) {
            std::fprintf(stderr, "%s (peer part): %s\n", entry.name.c_str(),
                         error.c_str());
            std::exit(1);
          }
          std::vector<cudaStream_t> blockers;
          for (int d : devices) {
            CK(cudaSetDevice(d));
            cudaStream_t b;
            CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
            int sms = 0;
            CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
            occupy<<<sms * 2, 1024, 0, b>>>(200'000'000ull);
            blockers.push_back(b);
          }
          CK(cudaSetDevice(deviceOf(0)));
          std::vector<double> once;
          if (!peerExecutor->time(1, once, error)) {
            std::fprintf(stderr, "%s: %s\n", entry.name.c_str(), error.c_str());
            std::exit(1);
          }
          smFreeUs = once[0];
          for (cudaStream_t b : blockers) {
            CK(cudaStreamSynchronize(b));
            CK(cudaStreamDestroy(b));
          }
          CK(cudaSetDevice(deviceOf(0)));
        }
        row(collective, entry.name, s, result.microseconds, result.wrongBytes(),
            result.check.checkedBytes, smFreeUs);
      }
    }
  }
  return 0;
}
