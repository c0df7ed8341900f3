//===- LdstCpuExecutor.h - a load/store kernel on the CPU -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Runs a generated load/store kernel (--sdma-to-hip) on the CPU: every GPU
// thread a host thread, a block's threads meeting at a pthread barrier,
// the flags and rank barriers through __atomic builtins. The kernel source
// is compiled with a CPU prelude by the host C++ compiler (options.compiler,
// else $SDMA_HOST_CXX, else c++) into a shared object and loaded (the
// runtime's host kernel layer, lib/host/HostLdstKernel.h). What it
// is for: running the emitted kernel code itself where there is no GPU (CI,
// a laptop) — its phases, flags, epochs and barriers — against the
// reference simulator. Its times say nothing about a GPU's.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LDSTCPUEXECUTOR_H
#define SDMA_RUNTIME_LDSTCPUEXECUTOR_H

#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LdstProgram.h"

#include <memory>
#include <string>
#include <vector>

namespace sdma::rt {

class HostLdstKernel;

struct LdstCpuOptions {
  /// Threads per block and blocks per rank (the GPU executors use 512 and
  /// a size-dependent count; any count is correct).
  int threads = 32;
  int blocks = 1;
  /// A wait (or rank barrier) that takes longer fails the run.
  uint64_t timeoutNs = 2'000'000'000ull;
  /// Compile the kernel with SDMA_STAGED_OPS (CudaOptions::stagedOps).
  bool stagedOps = false;
  /// With stagedOps: ops resolved per window (0: the kernel's default, 64);
  /// small values exercise the windowing.
  int stageCap = 0;
  /// The host C++ compiler ("" : $SDMA_HOST_CXX, else c++).
  std::string compiler;
  /// Where compiled kernels are kept and found again ("": compile every
  /// time, keep nothing).
  std::string cacheDirectory;
  /// The flags (at create) and a run's guarded buffer copies plus the
  /// caller's memory (at run) must fit this budget.
  MemoryBudget budget;
};

class LdstCpuExecutor {
public:
  /// Compiles the kernel for the host and loads it; nullptr with `error`
  /// (the compiler's output included) on failure.
  static std::unique_ptr<LdstCpuExecutor> create(const LdstProgram &program,
                                                 const LdstCpuOptions &options,
                                                 std::string &error);
  ~LdstCpuExecutor();
  LdstCpuExecutor(const LdstCpuExecutor &) = delete;
  LdstCpuExecutor &operator=(const LdstCpuExecutor &) = delete;

  /// One run over `memory`'s buffers (every rank's, at its chunk size),
  /// with `blocks` blocks per rank (0: the options'). Flags persist between
  /// runs (each run is the next epoch), as on a GPU. A timed-out wait is
  /// reported with the rank, flag slot and values.
  bool run(HostMemory &memory, std::string &error, int blocks = 0);
  /// The budget later runs check (LdstCpuOptions::budget).
  void setBudget(const MemoryBudget &budget) { options_.budget = budget; }

  /// What create() and run() check before compiling or touching memory,
  /// with no compiler needed: thread and block counts, the host thread
  /// limit, `memory`'s layout against the program's, and the budget (flags,
  /// guarded copies, `memory`). `memory` may be null (create's checks
  /// only). False with `error` naming what is wrong.
  static bool checkRun(const LdstProgram &program,
                       const LdstCpuOptions &options, const HostMemory *memory,
                       int blocks, std::string &error);

private:
  LdstCpuExecutor(const LdstProgram &program, const LdstCpuOptions &options);

  LdstProgram program_;
  LdstCpuOptions options_;
  std::unique_ptr<HostLdstKernel> kernel_;
  std::vector<std::vector<unsigned long long>> flags_; // [rank][slot]
  std::vector<std::vector<unsigned int>> sync_;        // [rank][2]
  unsigned long long epoch_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LDSTCPUEXECUTOR_H
