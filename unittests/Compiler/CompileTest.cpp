//===- CompileTest.cpp - sdma::compile from text to a checked run ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The compile library as a host program uses it: schedule text in, the
// runtime loads what comes out and runs it on the host executors, checked
// against the reference simulator.
//
//===----------------------------------------------------------------------===//

#include "sdma/Compiler/Compile.h"
#include "sdma/runtime/RunCheck.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace sdma;

static std::string readSchedule(const std::string &path) {
  std::ifstream file(std::string(SDMA_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_FALSE(text.str().empty()) << path;
  return text.str();
}

/// Loads `out`'s variant `v` and runs it on `backend` at 256-byte chunks;
/// the wrong bytes (or -1 where something failed).
static int64_t runOn(const Artifacts &out, size_t v, const char *backend) {
  std::string error;
  std::optional<rt::CompiledSchedule> compiled = rt::CompiledSchedule::parse(
      out.variants[v].plan, out.ldstProgram, out.variants[v].packets, error);
  EXPECT_TRUE(compiled) << error;
  if (!compiled)
    return -1;
  rt::ExecutorOptions options;
  options.dmaProfile = SDMA_SOURCE_DIR "/runtime/profiles/mi300x-sdma.json";
  std::unique_ptr<rt::Executor> executor =
      rt::createExecutor(backend, *compiled, options, error);
  EXPECT_TRUE(executor) << error;
  rt::RunCheckResult result;
  if (!executor ||
      !rt::runAndCheck(*executor, compiled->plan, 256, {}, result, error)) {
    ADD_FAILURE() << backend << ": " << error;
    return -1;
  }
  EXPECT_GT(result.check.checkedBytes, 0u);
  return static_cast<int64_t>(result.wrongBytes());
}

TEST(Compile, RingFromTextToCheckedRuns) {
  CompileOptions options;
  options.ranks = 4;
  options.variants = {"b2b"};
  options.packets = CompileOptions::Packets::Primary;
  Artifacts out =
      compile(readSchedule("schedules/all_gather_ring.mlir"), options);
  ASSERT_TRUE(out.ok) << out.error << "\n" << out.diagnostics;
  EXPECT_EQ(out.schedule, "all_gather_ring");
  EXPECT_EQ(out.ranks, 4);
  EXPECT_NE(out.proof.find("proved for 4 ranks"), std::string::npos)
      << out.proof;
  EXPECT_TRUE(out.declaresCollective);
  ASSERT_EQ(out.variants.size(), 1u);
  EXPECT_EQ(out.variants[0].variant, "b2b");
  EXPECT_FALSE(out.variants[0].packets.empty());
  EXPECT_EQ(runOn(out, 0, "sim"), 0);
  EXPECT_EQ(runOn(out, 0, "sdma-packets"), 0);
}

TEST(Compile, EveryVariantThatCompiles) {
  CompileOptions options;
  options.ranks = 3;
  options.variants = dmaVariants();
  options.policy = CompileOptions::VariantPolicy::AllThatCompile;
  options.failVariantForTesting = "swap";
  Artifacts out =
      compile(readSchedule("schedules/all_to_all_direct.mlir"), options);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.variants.size(), 3u);
  ASSERT_EQ(out.skipped.size(), 1u);
  EXPECT_EQ(out.skipped[0].variant, "swap");
  // The first line of its first error, and where it points.
  EXPECT_NE(out.skipped[0].reason.find("raise max-ops"), std::string::npos)
      << out.skipped[0].reason;
  EXPECT_NE(out.skipped[0].reason.find("<schedule>:"), std::string::npos)
      << out.skipped[0].reason;
  for (size_t v = 0; v < out.variants.size(); ++v)
    EXPECT_EQ(runOn(out, v, "sim"), 0) << out.variants[v].variant;
}

TEST(Compile, FirstThatCompilesStopsThere) {
  CompileOptions options;
  options.ranks = 4;
  options.variants = {"pcpy", "bcst", "swap"};
  options.policy = CompileOptions::VariantPolicy::FirstThatCompiles;
  options.failVariantForTesting = "pcpy";
  Artifacts out =
      compile(readSchedule("schedules/all_gather_direct.mlir"), options);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.variants.size(), 1u);
  EXPECT_EQ(out.variants[0].variant, "bcst");
  ASSERT_EQ(out.skipped.size(), 1u);
  // With policy Each, the same failure is an error, with its diagnostics.
  options.policy = CompileOptions::VariantPolicy::Each;
  out = compile(readSchedule("schedules/all_gather_direct.mlir"), options);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.diagnosed);
  EXPECT_EQ(out.error, "variant pcpy of '<schedule>' did not compile");
  EXPECT_NE(out.diagnostics.find("error:"), std::string::npos);
}

TEST(Compile, BadInputIsAnErrorNamingWhereAndWhy) {
  CompileOptions options;
  options.bufferName = "bad.mlir";
  Artifacts out = compile("sdma.schedule @s ranks(2) buffers(%b : 1) {\n"
                          "  sdma.frobnicate\n}\n",
                          options);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.diagnosed);
  EXPECT_NE(out.diagnostics.find("bad.mlir:1:24: error: expected SSA operand"),
            std::string::npos)
      << out.diagnostics;

  out = compile("module {}", options);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error,
            "'bad.mlir' holds 0 sdma.schedule ops; expected exactly one");

  out = compile(std::string(5000, '{'), options);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.diagnostics.find("nest"), std::string::npos) << out.diagnostics;

  options.variants = {"fast"};
  options.ranks = 2;
  out = compile(readSchedule("schedules/all_gather_ring.mlir"), options);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, "unknown DMA variant 'fast' (pcpy, bcst, swap or b2b)");
}

TEST(Compile, OpenRankCountNeedsRanks) {
  Artifacts out = compile(readSchedule("schedules/all_gather_ring.mlir"), {});
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.ranksOpen);
  EXPECT_NE(out.error.find("leaves its rank count open"), std::string::npos);
}

TEST(Compile, RacyScheduleIsRefusedWithTheRace) {
  std::vector<std::string> streamed;
  CompileOptions options;
  options.diagnostics = [&](std::string_view text) {
    streamed.emplace_back(text);
  };
  Artifacts out =
      compile(readSchedule("runtime/test/plans/racy_ring.mlir"), options);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.diagnostics.empty()); // streamed instead
  ASSERT_FALSE(streamed.empty());
  EXPECT_NE(streamed[0].find("race"), std::string::npos) << streamed[0];
}

TEST(Compile, OneCompilerServesManyCompiles) {
  Compiler compiler(/*threading=*/false);
  CompileOptions options;
  for (int ranks : {2, 3, 5}) {
    options.ranks = ranks;
    Artifacts out = compiler.compile(
        readSchedule("schedules/all_gather_ring.mlir"), options);
    ASSERT_TRUE(out.ok) << out.error;
    EXPECT_EQ(out.ranks, ranks);
    EXPECT_EQ(runOn(out, 0, "sim"), 0);
  }
}
