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
#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/RunCheck.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
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

namespace {
/// A rooted built-in with root `root`, as the communicator edits the text
/// today (runtime/lib/comm: `withRoot`): `root 0`, every `on 0` and every
/// `sdma.rank_add 0` rewritten.
std::string withRoot(std::string text, int root) {
  if (root == 0)
    return text;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    for (const char *word : {"root 0", "on 0", "sdma.rank_add 0"}) {
      size_t n = std::strlen(word);
      if (text.compare(i, n, word) == 0 && i > 0 && text[i - 1] == ' ' &&
          (i + n == text.size() || !std::isalnum((unsigned char)text[i + n]))) {
        out += std::string(word, n - 1) + std::to_string(root);
        i += n;
        break;
      }
    }
    if (i < text.size())
      out += text[i];
  }
  return out;
}

/// The same schedule with its root written as the literal 0 (`sdma.root`
/// dropped, `%root` -> 0): the built-ins as they were before `sdma.root`,
/// whose text `withRoot` was written for.
std::string withLiteralRootZero(const std::string &text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("= sdma.root") != std::string::npos)
      continue;
    for (size_t at; (at = line.find("%root")) != std::string::npos;)
      line.replace(at, 5, "0");
    out += line + "\n";
  }
  return out;
}
} // namespace

TEST_F(ScheduleCompilerTest, ProgramWithARootIsTheTextEditedSchedulesProgram) {
  // What the communicator compiles for a rooted collective: the program of
  // root=k must be, byte for byte, the program of the text it edits today,
  // and of the built-in as it was before sdma.root, edited the same way.
  for (const char *name :
       {"broadcast.mlir", "scatter.mlir", "gather.mlir", "reduce.mlir"}) {
    std::string text = readSchedule(name);
    std::string literal = withLiteralRootZero(text);
    for (int ranks : {2, 3, 4, 8}) {
      for (int root = 0; root < ranks; ++root) {
        std::string where = std::string(name) + " at " + std::to_string(ranks) +
                            " ranks, root " + std::to_string(root);
        ProgramCompileOptions options;
        options.ranks = ranks;
        options.root = root;
        options.name = name;
        ScheduleCompileResult bound, edited, before;
        std::string error;
        ASSERT_TRUE(compiler->compileProgram(text, options, bound, error))
            << error;
        ASSERT_TRUE(bound.ok) << where << ": " << bound.diagnostics;
        EXPECT_TRUE(bound.variants.empty()) << where;
        ScheduleCompileOptions whole;
        whole.ranks = ranks;
        whole.name = name;
        ASSERT_TRUE(
            compiler->compile(withRoot(text, root), whole, edited, error))
            << error;
        ASSERT_TRUE(edited.ok) << where << ": " << edited.diagnostics;
        ASSERT_TRUE(
            compiler->compile(withRoot(literal, root), whole, before, error))
            << error;
        ASSERT_TRUE(before.ok) << where << ": " << before.diagnostics;
        EXPECT_FALSE(bound.ldst.empty()) << where;
        EXPECT_EQ(bound.ldst, edited.ldst) << where;
        EXPECT_EQ(bound.ldst, before.ldst) << where;
        EXPECT_EQ(bound.proof, before.proof) << where;
        std::optional<LdstProgram> program =
            LdstProgram::parse(bound.ldst, error);
        ASSERT_TRUE(program) << where << ": " << error;
        ASSERT_TRUE(program->collective) << where;
        EXPECT_EQ(program->collective->root, root) << where;
      }
    }
  }
}

TEST_F(ScheduleCompilerTest, ProgramsAreCachedUnderTheirOwnKeys) {
  std::string text = readSchedule("broadcast.mlir"), error;
  ProgramCompileOptions options;
  options.ranks = 4;
  options.root = 2;
  ScheduleCompileResult first, second, other;
  ASSERT_TRUE(compiler->compileProgram(text, options, first, error)) << error;
  ASSERT_TRUE(first.ok) << first.diagnostics;
  EXPECT_FALSE(first.cacheHit);
  ASSERT_TRUE(compiler->compileProgram(text, options, second, error));
  EXPECT_TRUE(second.cacheHit);
  EXPECT_EQ(second.ldst, first.ldst);
  // Another root is another program; a whole compile another entry.
  options.root = 3;
  ASSERT_TRUE(compiler->compileProgram(text, options, other, error));
  EXPECT_FALSE(other.cacheHit);
  EXPECT_NE(other.ldst, first.ldst);
  ScheduleCompileOptions whole;
  whole.ranks = 4;
  whole.root = 2;
  ASSERT_TRUE(compiler->compile(text, whole, other, error));
  EXPECT_FALSE(other.cacheHit);
  ASSERT_EQ(other.variants.size(), 1u);
  EXPECT_EQ(other.ldst, first.ldst);
}

TEST_F(ScheduleCompilerTest, ARootOutOfRangeIsAClearError) {
  std::string text = readSchedule("gather.mlir"), error;
  ProgramCompileOptions options;
  options.ranks = 4;
  options.name = "gather.mlir";
  for (int root : {4, -1}) {
    options.root = root;
    ScheduleCompileResult result;
    ASSERT_TRUE(compiler->compileProgram(text, options, result, error))
        << error;
    EXPECT_FALSE(result.ok) << root;
    EXPECT_TRUE(result.ldst.empty());
    EXPECT_NE(result.diagnostics.find(
                  "gather.mlir:9:1: error: 'sdma.schedule' op root " +
                  std::to_string(root) + " is out of range [0, 4)"),
              std::string::npos)
        << result.diagnostics;
  }
  // A root for a schedule that has none.
  options.root = 1;
  ScheduleCompileResult result;
  ASSERT_TRUE(compiler->compileProgram(readSchedule("all_gather_ring.mlir"),
                                       options, result, error));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.diagnostics.find("declares no root"), std::string::npos)
      << result.diagnostics;
}

TEST(ScheduleCompilerEntry, TheProgramEntryRefusesOptionsItDoesNotTake) {
  // The C entry itself: a whole compile's options (variants, packets) are
  // errors for the program entry, not silently ignored.
  void *handle = dlopen(SDMA_COMPILER_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(handle) << dlerror();
  auto compileProgram =
      reinterpret_cast<char *(*)(const char *, size_t, const char *)>(
          dlsym(handle, "sdmaCompilerCompileProgram"));
  auto release =
      reinterpret_cast<void (*)(char *)>(dlsym(handle, "sdmaCompilerFree"));
  ASSERT_TRUE(compileProgram && release);
  std::string text = readSchedule("broadcast.mlir");
  for (auto [options, expected] :
       {std::pair<const char *, const char *>{
            "{\"ranks\": 4, \"variants\": [\"pcpy\"]}",
            "options: 'variants' is not an option of a program compile"},
        {"{\"ranks\": 4, \"root\": \"two\"}",
         "options: 'root' must be an integer"},
        {"[4]", "options: not a JSON object"}}) {
    char *answer = compileProgram(text.data(), text.size(), options);
    ASSERT_TRUE(answer);
    std::string result(answer);
    release(answer);
    EXPECT_NE(result.find("\"ok\":false"), std::string::npos) << result;
    EXPECT_NE(result.find(expected), std::string::npos) << result;
  }
  char *answer =
      compileProgram(text.data(), text.size(), "{\"ranks\": 4, \"root\": 1}");
  ASSERT_TRUE(answer);
  std::string result(answer);
  release(answer);
  EXPECT_NE(result.find("\"ok\":true"), std::string::npos) << result;
  EXPECT_NE(result.find("\"variants\":[]"), std::string::npos) << result;
}
