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
// A PLAN of "-" runs a program that has no DMA plan (a schedule that
// reduces): the outputs are then checked against the collective alone.
//
//   sdma-ldst-cpu PROGRAM.hip PLAN.json|- [--chunks=16,24,4096]
//                 [--threads=32] [--blocks=1,2] [--runs=2]
//                 [--staged [--stage-cap=N]] [--size-classes]
//
// One line per (chunk, blocks); exit status 1 if any byte differs, a run
// reports a timed-out wait, or compiling fails.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/Plan.h"
#include "sdma/runtime/Simulator.h"

#include <cerrno>
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

/// A comma-separated list of integers in [lo, hi]; false if malformed.
bool parseList(const char *text, uint64_t lo, uint64_t hi,
               std::vector<uint64_t> &values) {
  values.clear();
  std::string item;
  for (const char *p = text;; ++p) {
    if (*p == ',' || *p == '\0') {
      char *end = nullptr;
      errno = 0;
      unsigned long long v = std::strtoull(item.c_str(), &end, 10);
      if (item.empty() || *end || errno || item[0] == '-' || v < lo || v > hi)
        return false;
      values.push_back(v);
      item.clear();
      if (!*p)
        return true;
    } else {
      item += *p;
    }
  }
}

bool parseInt(const char *text, int lo, int hi, int &value) {
  std::vector<uint64_t> one;
  if (!parseList(text, lo, hi, one) || one.size() != 1)
    return false;
  value = static_cast<int>(one[0]);
  return true;
}

const char *kUsage =
    "usage: sdma-ldst-cpu PROGRAM.hip PLAN.json [options]\n"
    "Runs a generated load/store kernel on the CPU (every GPU thread a host\n"
    "thread) and compares every byte with the reference simulator running\n"
    "the plan.\n"
    "  --chunks=N,...         chunk sizes in bytes (default 16,24,4096)\n"
    "  --blocks=N,...         blocks per rank, 1..64 each (default 1,2)\n"
    "  --threads=N            threads per block, 1..512 (default 32)\n"
    "  --runs=N               runs per (chunk, blocks) (default 2)\n"
    "  --staged               compile with SDMA_STAGED_OPS (default: off)\n"
    "  --stage-cap=N          with --staged: ops per window (default: the\n"
    "                         kernel's, 64)\n"
    "  --size-classes         each chunk size with its own build, the chunk\n"
    "                         compiled in (as the GPU executors run small\n"
    "                         chunks; specialised programs only)\n";

} // namespace

