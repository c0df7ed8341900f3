//===- sdma-fuzz.cpp - libFuzzer target for the sdma front end ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Feeds arbitrary bytes through everything a user's text reaches: parse,
// verify, sdma-unroll (ranks=4, a small op budget), canonicalisation and the
// JSON translation; then sdma::compile (the compile library sdma-run and the
// APIs use): the proof, the load/store kernel, the whole sdma-lower-dma
// pipeline (fusion, engines, sync, batching) down to the plan, and on to
// SDMA packets (conversion, encoding). Inputs written in the sdmapkt dialect go
// straight to its verifiers and the encoder. Any input must end in
// success or a diagnostic; a crash, an ASan report or a hang is a bug. Run it
// with scripts/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "sdma/Compiler/Compile.h"
#include "sdma/Conversion/Passes.h"
#include "sdma/IR/SdmaDialect.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Support/InputGuard.h"
#include "sdma/Target/JSON.h"
#include "sdma/Target/Packets.h"
#include "sdma/Target/Plan.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static MLIRContext &getContext() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    sdma::registerAllDialects(registry);
    auto *ctx = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    ctx->printOpOnDiagnostic(false);
    return ctx;
  }();
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef text(reinterpret_cast<const char *>(data), size);
  // The tools refuse deep nesting before parsing (MLIR's parser recurses).
  if (!sdma::checkInputNesting(text, "fuzz", sdma::kMaxInputNesting,
                               llvm::nulls()))
    return 0;
  MLIRContext &context = getContext();
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return 0;
  auto encode = [](ModuleOp m) {
    std::string out;
    llvm::raw_string_ostream os(out);
    (void)sdma::translateToPackets(m, os);
    (void)sdma::translateToPacketListing(m, os);
  };
  if (!module->getOps<sdma::pkt::ProgramOp>().empty()) {
    encode(*module);
    return 0;
  }

  // Flat JSON after unroll + canonicalize, then the whole DMA lowering in
  // one variant (chosen by the input's length) down to a plan.
  {
    OwningOpRef<ModuleOp> copy(module.get().clone());
    PassManager pm(&context);
    sdma::SdmaUnrollOptions options;
    options.ranks = 4;
    options.maxOps = 4096;
    pm.addPass(sdma::createSdmaUnroll(options));
    pm.addPass(createCanonicalizerPass());
    if (succeeded(pm.run(*copy))) {
      std::string json;
      llvm::raw_string_ostream os(json);
      (void)sdma::translateToJSON(*copy, os);
    }
  }
  static sdma::Compiler compiler(/*threading=*/false);
  sdma::CompileOptions options;
  options.ranks = 4;
  options.maxOps = 4096;
  options.variants = {sdma::dmaVariants()[size % 4]};
  options.prelaunch = size % 2;
  options.packets = sdma::CompileOptions::Packets::Primary;
  options.packetCompletion = size % 3 ? "atomic" : "fence";
  static const std::vector<std::string> targets = sdma::sdmaTargets();
  options.sdmaTarget = targets[size / 4 % targets.size()];
  options.maxChunkBytes = 64 << (size % 8);
  options.maxPacketBytes = 256;
  options.packetTimestamps = size % 5 == 0;
  options.bufferName = "fuzz";
  options.diagnostics = [](std::string_view) {};
  (void)compiler.compile(text, options);
  return 0;
}
