//===- ExecutorTest.cpp - the backend table, host executors, runAndCheck --===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/RunCheck.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <set>

using namespace sdma::rt;

static std::optional<CompiledSchedule> loadPlan(const char *name) {
  std::string error;
  std::optional<Plan> plan =
      Plan::load(std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/" + name, error);
  EXPECT_TRUE(plan) << error;
  if (!plan)
    return std::nullopt;
  return CompiledSchedule{std::move(*plan), std::nullopt, std::nullopt};
}

TEST(Backends, OneTableWithUniqueNames) {
  std::set<std::string_view> names;
  for (const BackendInfo &backend : backends()) {
    EXPECT_TRUE(names.insert(backend.name).second) << backend.name;
    EXPECT_FALSE(backend.summary.empty()) << backend.name;
    EXPECT_EQ(findBackend(backend.name), &backend);
  }
  for (const char *name : {"sim", "sdma-sim", "sdma-packets", "ldst-cpu",
                           "cuda-ldst", "cuda-ce", "hip-ldst", "hip-dma"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_EQ(findBackend("cuda"), nullptr);
  EXPECT_NE(backendNames().find("sdma-packets"), std::string::npos);
  EXPECT_TRUE(backendBuilt("sim"));
  EXPECT_TRUE(backendBuilt("cuda-ce")); // dlopen'ed: always built
}

TEST(Backends, CreateSaysWhatIsMissing) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  std::string error;
  EXPECT_FALSE(createExecutor("nope", *ring, {}, error));
  EXPECT_NE(error.find("unknown backend 'nope'"), std::string::npos) << error;
  EXPECT_FALSE(createExecutor("ldst-cpu", *ring, {}, error));
  EXPECT_NE(error.find("needs the load/store kernel"), std::string::npos)
      << error;
  EXPECT_FALSE(createExecutor("sdma-packets", *ring, {}, error));
  EXPECT_NE(error.find("needs the AMD SDMA packet plan"), std::string::npos)
      << error;
  EXPECT_FALSE(createExecutor("sdma-sim", *ring, {}, error));
  EXPECT_NE(error.find("no DMA timing profile"), std::string::npos) << error;
}

#ifdef SDMA_HAVE_HIP
TEST(Backends, HipBackendsAreBuilt) {
  EXPECT_TRUE(backendBuilt("hip-ldst"));
  EXPECT_TRUE(backendBuilt("hip-dma"));
}
#else
TEST(Backends, HipBackendsSayTheyAreNotBuilt) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  EXPECT_FALSE(backendBuilt("hip-dma"));
  std::string error;
  EXPECT_FALSE(createExecutor("hip-dma", *ring, {}, error));
  EXPECT_EQ(error, "this build has no HIP executors (HIP headers were not "
                   "found at configure time)");
}
#endif

TEST(Backends, GpuBackendsSayNoGpu) {
  setenv("SDMA_FORCE_NO_GPU", "1", 1);
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  std::string error;
  EXPECT_FALSE(createExecutor("cuda-ce", *ring, {}, error));
  EXPECT_EQ(error.rfind("no GPU: ", 0), 0u) << error;
  unsetenv("SDMA_FORCE_NO_GPU");
}

TEST(RunCheck, SimulatorRunsCheckedAndTimed) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  std::string error;
  std::unique_ptr<Executor> sim = createExecutor("sim", *ring, {}, error);
  ASSERT_TRUE(sim) << error;
  EXPECT_EQ(sim->name(), "sim");
  RunCheckOptions options;
  options.checkedRuns = 3;
  options.timedRuns = 4;
  options.checkAfterTiming = true;
  RunCheckResult result;
  ASSERT_TRUE(runAndCheck(*sim, ring->plan, 256, options, result, error))
      << error;
  EXPECT_EQ(result.wrongBytes(), 0u) << result.check.firstWrong;
  EXPECT_EQ(result.differing, 0u);
  // Every byte of every buffer of every rank: 4 ranks x 5 chunks x 256.
  EXPECT_EQ(result.compared, 4u * 5 * 256);
  EXPECT_EQ(result.check.checkedBytes, 4u * 4 * 256);
  EXPECT_EQ(result.microseconds.size(), 4u);
}

TEST(RunCheck, UseBeforePrepareAndWrongSizesAreErrors) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  std::string error;
  std::unique_ptr<Executor> sim = createExecutor("sim", *ring, {}, error);
  ASSERT_TRUE(sim);
  HostMemory memory(ring->plan, 64);
  EXPECT_FALSE(sim->upload(memory, error));
  EXPECT_NE(error.find("before prepare"), std::string::npos) << error;
  EXPECT_FALSE(sim->run(error));
  ASSERT_TRUE(sim->prepare(128, error));
  EXPECT_FALSE(sim->download(memory, error));
  EXPECT_NE(error.find("64-byte chunks, prepared for 128"), std::string::npos)
      << error;
}

