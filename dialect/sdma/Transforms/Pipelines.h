//===- Pipelines.h - sdma pass pipelines ------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TRANSFORMS_PIPELINES_H
#define SDMA_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace sdma {

/// Options of `sdma-lower-dma`: which DMA-Latte variant to build.
struct LowerToDMAOptions : public mlir::PassPipelineOptions<LowerToDMAOptions> {
  Option<int64_t> ranks{*this, "ranks",
                        llvm::cl::desc("rank count for open schedules"),
                        llvm::cl::init(0)};
  Option<int64_t> root{
      *this, "root",
      llvm::cl::desc("root of a rooted schedule (-1: the one it declares)"),
      llvm::cl::init(-1)};
  Option<int64_t> maxOps{*this, "max-ops",
                         llvm::cl::desc("sdma-unroll's op budget"),
                         llvm::cl::init(1000000)};
  Option<std::string> variant{
      *this, "variant",
      llvm::cl::desc("pcpy | bcst | swap | b2b (DMA-Latte's variants)"),
      llvm::cl::init("pcpy")};
  Option<bool> prelaunch{*this, "prelaunch",
                         llvm::cl::desc("queues wait on one launch flag"),
                         llvm::cl::init(false)};
  Option<int64_t> engines{*this, "engines",
                          llvm::cl::desc("engines per rank (0: one per rank)"),
                          llvm::cl::init(0)};
  Option<bool> verifyEach{
      *this, "verify-each",
      llvm::cl::desc("re-prove the schedule after every step (sdma-verify: "
                     "translation validation, for tests)"),
      llvm::cl::init(false)};
};

/// The variants `variant=` accepts.
llvm::ArrayRef<llvm::StringRef> getDMAVariants();

/// Checks options of `sdma-lower-dma`; on failure, calls `error` with a
/// message naming the bad value and the allowed ones.
mlir::LogicalResult
checkLowerToDMAOptions(const LowerToDMAOptions &options,
                       llvm::function_ref<void(const llvm::Twine &)> error);

/// unroll -> verify -> canonicalize (-> fuse-bcast | fuse-swap ->
/// canonicalize) -> assign-engines -> insert-sync (-> batch for b2b), with
/// verify after each step when verify-each is set. Fails for options
/// checkLowerToDMAOptions rejects.
mlir::LogicalResult buildLowerToDMAPipeline(mlir::OpPassManager &pm,
                                            const LowerToDMAOptions &options);

/// The same pipeline from its canonicalize on, for a schedule that is
/// already unrolled and proved (sdma-unroll and the verifier with the same
/// ranks, root and max-ops): sdma::compile proves a schedule once and lowers
/// each DMA variant from the proved flat schedule.
mlir::LogicalResult
buildLowerProvedToDMAPipeline(mlir::OpPassManager &pm,
                              const LowerToDMAOptions &options);

/// Registers `sdma-lower-dma` for sdma-opt.
void registerSdmaPipelines();

} // namespace sdma

#endif // SDMA_TRANSFORMS_PIPELINES_H
