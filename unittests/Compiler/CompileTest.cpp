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

/// Variant `name` of `out`; fails the test where there is none.
static const VariantArtifacts *findVariant(const Artifacts &out,
                                           const std::string &name) {
  for (const VariantArtifacts &variant : out.variants)
    if (variant.variant == name)
      return &variant;
  ADD_FAILURE() << "no variant " << name;
  return nullptr;
}

TEST(Compile, VariantsFromOneProofEqualEachCompiledAlone) {
  // Every variant is lowered from the one proved flat schedule (the last
  // takes it, the others a copy): each must come out as when it is the
  // only variant compiled.
  for (const char *name :
       {"schedules/all_to_all_direct.mlir", "schedules/all_gather_ring.mlir"}) {
    CompileOptions options;
    options.ranks = 4;
    options.variants = dmaVariants();
    options.policy = CompileOptions::VariantPolicy::AllThatCompile;
    options.packets = CompileOptions::Packets::All;
    options.sdmaTarget = "gfx942";
    std::string text = readSchedule(name);
    Artifacts all = compile(text, options);
    ASSERT_TRUE(all.ok) << name << ": " << all.error;
    ASSERT_EQ(all.variants.size(), dmaVariants().size()) << name;
    for (const std::string &variant : dmaVariants()) {
      CompileOptions alone = options;
      alone.variants = {variant};
      Artifacts one = compile(text, alone);
      ASSERT_TRUE(one.ok) << name << " " << variant << ": " << one.error;
      const VariantArtifacts *same = findVariant(all, variant);
      ASSERT_TRUE(same);
      EXPECT_EQ(same->plan, one.variants[0].plan) << name << " " << variant;
      EXPECT_EQ(same->packets, one.variants[0].packets)
          << name << " " << variant;
      EXPECT_EQ(all.ldstProgram, one.ldstProgram) << name;
    }
  }
}

TEST(Compile, ProgramOnlyIsTheLoadStoreKernelOfAWholeCompile) {
  Compiler compiler(/*threading=*/false);
  for (const char *name :
       {"schedules/all_gather_ring.mlir", "schedules/all_reduce_two_shot.mlir",
        "schedules/all_to_allv_slots.mlir"}) {
    std::string text = readSchedule(name);
    ProgramOptions options;
    options.ranks = 4;
    options.bufferName = name;
    Artifacts program = compiler.compileProgram(text, options);
    ASSERT_TRUE(program.ok) << name << ": " << program.error << "\n"
                            << program.diagnostics;
    EXPECT_TRUE(program.variants.empty()) << name;
    EXPECT_TRUE(program.skipped.empty()) << name;
    EXPECT_NE(program.proof.find("proved for 4 ranks"), std::string::npos);
    CompileOptions whole;
    static_cast<ProgramOptions &>(whole) = options;
    Artifacts out = compiler.compile(text, whole);
    ASSERT_TRUE(out.ok) << name << ": " << out.error;
    EXPECT_FALSE(program.ldstProgram.empty()) << name;
    EXPECT_EQ(program.ldstProgram, out.ldstProgram) << name;
    EXPECT_EQ(program.proof, out.proof) << name;
    EXPECT_EQ(program.schedule, out.schedule) << name;
  }
}

/// `text` with its root written as the literal `root`, as the communicator
/// used to edit its rooted built-ins: the `sdma.root` line dropped, `%root`
/// and the declared `root 0` replaced by the number.
static std::string withLiteralRoot(std::string text, int64_t root) {
  std::string number = std::to_string(root), out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("= sdma.root") != std::string::npos)
      continue;
    for (size_t at; (at = line.find("%root")) != std::string::npos;)
      line.replace(at, 5, number);
    if (size_t at = line.find(") root 0 {"); at != std::string::npos)
      line.replace(at, 10, ") root " + number + " {");
    out += line + "\n";
  }
  return out;
}

TEST(Compile, RootOptionEqualsTheRootWrittenInTheText) {
  Compiler compiler(/*threading=*/false);
  for (const char *name : {"schedules/broadcast.mlir", "schedules/scatter.mlir",
                           "schedules/gather.mlir", "schedules/reduce.mlir"}) {
    std::string text = readSchedule(name);
    ASSERT_NE(text.find("= sdma.root"), std::string::npos) << name;
    for (int64_t ranks : {2, 3, 5, 8}) {
      for (int64_t root : {int64_t(0), int64_t(1), ranks / 2, ranks - 1}) {
        ProgramOptions options;
        options.ranks = ranks;
        options.root = root;
        Artifacts bound = compiler.compileProgram(text, options);
        ASSERT_TRUE(bound.ok)
            << name << " root " << root << ": " << bound.error << "\n"
            << bound.diagnostics;
        options.root.reset();
        Artifacts literal =
            compiler.compileProgram(withLiteralRoot(text, root), options);
        ASSERT_TRUE(literal.ok)
            << name << " root " << root << ": " << literal.error << "\n"
            << literal.diagnostics;
        EXPECT_EQ(bound.ldstProgram, literal.ldstProgram)
            << name << " at " << ranks << " ranks, root " << root;
        EXPECT_NE(bound.proof.find("root " + std::to_string(root)),
                  std::string::npos)
            << bound.proof;
      }
    }
  }
}

TEST(Compile, RootOutOfRangeOrOnAnUnrootedScheduleIsAnError) {
  Compiler compiler(/*threading=*/false);
  ProgramOptions options;
  options.ranks = 4;
  options.bufferName = "broadcast.mlir";
  for (int64_t root : {4, 100, -1}) {
    options.root = root;
    Artifacts out = compiler.compileProgram(
        readSchedule("schedules/broadcast.mlir"), options);
    EXPECT_FALSE(out.ok) << root;
    EXPECT_TRUE(out.diagnosed);
    EXPECT_EQ(out.error, "'broadcast.mlir' did not compile");
    EXPECT_NE(out.diagnostics.find("error: 'sdma.schedule' op root " +
                                   std::to_string(root) +
                                   " is out of range [0, 4)"),
              std::string::npos)
        << out.diagnostics;
    EXPECT_TRUE(out.ldstProgram.empty());
  }
  options.root = 1;
  options.bufferName = "all_gather_ring.mlir";
  Artifacts out = compiler.compileProgram(
      readSchedule("schedules/all_gather_ring.mlir"), options);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.diagnostics.find("declares no root (`implements KIND(...) "
                                 "root N`) but sdma-unroll was given root=1"),
            std::string::npos)
      << out.diagnostics;
  // The whole compile binds the same root.
  CompileOptions whole;
  whole.ranks = 4;
  whole.root = 3;
  whole.variants = {"bcst"};
  out = compiler.compile(readSchedule("schedules/broadcast.mlir"), whole);
  ASSERT_TRUE(out.ok) << out.error << "\n" << out.diagnostics;
  EXPECT_NE(out.proof.find("root 3"), std::string::npos) << out.proof;
  EXPECT_EQ(runOn(out, 0, "sim"), 0);
}
