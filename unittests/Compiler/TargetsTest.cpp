//===- TargetsTest.cpp - the SDMA target profiles -------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The profile table holds the facts of ../shared/SDMA-PACKETS.md
// ("Limits"); the packet encoder refuses a program whose target it does not
// know even when the module was never verified.
//
//===----------------------------------------------------------------------===//

#include "sdma/Compiler/Compile.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/Packets.h"
#include "sdmapkt/IR/SdmaPkt.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace sdma;
using namespace sdma::pkt;

static std::string readSchedule(const std::string &path) {
  std::ifstream file(std::string(SDMA_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_FALSE(text.str().empty()) << path;
  return text.str();
}

TEST(Targets, TheTableHoldsTheSourcedLimits) {
  ASSERT_EQ(targetProfiles().size(), 3u);
  EXPECT_EQ(defaultTargetName(), "gfx9");
  EXPECT_EQ(targetNameList(), "gfx9, gfx942 or gfx950");
  EXPECT_EQ(sdmaTargets(),
            (std::vector<std::string>{"gfx9", "gfx942", "gfx950"}));
  EXPECT_EQ(findTargetProfile("gfx1"), nullptr);

  const TargetProfile *gfx9 = findTargetProfile("gfx9");
  ASSERT_TRUE(gfx9);
  EXPECT_EQ(gfx9->countBits, 22u);
  EXPECT_EQ(gfx9->maxCopyBytes(), 0x400000); // Linux copy_max_bytes
  EXPECT_FALSE(gfx9->swap);
  EXPECT_EQ(gfx9->maxSwapBytes(), 0);
  EXPECT_EQ(gfx9->maxNopExtra(), 0);

  const TargetProfile *gfx942 = findTargetProfile("gfx942");
  ASSERT_TRUE(gfx942);
  EXPECT_EQ(gfx942->maxCopyBytes(), int64_t(1) << 30);
  EXPECT_EQ(gfx942->maxSwapBytes(), 0x3fffffe0);
  EXPECT_EQ(gfx942->maxNopExtra(), 0x3fff);

  const TargetProfile *gfx950 = findTargetProfile("gfx950");
  ASSERT_TRUE(gfx950);
  EXPECT_EQ(gfx950->countBits, 30u);
  EXPECT_EQ(gfx950->maxCopyBytes(), int64_t(128) << 20);
  EXPECT_EQ(gfx950->maxSwapBytes(), int64_t(128) << 20);

  for (const TargetProfile &profile : targetProfiles()) {
    EXPECT_EQ(profile.broadcastOffsetBytes, 32) << profile.name.str();
    EXPECT_EQ(profile.swapAlignBytes, 64) << profile.name.str();
  }
  EXPECT_EQ(targetNamesWith([](const TargetProfile &p) { return p.swap; }),
            "gfx942 or gfx950");
}

TEST(Targets, TheEncoderRefusesAnUnknownTargetInAnUnverifiedModule) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          "sdmapkt.program @p attributes {target = \"gfx1\", ranks = 1 : "
          "i64, buffers = [\"b\"], buffer_chunks = [1], flags = 2 : i64, "
          "timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 "
          ": i64, done = [0]} {\n}\n",
          config);
  ASSERT_TRUE(module);
  std::string out;
  llvm::raw_string_ostream os(out);
  EXPECT_TRUE(mlir::failed(translateToPackets(*module, os)));
  EXPECT_TRUE(mlir::failed(translateToPacketListing(*module, os)));
  EXPECT_NE(diagnostics.find("unknown target 'gfx1' (gfx9, gfx942 or gfx950)"),
            std::string::npos)
      << diagnostics;
}

TEST(Targets, CompileBuildsPacketsForTheTargetItIsGiven) {
  CompileOptions options;
  options.ranks = 4; // where the swap variant fuses swaps
  options.variants = dmaVariants();
  options.policy = CompileOptions::VariantPolicy::AllThatCompile;
  options.packets = CompileOptions::Packets::All;
  std::string text = readSchedule("schedules/all_to_all_direct.mlir");
  // The default, gfx9, has no swap: that variant is skipped, saying why.
  Artifacts out = compile(text, options);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.skipped.size(), 1u);
  EXPECT_EQ(out.skipped[0].variant, "swap");
  EXPECT_NE(out.skipped[0].reason.find(
                "needs COPY_LINEAR_SWAP, which target 'gfx9' does not "
                "support (gfx942 or gfx950 do)"),
            std::string::npos)
      << out.skipped[0].reason;
  for (const VariantArtifacts &variant : out.variants)
    EXPECT_NE(variant.packets.find("\"name\": \"gfx9\""), std::string::npos)
        << variant.variant;
  // gfx942 builds all four.
  options.sdmaTarget = "gfx942";
  out = compile(text, options);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.skipped.empty());
  ASSERT_EQ(out.variants.size(), 4u);
  EXPECT_NE(out.variants[2].packets.find("\"name\": \"gfx942\""),
            std::string::npos);
  // An unknown target is an error before any variant compiles.
  options.sdmaTarget = "gfx1";
  out = compile(text, options);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, "unknown SDMA target 'gfx1' (gfx9, gfx942 or gfx950)");
}
