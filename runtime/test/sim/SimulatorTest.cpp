//===- SimulatorTest.cpp - the CPU reference simulator --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Simulator.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace sdma::rt;

static Plan loadPlan(const std::string &name) {
  std::string error;
  std::optional<Plan> plan =
      Plan::load(std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/" + name, error);
  if (!plan)
    ADD_FAILURE() << error;
  return plan ? *plan : Plan();
}

static CheckResult run(const Plan &plan, size_t chunkBytes,
                       SimulatorOptions options) {
  HostMemory memory(plan, chunkBytes);
  fillInputs(plan, memory);
  std::string error;
  EXPECT_TRUE(simulate(plan, memory, options, error)) << error;
  return checkOutputs(plan, memory);
}

TEST(Simulator, RingAllGatherIsCorrectInEveryOrder) {
  Plan plan = loadPlan("ring.json");
  for (size_t chunk : {1, 7, 64, 4096}) {
    CheckResult check = run(plan, chunk, {});
    EXPECT_EQ(check.wrongBytes, 0u) << check.firstWrong;
    EXPECT_EQ(check.checkedBytes, 4u * 4 * chunk);
  }
  for (uint64_t seed = 0; seed < 200; ++seed) {
    CheckResult check = run(plan, 16, {true, seed});
    ASSERT_EQ(check.wrongBytes, 0u)
        << "seed " << seed << ": " << check.firstWrong;
  }
}

TEST(Simulator, RacyScheduleGivesWrongBytesInSomeOrder) {
  // The verifier rejects racy_ring.mlir (test/runtime/racy.test); compiled
  // anyway, some interleavings forward chunks that have not arrived.
  Plan plan = loadPlan("racy_ring.json");
  int wrongRuns = 0;
  std::string example;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    CheckResult check = run(plan, 16, {true, seed});
    if (check.wrongBytes) {
      ++wrongRuns;
      example = check.firstWrong;
    }
  }
  EXPECT_GT(wrongRuns, 0);
  EXPECT_LT(wrongRuns, 200) << "every order wrong: the plan itself is broken";
  EXPECT_NE(example.find("expected"), std::string::npos) << example;
}

TEST(Simulator, StuckPollIsReportedWithRankEngineAndFlag) {
  Plan plan = loadPlan("ring.json");
  // Ask one poll for one more notify than it will ever get.
  for (Stream &stream : plan.streams)
    for (Command &command : stream.commands)
      if (command.kind == Command::Kind::Poll && command.flag >= 2) {
        command.value += 1;
        HostMemory memory(plan, 8);
        fillInputs(plan, memory);
        std::string error;
        EXPECT_FALSE(simulate(plan, memory, {}, error));
        EXPECT_NE(error.find("rank " + std::to_string(stream.rank) +
                             " engine " + std::to_string(stream.engine) +
                             " waits forever"),
                  std::string::npos)
            << error;
        EXPECT_NE(error.find("flag " + std::to_string(command.flag) +
                             " must reach " + std::to_string(command.value)),
                  std::string::npos)
            << error;
        return;
      }
  FAIL() << "ring.json has no cross-queue poll";
}

TEST(Simulator, WrongCompletionCountIsReported) {
  Plan plan = loadPlan("ring.json");
  plan.done[0] += 1;
  HostMemory memory(plan, 8);
  std::string error;
  EXPECT_FALSE(simulate(plan, memory, {}, error));
  EXPECT_EQ(error, "rank 0 completion flag is 4, expected 5");
}

TEST(Simulator, UnwrittenOutputIsCaught) {
  Plan plan = loadPlan("ring.json");
  // Drop the first copy of rank 1's queue: its own chunk never lands.
  for (Stream &stream : plan.streams)
    if (stream.rank == 1)
      for (Command &command : stream.commands)
        if (command.kind == Command::Kind::Copy) {
          command.slices[1] = command.slices[0];
          command.kind = Command::Kind::Poll; // a poll that passes at once
          command.flag = kLaunchFlag;
          command.value = 1;
          HostMemory memory(plan, 4);
          fillInputs(plan, memory);
          std::string error;
          ASSERT_TRUE(simulate(plan, memory, {}, error)) << error;
          CheckResult check = checkOutputs(plan, memory);
          EXPECT_GT(check.wrongBytes, 0u);
          EXPECT_EQ(check.firstWrong.rfind("rank ", 0), 0u);
          return;
        }
}
