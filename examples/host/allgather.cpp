//===- allgather.cpp - a host program that runs a compiled all-gather -----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Links only the sdma runtime (no MLIR). Compile a schedule first:
//
//   sdma-run schedules/all_gather_ring.mlir --ranks=8 -b 1K -e 1K \
//     --emit-plan=ring.json --emit-hip=ring.hip
//   sdma-example-allgather ring.json ring.hip [bytes-per-rank]
//
// On a machine with an NVIDIA GPU it runs the load/store kernel with all
// ranks on GPU 0; elsewhere it runs the plan on the CPU simulator. Either
// way it checks every output byte.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/RunCheck.h"

#include <cstdio>
#include <cstdlib>

using namespace sdma::rt;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLAN.json PROGRAM.hip [bytes-per-rank]\n",
                 argv[0]);
    return 1;
  }
  std::string error;
  // 1. Load what the compiler produced.
  std::optional<Plan> plan = Plan::load(argv[1], error);
  std::optional<LdstProgram> program =
      plan ? LdstProgram::load(argv[2], error) : std::nullopt;
  if (!plan || !program) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  if (!plan->collective || plan->collective->kind != "all_gather") {
    std::fprintf(stderr, "error: %s is not an all-gather\n", argv[1]);
    return 1;
  }
  CompiledSchedule compiled{*plan, *program, std::nullopt};
  // 2. Choose the chunk size: this all-gather moves one input chunk per rank.
  size_t bytesPerRank = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4096;
  size_t chunk = bytesPerRank / plan->buffers[plan->collective->input].chunks;
  if (chunk == 0) {
    std::fprintf(stderr, "error: bytes-per-rank too small\n");
    return 1;
  }
  // 3. An executor: the load/store kernel on the GPU where there is one,
  //    else the CPU simulator.
  ExecutorOptions options;
  const char *where = "GPU";
  std::unique_ptr<Executor> executor =
      createExecutor("cuda-ldst", compiled, options, error);
  if (!executor) {
    std::printf("%s; using the CPU simulator\n", error.c_str());
    where = "CPU simulator";
    executor = createExecutor("sim", compiled, options, error);
    if (!executor) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 1;
    }
  }
  // 4. Fill every rank's inputs with a pattern, run once, check every output
  //    byte (and every byte against the reference simulator).
  RunCheckOptions run;
  run.timedRuns = 0;
  RunCheckResult result;
  if (!runAndCheck(*executor, *plan, chunk, run, result, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  const CheckResult &check = result.check;
  std::printf("all-gather %s: %d ranks x %zu bytes on the %s: %llu of %llu "
              "output bytes wrong%s%s\n",
              plan->schedule.c_str(), plan->ranks, bytesPerRank, where,
              (unsigned long long)check.wrongBytes,
              (unsigned long long)check.checkedBytes,
              check.wrongBytes ? "; first: " : "", check.firstWrong.c_str());
  return check.wrongBytes ? 2 : 0;
}
