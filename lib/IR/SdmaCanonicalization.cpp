//===- SdmaCanonicalization.cpp - sdma canonicalisation patterns ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// - fold-constant-fields: a field operand defined by a constant becomes a
//   static field (dialect-wide, for every op with fields);
// - erase-self-copy: a copy of a slice onto itself does nothing;
// - merge-contiguous-copies: two copies between the same pair of buffers
//   and ranks whose source and destination slices both abut become one.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace sdma;

namespace {

struct FoldConstantFields
    : public OpInterfaceRewritePattern<FieldsOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(FieldsOpInterface op,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> statics(op.getStaticFields());
    SmallVector<Value> dynamics;
    bool changed = false;
    unsigned dynamicIndex = 0;
    for (int64_t &field : statics) {
      if (!ShapedType::isDynamic(field))
        continue;
      Value value = op.getFields()[dynamicIndex++];
      APInt constant;
      if (matchPattern(value, m_ConstantInt(&constant)) &&
          !ShapedType::isDynamic(constant.getSExtValue())) {
        field = constant.getSExtValue();
        changed = true;
      } else {
        dynamics.push_back(value);
      }
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no constant field operands");
    // Field operands come last; everything before them (buffers) stays.
    SmallVector<Value> operands(
        op->getOperands().drop_back(op.getFields().size()));
    llvm::append_range(operands, dynamics);
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperands(operands);
      op->setAttr("static_fields", rewriter.getDenseI64ArrayAttr(statics));
    });
    return success();
  }
};

struct EraseSelfCopy : public OpRewritePattern<CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CopyOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<StaticSlice> src = getStaticSlice(op.getSourceSlice());
    std::optional<StaticSlice> dst = getStaticSlice(op.getTargetSlice());
    if (!src || !dst)
      return rewriter.notifyMatchFailure(op, "slices are not static");
    if (!(*src == *dst))
      return rewriter.notifyMatchFailure(op, "source is not the destination");
    rewriter.eraseOp(op);
    return success();
  }
};

/// Copies that a rank issues between two ordering points run concurrently,
/// so two copies from that stretch can be merged regardless of their order.
/// The scan stops at the first op that is not a data transfer. Copies on an
/// engine are ordered with the engine's other ops (sdma's engine order), so
/// moving one would change the schedule's meaning: they are left alone.
struct MergeContiguousCopies : public OpRewritePattern<CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CopyOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<StaticSlice> src = getStaticSlice(op.getSourceSlice());
    std::optional<StaticSlice> dst = getStaticSlice(op.getTargetSlice());
    if (!src || !dst)
      return rewriter.notifyMatchFailure(op, "slices are not static");
    // Within one buffer on one rank, a merged copy could read what it
    // writes: leave those alone.
    if (src->buffer == dst->buffer && src->rank == dst->rank)
      return rewriter.notifyMatchFailure(op, "copy within one buffer");
    if (op.getEngine())
      return rewriter.notifyMatchFailure(op, "copy on an engine (ordered)");
    for (Operation *next = op->getNextNode(); next;
         next = next->getNextNode()) {
      if (!isa<TransferOpInterface>(next))
        break;
      auto other = dyn_cast<CopyOp>(next);
      if (!other || other.getEngine())
        continue;
      std::optional<StaticSlice> otherSrc =
          getStaticSlice(other.getSourceSlice());
      std::optional<StaticSlice> otherDst =
          getStaticSlice(other.getTargetSlice());
      if (!otherSrc || !otherDst || otherSrc->buffer != src->buffer ||
          otherSrc->rank != src->rank || otherDst->buffer != dst->buffer ||
          otherDst->rank != dst->rank)
        continue;
      // `op` then `other`, or `other` then `op`, in memory.
      bool after = otherSrc->offset == src->offset + src->count &&
                   otherDst->offset == dst->offset + dst->count;
      bool before = src->offset == otherSrc->offset + otherSrc->count &&
                    dst->offset == otherDst->offset + otherDst->count;
      if (!after && !before)
        continue;
      int64_t count = src->count + otherSrc->count;
      int64_t srcOffset = after ? src->offset : otherSrc->offset;
      int64_t dstOffset = after ? dst->offset : otherDst->offset;
      rewriter.modifyOpInPlace(op, [&] {
        op.setStaticFields(
            {src->rank, srcOffset, count, dst->rank, dstOffset, count});
      });
      rewriter.eraseOp(other);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no contiguous copy to merge");
  }
};

} // namespace

void SdmaDialect::getCanonicalizationPatterns(
    RewritePatternSet &results) const {
  results.add<FoldConstantFields>(getContext());
}

void CopyOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<EraseSelfCopy>(context);
  // Labelled so pipelines can leave it out: it scans the rest of a stretch
  // from every copy (quadratic in a stretch's copies).
  results.addWithLabel<MergeContiguousCopies>({"merge-contiguous-copies"},
                                              context);
}