int main(int argc, char **argv) {
  std::vector<const char *> files;
  std::vector<uint64_t> chunks{16, 24, 4096}, blockCounts{1, 2};
  int threads = 32, runs = 2, stageCap = 0;
  bool staged = false, sizeClasses = false;
  MemoryBudget budget;
  if (int status =
          tool::handleCommon(argc, argv, "sdma-ldst-cpu", kUsage, budget);
      status >= 0)
    return status;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    int status = 0;
    bool ok = true;
    if (tool::memoryBudgetOption("sdma-ldst-cpu", a, budget, status)) {
      if (status)
        return status;
    } else if (a.rfind("--chunks=", 0) == 0)
      ok = parseList(argv[i] + 9, 1, uint64_t(1) << 30, chunks);
    else if (a.rfind("--blocks=", 0) == 0)
      ok = parseList(argv[i] + 9, 1, 64, blockCounts);
    else if (a.rfind("--threads=", 0) == 0)
      ok = parseInt(argv[i] + 10, 1, 512, threads);
    else if (a == "--staged")
      staged = true;
    else if (a == "--size-classes")
      sizeClasses = true;
    else if (a.rfind("--stage-cap=", 0) == 0)
      ok = parseInt(argv[i] + 12, 1, 1 << 20, stageCap);
    else if (a.rfind("--runs=", 0) == 0)
      ok = parseInt(argv[i] + 7, 1, 1 << 20, runs);
    else if (a.size() > 1 && a[0] == '-')
      return tool::unknownOption("sdma-ldst-cpu", a);
    else
      files.push_back(argv[i]);
    if (!ok) {
      std::fprintf(stderr, "sdma-ldst-cpu: bad value in '%.64s'\n", argv[i]);
      return tool::kUsageError;
    }
  }
  if (files.size() != 2 || threads < 1 || threads > 512 || runs < 1) {
    std::fprintf(stderr,
                 "usage: sdma-ldst-cpu PROGRAM.hip PLAN.json [--chunks=N,..] "
                 "[--threads=1..512] [--blocks=N,..] [--runs=N] "
                 "[--staged [--stage-cap=N]] (sdma-ldst-cpu --help for "
                 "more)\n");
    return tool::kUsageError;
  }
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::load(files[0], error);
  // PLAN "-": a program without a DMA plan (a schedule that reduces): its
  // outputs are checked against the collective only.
  std::optional<Plan> plan = !program ? std::nullopt
                             : std::string(files[1]) == "-"
                                 ? std::optional<Plan>(program->layout())
                                 : Plan::load(files[1], error);
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

  if (sizeClasses && !program->specialised) {
    std::fprintf(stderr,
                 "sdma-ldst-cpu: %s: --size-classes needs a specialised "
                 "program; this is a table kernel\n",
                 files[0]);
    return 1;
  }
  if (staged && program->specialised) {
    std::fprintf(stderr,
                 "sdma-ldst-cpu: %s: --staged changes the table kernel only; "
                 "this program is specialised (sdma-translate "
                 "--sdma-hip-table-kernel writes the table kernel)\n",
                 files[0]);
    return 1;
  }
  // One compile; the runs go through every size as a GPU executor would
  // (flags carry over: each run is the next epoch). With --size-classes,
  // one compile per chunk size.
  LdstCpuOptions options;
  options.threads = threads;
  options.stagedOps = staged;
  options.stageCap = stageCap;
  options.budget = budget;
  std::unique_ptr<LdstCpuExecutor> executor;
  auto build = [&](const LdstProgram &source) {
    executor = LdstCpuExecutor::create(source, options, error);
    if (!executor)
      std::fprintf(stderr, "sdma-ldst-cpu: %s: %s\n", files[0], error.c_str());
    return executor != nullptr;
  };
  if (!sizeClasses && !build(*program))
    return 1;
  int ranks = plan->ranks;
  bool allOk = true;
  for (uint64_t chunk : chunks) {
    if (sizeClasses && !build(sizeClassProgram(*program, chunk)))
      return 1;
    for (uint64_t blocks : blockCounts) {
      // Both memories count against the budget; the executor's copies too.
      std::optional<HostMemory> expected =
          HostMemory::create(*plan, chunk, error, budget);
      MemoryBudget left = budget;
      left.bytes -= expected ? expected->totalBytes() : 0;
      std::optional<HostMemory> actual =
          expected ? HostMemory::create(*plan, chunk, error, left)
                   : std::nullopt;
      if (!actual) {
        std::printf("FAIL %s chunk %llu: %s\n", plan->schedule.c_str(),
                    (unsigned long long)chunk, error.c_str());
        allOk = false;
        continue;
      }
      HostMemory &reference = *expected, &memory = *actual;
      executor->setBudget(left);
      fillInputs(*plan, reference);
      if (plan->hasQueues && !simulate(*plan, reference, {}, error)) {
        std::printf("FAIL %s chunk %llu: simulator: %s\n",
                    plan->schedule.c_str(), (unsigned long long)chunk,
                    error.c_str());
        allOk = false;
        continue;
      }
      uint64_t total = 0;
      std::string failure;
      for (int i = 0; i < runs && failure.empty(); ++i) {
        // Every run starts from fresh inputs.
        fillInputs(*plan, memory);
        if (!executor->run(memory, error, static_cast<int>(blocks))) {
          failure = "run " + std::to_string(i) + ": " + error;
          break;
        }
        uint64_t differ = plan->hasQueues
                              ? differingBytes(*plan, memory, reference, &total)
                              : 0;
        CheckResult outputs =
            plan->collective ? checkOutputs(*plan, memory) : CheckResult();
        uint64_t wrong = outputs.wrongBytes;
        if (!plan->hasQueues)
          total = outputs.checkedBytes;
        if (differ || wrong)
          failure =
              "run " + std::to_string(i) + ": " + std::to_string(differ) +
              " bytes differ from the simulator, " + std::to_string(wrong) +
              " output bytes wrong" +
              (outputs.firstWrong.empty() ? "" : ": " + outputs.firstWrong);
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
  }
  return allOk ? 0 : 1;
}