namespace {
/// Runs the simulator but flips one output byte of rank 1 on download,
/// from download number `from` on: an executor that computes wrong bytes.
class CorruptingExecutor : public Executor {
public:
  CorruptingExecutor(std::unique_ptr<Executor> inner, const Plan &plan,
                     int from)
      : inner_(std::move(inner)), output_(plan.collective->output),
        from_(from) {}
  std::string name() const override { return "corrupting"; }
  std::string description() const override { return ""; }
  bool prepare(size_t chunk, std::string &error) override {
    return inner_->prepare(chunk, error);
  }
  bool upload(const HostMemory &memory, std::string &error) override {
    return inner_->upload(memory, error);
  }
  bool download(HostMemory &memory, std::string &error) override {
    if (!inner_->download(memory, error))
      return false;
    if (++downloads_ >= from_)
      memory.buffer(1, output_)[3] ^= 0x40;
    return true;
  }
  bool launch(std::string &error) override { return inner_->launch(error); }
  bool wait(std::string &error) override { return inner_->wait(error); }
  bool time(int runs, std::vector<double> &us, std::string &error) override {
    return inner_->time(runs, us, error);
  }

private:
  std::unique_ptr<Executor> inner_;
  int output_, from_, downloads_ = 0;
};
} // namespace

TEST(RunCheck, WrongBytesAreFoundAndNamed) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  std::string error;
  CorruptingExecutor bad(createExecutor("sim", *ring, {}, error), ring->plan,
                         1);
  RunCheckResult result;
  ASSERT_TRUE(runAndCheck(bad, ring->plan, 64, {}, result, error)) << error;
  EXPECT_EQ(result.differing, 1u);
  EXPECT_EQ(result.check.wrongBytes, 2u); // the output check + the reference
  EXPECT_NE(result.check.firstWrong.find("1 bytes differ from the reference"),
            std::string::npos)
      << result.check.firstWrong;
  // Without the reference, the collective's own check still sees it.
  RunCheckOptions noReference;
  noReference.compareWithReference = false;
  CorruptingExecutor bad2(createExecutor("sim", *ring, {}, error), ring->plan,
                          1);
  ASSERT_TRUE(runAndCheck(bad2, ring->plan, 64, noReference, result, error));
  EXPECT_EQ(result.check.wrongBytes, 1u);
  EXPECT_EQ(result.compared, 0u);
}

TEST(RunCheck, BytesWrongOnlyAfterTimingAreFound) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  std::string error;
  CorruptingExecutor late(createExecutor("sim", *ring, {}, error), ring->plan,
                          2);
  RunCheckOptions options;
  options.checkAfterTiming = true;
  RunCheckResult result;
  ASSERT_TRUE(runAndCheck(late, ring->plan, 64, options, result, error));
  EXPECT_EQ(result.check.wrongBytes, 0u);
  EXPECT_EQ(result.again.wrongBytes, 1u);
  EXPECT_EQ(result.wrongBytes(), 1u);
}

TEST(RunCheck, RacyPlanDiffersFromTheReferenceInSomeOrder) {
  std::optional<CompiledSchedule> racy = loadPlan("racy_ring.json");
  ASSERT_TRUE(racy);
  std::string error;
  uint64_t worst = 0;
  for (uint64_t seed = 1; seed <= 200 && !worst; ++seed) {
    ExecutorOptions options;
    options.simulator.adversarial = true;
    options.simulator.seed = seed;
    std::unique_ptr<Executor> sim =
        createExecutor("sim", *racy, options, error);
    ASSERT_TRUE(sim);
    RunCheckOptions run;
    run.timedRuns = 0;
    RunCheckResult result;
    ASSERT_TRUE(runAndCheck(*sim, racy->plan, 64, run, result, error)) << error;
    worst = std::max(worst, result.differing);
  }
  EXPECT_GT(worst, 0u);
}

TEST(RunCheck, ModelTimedBackendGivesOnePrediction) {
  std::optional<CompiledSchedule> ring = loadPlan("ring.json");
  ASSERT_TRUE(ring);
  ExecutorOptions options;
  options.dmaProfile = SDMA_RUNTIME_PROFILE_DIR "/mi300x-sdma.json";
  std::string error;
  std::unique_ptr<Executor> model =
      createExecutor("sdma-sim", *ring, options, error);
  ASSERT_TRUE(model) << error;
  RunCheckOptions run;
  run.timedRuns = 5;
  RunCheckResult small, large;
  ASSERT_TRUE(runAndCheck(*model, ring->plan, 1024, run, small, error));
  ASSERT_TRUE(runAndCheck(*model, ring->plan, 1 << 20, run, large, error));
  ASSERT_EQ(small.microseconds.size(), 1u);
  EXPECT_GT(large.microseconds[0], small.microseconds[0]);
  EXPECT_EQ(small.wrongBytes(), 0u);
}

TEST(RunCheck, BusFactorFollowsNcclTests) {
  EXPECT_DOUBLE_EQ(busFactor("all_gather", 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor("broadcast", 4), 1.0);
  EXPECT_DOUBLE_EQ(busFactor("all_to_all", 1), 1.0);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}
