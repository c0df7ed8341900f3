//===- Pipelines.cpp - sdma pass pipelines --------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Transforms/Pipelines.h"
#include "sdma/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace sdma;

ArrayRef<StringRef> sdma::getDMAVariants() {
  static const StringRef variants[] = {"pcpy", "bcst", "swap", "b2b"};
  return variants;
}

LogicalResult
sdma::checkLowerToDMAOptions(const LowerToDMAOptions &options,
                             function_ref<void(const Twine &)> error) {
  StringRef variant = options.variant;
  if (!llvm::is_contained(getDMAVariants(), variant)) {
    ArrayRef<StringRef> variants = getDMAVariants();
    error("unknown variant '" + variant + "' (expected " +
          llvm::join(variants.drop_back(), ", ") + " or " + variants.back() +
          ")");
    return failure();
  }
  if (options.ranks < 0 || options.engines < 0 || options.maxOps < 1) {
    error("ranks and engines must be non-negative and max-ops positive "
          "(got ranks=" +
          Twine(options.ranks) + " engines=" + Twine(options.engines) +
          " max-ops=" + Twine(options.maxOps) + ")");
    return failure();
  }
  if (options.root < -1) {
    error("root must be a rank, or -1 for the declared one (got root=" +
          Twine(options.root) + ")");
    return failure();
  }
  return success();
}

LogicalResult sdma::buildLowerToDMAPipeline(OpPassManager &pm,
                                            const LowerToDMAOptions &options) {
  if (failed(checkLowerToDMAOptions(options, [](const Twine &) {})))
    return failure();
  // The proof of the input is the pipeline's only report.
  SdmaVerifyOptions quiet;
  quiet.report = false;
  SdmaUnrollOptions unroll;
  unroll.ranks = options.ranks;
  unroll.root = options.root;
  unroll.maxOps = options.maxOps;
  pm.addPass(createSdmaUnroll(unroll));
  pm.addPass(createSdmaVerify(quiet));
  return buildLowerProvedToDMAPipeline(pm, options);
}

LogicalResult
sdma::buildLowerProvedToDMAPipeline(OpPassManager &pm,
                                    const LowerToDMAOptions &options) {
  if (failed(checkLowerToDMAOptions(options, [](const Twine &) {})))
    return failure();
  StringRef variant = options.variant;
  // With verify-each, every step is proved again (quietly).
  SdmaVerifyOptions quiet;
  quiet.report = false;
  auto add = [&](std::unique_ptr<Pass> pass) {
    pm.addPass(std::move(pass));
    if (options.verifyEach)
      pm.addPass(createSdmaVerify(quiet));
  };
  // Drops copies of a slice onto themselves (a no-op the runtime skips
  // anyway) and folds constant fields.
  add(createCanonicalizerPass());
  if (variant == "bcst" || variant == "swap") {
    // Both re-prove their output and keep the input where it fails; then
    // what they leave abutting merges.
    add(variant == "bcst" ? createSdmaFuseBcast() : createSdmaFuseSwap());
    add(createCanonicalizerPass());
    add(createSdmaMergeCopies());
  }
  SdmaAssignEnginesOptions assign;
  assign.engines = options.engines;
  assign.policy = variant == "b2b" ? "single" : "affinity";
  add(createSdmaAssignEngines(assign));
  SdmaInsertSyncOptions sync;
  sync.prelaunch = options.prelaunch;
  sync.completion = "per-op";
  add(createSdmaInsertSync(sync));
  if (variant == "b2b")
    add(createSdmaBatch());
  return success();
}

void sdma::registerSdmaPipelines() {
  // PassPipelineRegistration's builder cannot fail: register the builder
  // directly so that a bad option is an error, not an empty pipeline.
  registerPassPipeline(
      "sdma-lower-dma",
      "verify a schedule and lower it to per-engine command queues in one "
      "of DMA-Latte's variants (pcpy, bcst, swap, b2b), optionally "
      "prelaunched",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        LowerToDMAOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string message;
        if (failed(checkLowerToDMAOptions(options, [&](const Twine &error) {
              message = ("sdma-lower-dma: " + error).str();
            })))
          return errorHandler(message);
        return buildLowerToDMAPipeline(pm, options);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(LowerToDMAOptions());
      });
}
