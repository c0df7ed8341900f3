//===- Pipelines.cpp - sdma pass pipelines --------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Transforms/Pipelines.h"
#include "sdma/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace sdma;

ArrayRef<StringRef> sdma::getDMAVariants() {
  static const StringRef variants[] = {"pcpy", "bcst", "swap", "b2b"};
  return variants;
}

LogicalResult sdma::buildLowerToDMAPipeline(OpPassManager &pm,
                                            const LowerToDMAOptions &options) {
  StringRef variant = options.variant;
  if (!llvm::is_contained(getDMAVariants(), variant))
    return failure();
  SdmaUnrollOptions unroll;
  unroll.ranks = options.ranks;
  unroll.maxOps = options.maxOps;
  pm.addPass(createSdmaUnroll(unroll));
  pm.addPass(createSdmaVerify());
  if (variant == "bcst" || variant == "swap") {
    pm.addPass(variant == "bcst" ? createSdmaFuseBcast()
                                 : createSdmaFuseSwap());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createSdmaVerify());
  }
  SdmaAssignEnginesOptions assign;
  assign.engines = options.engines;
  assign.policy = variant == "b2b" ? "single" : "affinity";
  pm.addPass(createSdmaAssignEngines(assign));
  pm.addPass(createSdmaVerify());
  SdmaInsertSyncOptions sync;
  sync.prelaunch = options.prelaunch;
  sync.completion = "per-op";
  pm.addPass(createSdmaInsertSync(sync));
  if (variant == "b2b")
    pm.addPass(createSdmaBatch());
  return success();
}

void sdma::registerSdmaPipelines() {
  PassPipelineRegistration<LowerToDMAOptions>(
      "sdma-lower-dma",
      "verify a schedule and lower it to per-engine command queues in one "
      "of DMA-Latte's variants (pcpy, bcst, swap, b2b), optionally "
      "prelaunched",
      [](OpPassManager &pm, const LowerToDMAOptions &options) {
        // An unknown variant builds an empty pipeline; sdma-run and the
        // tests reject it before building.
        (void)buildLowerToDMAPipeline(pm, options);
      });
}
