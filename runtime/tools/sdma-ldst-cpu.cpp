//===- sdma-ldst-cpu.cpp - run a load/store kernel on the CPU -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Runs a generated load/store kernel (NAME.hip from --sdma-to-hip) on the
// CPU, every GPU thread a host thread, and compares every byte of every
// buffer with the reference simulator running the schedule's plan
// (NAME.json), and the outputs with the collective. Where there is no GPU,
// this is how the emitted kernel code itself is tested: its phases (both
// the small-phase and the op-by-op paths, aligned and byte-wise), flags,
// epochs and rank barriers.
//
// The kernel source is compiled with a CPU prelude (the SDMA_* macros on
// host threads, std::barrier, __atomic builtins) by the host C++ compiler
// ($SDMA_HOST_CXX, else c++) into a shared object, then loaded.
//
//   sdma-ldst-cpu PROGRAM.hip PLAN.json [--chunks=16,24,4096]
//                 [--threads=32] [--blocks=1,2] [--runs=2]
//
// One line per (chunk, blocks); exit status 1 if any byte differs, a run
// reports a timed-out wait, or compiling fails.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/Plan.h"
#include "sdma/runtime/Simulator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace sdma::rt;

namespace {

// The SDMA_* macros on host threads. One host thread per GPU thread; a
// block's threads meet at a std::barrier.
const char *kCpuPrelude = R"SDMA(
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>
static unsigned sdma_ntid, sdma_nbid;
static thread_local unsigned sdma_tid, sdma_bid, sdma_bid_y;
static thread_local std::barrier<> *sdma_barrier;
#define SDMA_MAX_THREADS 512
#define SDMA_GRID_CONSTANT
#define __global__
#define __device__
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define SDMA_TID sdma_tid
#define SDMA_NTID sdma_ntid
#define SDMA_BID sdma_bid
#define SDMA_NBID sdma_nbid
#define SDMA_BID_Y sdma_bid_y
#define SDMA_SYNC() sdma_barrier->arrive_and_wait()
#define SDMA_FENCE() std::atomic_thread_fence(std::memory_order_seq_cst)
#define SDMA_FENCE_SYSTEM() std::atomic_thread_fence(std::memory_order_seq_cst)
#define SDMA_ATOMIC_ADD_U32(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define SDMA_ATOMIC_ADD_SYSTEM_U64(p, v)                                       \
  __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
static inline unsigned long long sdma_cas(unsigned long long *p,
                                          unsigned long long c,
                                          unsigned long long v) {
  __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
  return c;
}
#define SDMA_ATOMIC_CAS_U64(p, c, v) sdma_cas((p), (c), (v))
static inline unsigned long long SDMA_NOW_NS() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
)SDMA";

// Builds the kernel's table and runs every thread of every block of every
// rank at once (ranks wait on each other).
const char *kCpuEntry = R"SDMA(
extern "C" void sdma_cpu_run(char **bufs, unsigned long long **flags,
                             unsigned int **sync, unsigned long long *error,
                             unsigned long long timeoutNs,
                             unsigned long long chunk, unsigned long long epoch,
                             int blocks, int threads) {
  SdmaTable table;
  for (int i = 0; i < SDMA_RANKS * SDMA_BUFFERS; ++i)
    table.buf[i] = bufs[i];
  for (int r = 0; r < SDMA_RANKS; ++r) {
    table.flags[r] = flags[r];
    table.sync[r] = sync[r];
  }
  table.error = error;
  table.timeoutNs = timeoutNs;
  sdma_ntid = threads;
  sdma_nbid = blocks;
  std::vector<std::unique_ptr<std::barrier<>>> barriers;
  for (int i = 0; i < SDMA_RANKS * blocks; ++i)
    barriers.push_back(std::make_unique<std::barrier<>>(threads));
  std::vector<std::thread> pool;
  for (int r = 0; r < SDMA_RANKS; ++r)
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, r, b, t] {
          sdma_tid = t;
          sdma_bid = b;
          sdma_bid_y = r;
          sdma_barrier = barriers[r * blocks + b].get();
          sdma_ldst(table, chunk, epoch, 0);
        });
  for (std::thread &thread : pool)
    thread.join();
}
)SDMA";

using RunFn = void (*)(char **, unsigned long long **, unsigned int **,
                       unsigned long long *, unsigned long long,
                       unsigned long long, unsigned long long, int, int);

