//===- ScheduleCompilerTest.cpp - the runtime dlopens the compiler --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Links the runtime only (no MLIR): compiles schedules through
// libsdma-compiler.so, runs them on the host executors, and checks the disk
// cache, the error paths, and that hipRTC (its own LLVM) still works in the
// same process (BUILD-NOTES #8).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/ScheduleCompiler.h"
#include "sdma/runtime/KernelCompiler.h"
#include "sdma/runtime/RunCheck.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <unistd.h>

using namespace sdma::rt;

namespace {
std::string readSchedule(const std::string &name) {
  std::ifstream file(std::string(SDMA_SOURCE_DIR) + "/schedules/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class ScheduleCompilerTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/sdma-compiler-test-XXXXXX";
    ASSERT_TRUE(mkdtemp(pattern));
    cache = pattern;
    std::string error;
    compiler = ScheduleCompiler::load(error, SDMA_COMPILER_LIBRARY, cache);
    ASSERT_TRUE(compiler) << error;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + cache + "'";
    (void)std::system(command.c_str());
  }
  std::string cache;
  std::unique_ptr<ScheduleCompiler> compiler;
};
} // namespace

TEST(ScheduleCompilerLoad, MissingLibraryIsAClearError) {
  std::string error;
  EXPECT_FALSE(
      ScheduleCompiler::load(error, "/nonexistent/libsdma-compiler.so"));
  EXPECT_EQ(error.rfind("no compiler: cannot load libsdma-compiler.so", 0), 0u)
      << error;
  EXPECT_NE(error.find("SDMA_COMPILER_LIBRARY"), std::string::npos);
}

TEST_F(ScheduleCompilerTest, CompilesAndRunsEverySchedule) {
  for (const char *name :
       {"all_gather_ring.mlir", "all_gather_direct.mlir",
        "all_to_all_direct.mlir", "broadcast.mlir", "gather.mlir",
        "scatter.mlir", "all_to_all_swap.mlir", "all_gather_bcast.mlir"}) {
    ScheduleCompileOptions options;
    options.ranks = 4;
    options.variants = {"b2b", "pcpy"};
    options.policy = "first";
    options.packets = "primary";
    // Its own sdma.swap ops need a target with COPY_LINEAR_SWAP; the rest
    // build for the default (gfx9).
    if (std::string(name) == "all_to_all_swap.mlir")
      options.sdmaTarget = "gfx942";
    options.name = name;
    ScheduleCompileResult result;
    std::string error;
    ASSERT_TRUE(compiler->compile(readSchedule(name), options, result, error))
        << error;
    ASSERT_TRUE(result.ok) << name << ": " << result.error << "\n"
                           << result.diagnostics;
    EXPECT_EQ(result.ranks, 4);
    EXPECT_NE(result.proof.find("proved for 4 ranks"), std::string::npos);
    std::optional<CompiledSchedule> compiled = result.load(0, error);
    ASSERT_TRUE(compiled) << error;
    ExecutorOptions executorOptions;
    executorOptions.dmaProfile =
        SDMA_SOURCE_DIR "/runtime/profiles/mi300x-sdma.json";
    for (const char *backend : {"sim", "sdma-packets"}) {
      auto executor =
          createExecutor(backend, *compiled, executorOptions, error);
      ASSERT_TRUE(executor) << error;
      RunCheckResult run;
      ASSERT_TRUE(runAndCheck(*executor, compiled->plan, 256, {}, run, error))
          << name << " on " << backend << ": " << error;
      EXPECT_EQ(run.wrongBytes(), 0u) << name << " on " << backend;
    }
  }
}

TEST_F(ScheduleCompilerTest, CachesResultsAndRebuildsCorruptEntries) {
  ScheduleCompileOptions options;
  options.ranks = 8;
  std::string text = readSchedule("all_gather_ring.mlir"), error;
  ScheduleCompileResult first, second, third;
  ASSERT_TRUE(compiler->compile(text, options, first, error)) << error;
  EXPECT_TRUE(first.ok);
  EXPECT_FALSE(first.cacheHit);
  ASSERT_TRUE(compiler->compile(text, options, second, error)) << error;
  EXPECT_TRUE(second.cacheHit);
  EXPECT_EQ(second.variants[0].plan, first.variants[0].plan);
  EXPECT_EQ(second.ldst, first.ldst);
  // Another rank count is another entry.
  options.ranks = 4;
  ASSERT_TRUE(compiler->compile(text, options, third, error));
  EXPECT_FALSE(third.cacheHit);
  // Corrupt every entry: the next compile notices and rebuilds.
  std::string command =
      "for f in '" + cache + "'/*; do printf garbage > \"$f\"; done";
  ASSERT_EQ(std::system(command.c_str()), 0);
  options.ranks = 8;
  ScheduleCompileResult rebuilt;
  ASSERT_TRUE(compiler->compile(text, options, rebuilt, error)) << error;
  EXPECT_TRUE(rebuilt.ok);
  EXPECT_FALSE(rebuilt.cacheHit);
  EXPECT_TRUE(rebuilt.cacheWasCorrupt);
  EXPECT_EQ(rebuilt.variants[0].plan, first.variants[0].plan);
}

TEST_F(ScheduleCompilerTest, FailuresComeBackWithDiagnostics) {
  ScheduleCompileResult result;
  std::string error;
  ScheduleCompileOptions options;
  options.name = "bad.mlir";
  ASSERT_TRUE(compiler->compile("sdma.schedule @s {", options, result, error));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.diagnostics.find("bad.mlir:1:"), std::string::npos)
      << result.diagnostics;
  // An open rank count without ranks.
  ASSERT_TRUE(compiler->compile(readSchedule("all_gather_ring.mlir"), {},
                                result, error));
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.ranksOpen);
  // Malformed options JSON is an error in the result, not a crash.
  for (const char *bad : {"{\"ranks\": \"eight\"}", "[1, 2]",
                          "{\"variants\": []}", "{\"policy\": \"sometimes\"}",
                          "{\"sdma_target\": \"gfx1\"}", "not json"}) {
    ASSERT_TRUE(compiler->compileJson(readSchedule("all_gather_ring.mlir"), bad,
                                      result, error))
        << error;
    EXPECT_FALSE(result.ok) << bad;
    EXPECT_EQ(result.error.rfind("options: ", 0), 0u) << result.error;
  }
}

TEST_F(ScheduleCompilerTest, HipRtcStillWorksBesideTheCompiler) {
  // hipRTC's comgr carries LLVM 15; the compiler library LLVM 22 with MLIR
  // hidden inside. Both in one process must work (BUILD-NOTES #8).
  ScheduleCompileOptions options;
  options.ranks = 2;
  ScheduleCompileResult result;
  std::string error;
  ASSERT_TRUE(compiler->compile(readSchedule("all_gather_ring.mlir"), options,
                                result, error));
  ASSERT_TRUE(result.ok);
  std::optional<CompiledSchedule> compiled = result.load(0, error);
  ASSERT_TRUE(compiled && compiled->ldst) << error;
  KernelBinary binary;
  if (!compileKernel(*compiled->ldst, "hiprtc", "gfx90a", binary, error)) {
    if (error.find("built without HIP") != std::string::npos ||
        error.find("cannot load") != std::string::npos)
      GTEST_SKIP() << error;
    FAIL() << error;
  }
  EXPECT_GT(binary.code.size(), 0u);
  // And the compiler still works after hipRTC ran.
  ASSERT_TRUE(compiler->compile(readSchedule("all_gather_direct.mlir"), options,
                                result, error));
  EXPECT_TRUE(result.ok) << result.error;
}
