//===- FuseBcast.cpp - two copies of one source become a bcast ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/ScheduleGraph.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/ValidatedRewrite.h"

#include "mlir/IR/Builders.h"

namespace sdma {
#define GEN_PASS_DEF_SDMAFUSEBCAST
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {
struct SdmaFuseBcastPass
    : public sdma::impl::SdmaFuseBcastBase<SdmaFuseBcastPass> {
  void runOnOperation() override {
    for (ScheduleOp schedule :
         llvm::to_vector(getOperation().getOps<ScheduleOp>()))
      (void)rewriteValidated(schedule, "sdma-fuse-bcast", [&](ScheduleOp s) {
        for (ArrayRef<TransferOpInterface> stretch : getStretches(s))
          fuseStretch(stretch);
        return success();
      });
  }

  void fuseStretch(ArrayRef<TransferOpInterface> stretch) {
    SmallVector<CopyOp> copies;
    for (TransferOpInterface op : stretch)
      if (auto copy = dyn_cast<CopyOp>(op.getOperation()))
        if (copy.hasStaticFields() && !copy.getEngine())
          copies.push_back(copy);
    DenseSet<Operation *> used;
    for (size_t i = 0; i < copies.size(); ++i) {
      if (used.contains(copies[i]))
        continue;
      StaticSlice src = *getStaticSlice(copies[i].getSourceSlice());
      StaticSlice dst0 = *getStaticSlice(copies[i].getTargetSlice());
      for (size_t j = i + 1; j < copies.size(); ++j) {
        if (used.contains(copies[j]))
          continue;
        StaticSlice otherSrc = *getStaticSlice(copies[j].getSourceSlice());
        StaticSlice dst1 = *getStaticSlice(copies[j].getTargetSlice());
        if (!(otherSrc == src) || dst0.overlaps(dst1) || dst0.overlaps(src) ||
            dst1.overlaps(src))
          continue;
        OpBuilder builder(copies[i]);
        BcastOp::create(
            builder, copies[i].getLoc(), src.buffer, dst0.buffer, dst1.buffer,
            ValueRange(),
            builder.getDenseI64ArrayAttr({src.rank, src.offset, src.count,
                                          dst0.rank, dst0.offset, dst0.count,
                                          dst1.rank, dst1.offset, dst1.count}),
            IntegerAttr());
        used.insert(copies[i]);
        used.insert(copies[j]);
        copies[i].erase();
        copies[j].erase();
        break;
      }
    }
  }
};
} // namespace
