//===- SdmaCanonicalization.cpp - sdma canonicalisation patterns ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// - fold-constant-fields: a field operand defined by a constant becomes a
//   static field (dialect-wide, for every op with fields);
// - erase-self-copy: a copy of a slice onto itself does nothing.
// Merging abutting copies needs the whole stretch (a pattern would scan it
// from every copy): the sdma-merge-copies pass.
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
      op.setStaticFields(statics);
    });
    return success();
  }
};

struct EraseSelfCopy : public OpRewritePattern<CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CopyOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<StaticSlice> src = getStaticSlice(op, 0);
    std::optional<StaticSlice> dst = getStaticSlice(op, 1);
    if (!src || !dst)
      return rewriter.notifyMatchFailure(op, "slices are not static");
    if (!(*src == *dst))
      return rewriter.notifyMatchFailure(op, "source is not the destination");
    rewriter.eraseOp(op);
    return success();
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
}