std::vector<uint64_t> parseList(const char *text) {
  std::vector<uint64_t> values;
  for (const char *p = text; *p;) {
    values.push_back(std::strtoull(p, nullptr, 10));
    p = std::strchr(p, ',');
    if (!p)
      break;
    ++p;
  }
  return values;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<const char *> files;
  std::vector<uint64_t> chunks{16, 24, 4096}, blockCounts{1, 2};
  int threads = 32, runs = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--chunks=", 0) == 0)
      chunks = parseList(argv[i] + 9);
    else if (a.rfind("--blocks=", 0) == 0)
      blockCounts = parseList(argv[i] + 9);
    else if (a.rfind("--threads=", 0) == 0)
      threads = std::atoi(argv[i] + 10);
    else if (a.rfind("--runs=", 0) == 0)
      runs = std::atoi(argv[i] + 7);
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "sdma-ldst-cpu: unknown option '%s'\n", argv[i]);
      return 2;
    } else
      files.push_back(argv[i]);
  }
  if (files.size() != 2 || threads < 1 || threads > 512 || runs < 1) {
    std::fprintf(stderr,
                 "usage: sdma-ldst-cpu PROGRAM.hip PLAN.json [--chunks=N,..] "
                 "[--threads=1..512] [--blocks=N,..] [--runs=N]\n");
    return 2;
  }
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::load(files[0], error);
  std::optional<Plan> plan =
      program ? Plan::load(files[1], error) : std::nullopt;
  if (!plan) {
    std::fprintf(stderr, "sdma-ldst-cpu: %s\n", error.c_str());
    return 1;
  }
  if (plan->ranks != program->ranks ||
      plan->buffers.size() != program->buffers.size()) {
    std::fprintf(stderr,
                 "sdma-ldst-cpu: %s and %s are not the same schedule (ranks "
                 "or buffers differ)\n",
                 files[0], files[1]);
    return 1;
  }

  // Compile the kernel for the host.
  char dir[] = "/tmp/sdma-ldst-cpu-XXXXXX";
  if (!mkdtemp(dir)) {
    std::perror("sdma-ldst-cpu: mkdtemp");
    return 1;
  }
  std::string source = std::string(dir) + "/kernel.cpp";
  std::string object = std::string(dir) + "/kernel.so";
  std::string log = std::string(dir) + "/compile.log";
  {
    std::ofstream out(source);
    out << kCpuPrelude << program->source << kCpuEntry;
  }
  const char *cxx = std::getenv("SDMA_HOST_CXX");
  std::string command = std::string(cxx && *cxx ? cxx : "c++") +
                        " -std=c++20 -O1 -shared -fPIC -pthread "
                        "-Wno-unknown-pragmas -o " +
                        object + " " + source + " > " + log + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::fprintf(stderr, "sdma-ldst-cpu: compiling %s for the host failed:\n%s",
                 files[0], text.c_str());
    return 1;
  }
  void *handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  RunFn run =
      handle ? reinterpret_cast<RunFn>(dlsym(handle, "sdma_cpu_run")) : nullptr;
  std::remove(source.c_str());
  std::remove(object.c_str());
  std::remove(log.c_str());
  rmdir(dir);
  if (!run) {
    std::fprintf(stderr, "sdma-ldst-cpu: loading the host kernel: %s\n",
                 dlerror());
    return 1;
  }

  int ranks = plan->ranks;
  int numBuffers = static_cast<int>(plan->buffers.size());
  bool allOk = true;
  for (uint64_t chunk : chunks)
    for (uint64_t blocks : blockCounts) {
      HostMemory reference(*plan, chunk), memory(*plan, chunk);
      fillInputs(*plan, reference);
      if (!simulate(*plan, reference, {}, error)) {
        std::printf("FAIL %s chunk %llu: simulator: %s\n",
                    plan->schedule.c_str(), (unsigned long long)chunk,
                    error.c_str());
        allOk = false;
        continue;
      }
      std::vector<std::vector<unsigned long long>> flags(
          ranks, std::vector<unsigned long long>(program->flagSlots, 0));
      std::vector<std::vector<unsigned int>> sync(
          ranks, std::vector<unsigned int>(2, 0));
      std::vector<char *> bufs;
      std::vector<unsigned long long *> flagPtrs;
      std::vector<unsigned int *> syncPtrs;
      for (int r = 0; r < ranks; ++r) {
        for (int b = 0; b < numBuffers; ++b)
          bufs.push_back(reinterpret_cast<char *>(memory.buffer(r, b)));
        flagPtrs.push_back(flags[r].data());
        syncPtrs.push_back(sync[r].data());
      }
      uint64_t differ = 0, wrong = 0, total = 0;
      std::string failure;
      for (int epoch = 0; epoch < runs && failure.empty(); ++epoch) {
        // Every run starts from fresh inputs; flags carry over (epochs).
        fillInputs(*plan, memory);
        unsigned long long record[5] = {0, 0, 0, 0, 0};
        run(bufs.data(), flagPtrs.data(), syncPtrs.data(), record,
            2'000'000'000ull, chunk, epoch, static_cast<int>(blocks), threads);
        if (record[0]) {
          failure = "run " + std::to_string(epoch) + ": rank " +
                    std::to_string(record[1]) +
                    (static_cast<int64_t>(record[2]) < 0
                         ? " did not reach a rank barrier"
                         : " waited too long for flag slot " +
                               std::to_string(record[2]) + " to reach " +
                               std::to_string(record[3]) + " (it stayed at " +
                               std::to_string(record[4]) + ")");
          break;
        }
        differ = total = 0;
        for (int r = 0; r < ranks; ++r)
          for (int b = 0; b < numBuffers; ++b) {
            const uint8_t *x = memory.buffer(r, b);
            const uint8_t *y = reference.buffer(r, b);
            size_t n = memory.bufferBytes(r, b);
            total += n;
            for (size_t i = 0; i < n; ++i)
              differ += x[i] != y[i];
          }
        wrong = plan->collective ? checkOutputs(*plan, memory).wrongBytes : 0;
        if (differ || wrong)
          failure = "run " + std::to_string(epoch) + ": " +
                    std::to_string(differ) + " bytes differ from the " +
                    "simulator, " + std::to_string(wrong) + " output bytes " +
                    "wrong";
      }
      bool ok = failure.empty();
      allOk &= ok;
      std::printf("%s %-26s ranks %d chunk %6llu blocks %llu threads %d "
                  "bytes %llu%s%s\n",
                  ok ? "ok  " : "FAIL", plan->schedule.c_str(), ranks,
                  (unsigned long long)chunk, (unsigned long long)blocks,
                  threads, (unsigned long long)total, ok ? "" : ": ",
                  failure.c_str());
    }
  return allOk ? 0 : 1;
}
