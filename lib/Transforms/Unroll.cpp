//===- Unroll.cpp - expand a parametric schedule for one rank count -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Partial evaluation: with the rank count fixed, every index value in a
// schedule body is a constant. The pass walks the body in program order,
// keeps the value of every index SSA value in an environment, runs loops and
// conditionals, and emits a copy of each sdma op with every field resolved
// to a constant. Evaluation uses the ops' own folders, so any foldable
// arith/affine/index computation works. `sdma.root` is the schedule's root,
// bound by the `root` option before the walk.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/IterationLoc.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/runtime/Limits.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

namespace sdma {
#define GEN_PASS_DEF_SDMAUNROLL
#include "sdma/Transforms/Passes.h.inc"
} // namespace sdma

using namespace mlir;
using namespace sdma;

namespace {

class ScheduleExpander {
public:
  ScheduleExpander(ScheduleOp schedule, int64_t ranks, int64_t maxOps)
      : schedule(schedule), ranks(ranks), maxOps(maxOps),
        builder(schedule.getContext()) {}

  LogicalResult run();

private:
  LogicalResult expandBlock(Block &block);
  LogicalResult expandOp(Operation *op);
  LogicalResult expandAffineFor(affine::AffineForOp op);
  LogicalResult expandScfFor(scf::ForOp op);
  LogicalResult emit(Operation *op);
  LogicalResult evaluate(Operation *op);
  FailureOr<int64_t> lookup(Operation *user, Value value);
  /// A field's value: its constant, or what its SSA value evaluated to.
  FailureOr<int64_t> resolve(Operation *user, OpFoldResult field) {
    if (auto value = dyn_cast<Value>(field))
      return lookup(user, value);
    return *getConstantIntValue(field);
  }
  FailureOr<int64_t> evaluateBound(Operation *op, AffineMap map,
                                   ValueRange operands, bool lower);
  LogicalResult runLoop(Operation *loop, Block &body, Value iv, int64_t lb,
                        int64_t ub, int64_t step);
  LogicalResult tick(Operation *op);

  ScheduleOp schedule;
  int64_t ranks;
  int64_t maxOps;
  OpBuilder builder;
  DenseMap<Value, int64_t> env;
  /// The enclosing loop iterations, outermost first.
  SmallVector<LoopIteration> iterations;
  int64_t emitted = 0;
  int64_t steps = 0;
};

} // namespace

LogicalResult ScheduleExpander::tick(Operation *op) {
  // Bounds the work of loops that emit nothing (or emit too much).
  if (++steps > 16 * maxOps)
    return op->emitOpError("unrolling evaluates more than ")
           << 16 * maxOps << " ops (raise max-ops if this is intended)";
  return success();
}

FailureOr<int64_t> ScheduleExpander::lookup(Operation *user, Value value) {
  auto it = env.find(value);
  if (it != env.end())
    return it->second;
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return user->emitOpError("uses a value that sdma-unroll cannot evaluate");
}

LogicalResult ScheduleExpander::run() {
  Block &body = schedule.getBody().front();
  env[schedule.getRankCountArg()] = ranks;
  SmallVector<Operation *> original =
      llvm::map_to_vector(body, [](Operation &op) { return &op; });
  builder.setInsertionPointToEnd(&body);

  // Attach the loop iterations to every error raised while expanding.
  ScopedDiagnosticHandler handler(
      schedule.getContext(), [&](Diagnostic &diag) -> LogicalResult {
        if (diag.getSeverity() == DiagnosticSeverity::Error)
          for (const LoopIteration &it : llvm::reverse(iterations))
            diag.attachNote(it.loop)
                << "in the iteration where this loop's index is " << it.index;
        return failure(); // let the next handler report it
      });

  for (Operation *op : original)
    if (failed(expandOp(op)))
      return failure();

  for (Operation *op : llvm::reverse(original)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}

LogicalResult ScheduleExpander::expandBlock(Block &block) {
  for (Operation &op : block)
    if (failed(expandOp(&op)))
      return failure();
  return success();
}

LogicalResult ScheduleExpander::expandOp(Operation *op) {
  if (failed(tick(op)))
    return failure();
  if (isa<affine::AffineYieldOp, scf::YieldOp>(op))
    return success();
  if (auto forOp = dyn_cast<affine::AffineForOp>(op))
    return expandAffineFor(forOp);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return expandScfFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return op->emitOpError("with results is not supported in a schedule");
    FailureOr<int64_t> cond = lookup(op, ifOp.getCondition());
    if (failed(cond))
      return failure();
    if (*cond != 0)
      return expandBlock(ifOp.getThenRegion().front());
    if (!ifOp.getElseRegion().empty())
      return expandBlock(ifOp.getElseRegion().front());
    return success();
  }
  if (auto root = dyn_cast<RootOp>(op)) {
    env[root.getResult()] = static_cast<int64_t>(*schedule.getRoot());
    return success();
  }
  if (auto local = dyn_cast<LocalRanksOp>(op)) {
    std::optional<int64_t> bound = schedule.getLocalRanks();
    if (!bound)
      return op->emitOpError("reads the ranks per node, but none is bound: "
                             "pass sdma-unroll local-ranks=G");
    env[local.getResult()] = *bound;
    return success();
  }
  if (auto experts = dyn_cast<ExpertsOp>(op)) {
    std::optional<int64_t> bound = schedule.getExpertCount();
    if (!bound)
      return op->emitOpError("reads the experts per rank, but none is bound: "
                             "pass sdma-unroll experts=E");
    env[experts.getResult()] = *bound;
    return success();
  }
  if (auto rankAdd = dyn_cast<RankAddOp>(op)) {
    FieldsOpInterface fields = rankAdd;
    SmallVector<int64_t> values;
    for (unsigned i = 0; i < 2; ++i) {
      OpFoldResult field = fields.getField(i);
      FailureOr<int64_t> value = resolve(op, field);
      if (failed(value))
        return failure();
      values.push_back(*value);
    }
    if (values[0] < 0 || values[0] >= ranks)
      return op->emitOpError("rank ")
             << values[0] << " is out of range [0, " << ranks << ")";
    int64_t delta = values[1] % ranks;
    env[rankAdd.getResult()] = ((values[0] + delta) % ranks + ranks) % ranks;
    return success();
  }
  if (isa<FieldsOpInterface>(op) || isa<BarrierOp>(op))
    return emit(op);
  if (op->getNumRegions() != 0)
    return op->emitOpError("is not supported by sdma-unroll (use affine.for, "
                           "scf.for or scf.if)");
  return evaluate(op);
}

LogicalResult ScheduleExpander::evaluate(Operation *op) {
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    FailureOr<int64_t> value = lookup(op, operand);
    if (failed(value))
      return failure();
    operands.push_back(IntegerAttr::get(operand.getType(), *value));
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) ||
      results.size() != op->getNumResults())
    return op->emitOpError("cannot be evaluated by sdma-unroll");
  for (auto [result, folded] : llvm::zip(op->getResults(), results)) {
    if (auto value = dyn_cast<Value>(folded)) {
      FailureOr<int64_t> known = lookup(op, value);
      if (failed(known))
        return failure();
      env[result] = *known;
      continue;
    }
    auto attr = dyn_cast<IntegerAttr>(cast<Attribute>(folded));
    if (!attr)
      return op->emitOpError("does not evaluate to an integer");
    APInt bits = attr.getValue();
    env[result] =
        bits.getBitWidth() == 1 ? bits.getZExtValue() : bits.getSExtValue();
  }
  return success();
}

FailureOr<int64_t> ScheduleExpander::evaluateBound(Operation *op, AffineMap map,
                                                   ValueRange operands,
                                                   bool lower) {
  SmallVector<Attribute> attrs;
  for (Value operand : operands) {
    FailureOr<int64_t> value = lookup(op, operand);
    if (failed(value))
      return failure();
    attrs.push_back(builder.getIndexAttr(*value));
  }
  SmallVector<Attribute> results;
  if (failed(map.constantFold(attrs, results)) || results.empty())
    return op->emitOpError("has a bound that cannot be evaluated");
  int64_t bound = cast<IntegerAttr>(results[0]).getInt();
  for (Attribute result : ArrayRef(results).drop_front()) {
    int64_t value = cast<IntegerAttr>(result).getInt();
    bound = lower ? std::max(bound, value) : std::min(bound, value);
  }
  return bound;
}

LogicalResult ScheduleExpander::runLoop(Operation *loop, Block &body, Value iv,
                                        int64_t lb, int64_t ub, int64_t step) {
  if (step <= 0)
    return loop->emitOpError("step ") << step << " is not positive";
  for (int64_t i = lb; i < ub;) {
    env[iv] = i;
    iterations.push_back({loop->getLoc(), i});
    LogicalResult result = expandBlock(body);
    iterations.pop_back();
    if (failed(result))
      return failure();
    if (llvm::AddOverflow(i, step, i))
      break;
  }
  return success();
}

LogicalResult ScheduleExpander::expandAffineFor(affine::AffineForOp op) {
  if (op.getNumResults() != 0)
    return op->emitOpError("with iter_args is not supported in a schedule");
  FailureOr<int64_t> lb = evaluateBound(op, op.getLowerBoundMap(),
                                        op.getLowerBoundOperands(), true);
  FailureOr<int64_t> ub = evaluateBound(op, op.getUpperBoundMap(),
                                        op.getUpperBoundOperands(), false);
  if (failed(lb) || failed(ub))
    return failure();
  return runLoop(op, *op.getBody(), op.getInductionVar(), *lb, *ub,
                 op.getStepAsInt());
}

LogicalResult ScheduleExpander::expandScfFor(scf::ForOp op) {
  if (op.getNumResults() != 0)
    return op->emitOpError("with iter_args is not supported in a schedule");
  FailureOr<int64_t> lb = lookup(op, op.getLowerBound());
  FailureOr<int64_t> ub = lookup(op, op.getUpperBound());
  FailureOr<int64_t> step = lookup(op, op.getStep());
  if (failed(lb) || failed(ub) || failed(step))
    return failure();
  return runLoop(op, *op.getBody(), op.getInductionVar(), *lb, *ub, *step);
}

LogicalResult ScheduleExpander::emit(Operation *op) {
  if (++emitted > maxOps)
    return op->emitOpError("unrolling creates more than ")
           << maxOps << " ops (raise max-ops if this is intended)";
  SmallVector<Value> buffers;
  SmallVector<int64_t> statics;
  if (auto fields = dyn_cast<FieldsOpInterface>(op)) {
    ArrayRef<int64_t> original = fields.getStaticFields();
    for (unsigned i = 0, e = original.size(); i < e; ++i) {
      OpFoldResult field = fields.getField(i);
      FailureOr<int64_t> value = resolve(op, field);
      if (failed(value))
        return failure();
      if (ShapedType::isDynamic(*value))
        return op->emitOpError("field ") << i << " evaluates out of range";
      statics.push_back(*value);
    }
    llvm::append_range(buffers,
                       op->getOperands().drop_back(fields.getFields().size()));
  }
  Operation *copy = builder.cloneWithoutRegions(*op);
  copy->setLoc(withIterations(op->getLoc(), iterations));
  if (isa<FieldsOpInterface>(op)) {
    copy->setOperands(buffers);
    cast<FieldsOpInterface>(copy).setStaticFields(statics);
  }
  // Check the op now, while the diagnostic handler can name the iteration.
  return mlir::verify(copy);
}

namespace {
struct SdmaUnrollPass : public sdma::impl::SdmaUnrollBase<SdmaUnrollPass> {
  using SdmaUnrollBase::SdmaUnrollBase;

  /// Binds `experts` and `major-align` (each may be the schedule's own);
  /// a schedule sized in experts needs E.
  LogicalResult bindExperts(ScheduleOp schedule) {
    auto bind = [&](StringRef option, int64_t given, std::optional<int64_t> own,
                    int64_t limit, auto set) -> LogicalResult {
      if (given == 0)
        return success();
      if (own && *own != given)
        return schedule.emitOpError("fixes ")
               << option << " " << *own << " but sdma-unroll was given "
               << option << "=" << given;
      if (given < 1 || given > limit)
        return schedule.emitOpError("")
               << option << "=" << given << " is out of range [1, " << limit
               << "] (sdma-unroll's " << option << " option)";
      set(static_cast<uint64_t>(given));
      return success();
    };
    if (failed(bind("experts", experts, schedule.getExpertCount(), kMaxExperts,
                    [&](uint64_t v) { schedule.setExperts(v); })) ||
        failed(bind("major-align", majorAlign, schedule.getMajorAlign(),
                    int64_t(1) << 20,
                    [&](uint64_t v) { schedule.setMajorAlign(v); })))
      return failure();
    if (!schedule.getExpertCount())
      for (BlockArgument buffer : schedule.getBufferArgs())
        if (schedule.getBufferSize(buffer).first < 0)
          return schedule.emitOpError("sizes buffer '")
                 << schedule.getBufferName(buffer)
                 << "' in experts, but none is bound: pass sdma-unroll "
                    "experts=E";
    return success();
  }

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>()) {
      std::optional<int64_t> own = schedule.getRanks();
      if (own && ranks != 0 && *own != ranks) {
        schedule.emitOpError("fixes ")
            << *own << " ranks but sdma-unroll was given ranks="
            << static_cast<int64_t>(ranks);
        return signalPassFailure();
      }
      int64_t count = own.value_or(ranks);
      if (count < 1 || count > kMaxRanks) {
        if (count == 0)
          schedule.emitOpError("has no rank count: write ranks(%R = N) or "
                               "pass sdma-unroll ranks=N");
        else
          schedule.emitOpError("rank count ")
              << count << " is out of range [1, " << kMaxRanks << "]";
        return signalPassFailure();
      }
      if (root != -1) {
        // Bind the root before evaluating: sdma.root reads it.
        if (!schedule.getRoot()) {
          schedule.emitOpError("declares no root (`implements KIND(...) root "
                               "N`) but sdma-unroll was given root=")
              << static_cast<int64_t>(root);
          return signalPassFailure();
        }
        if (root < 0 || root >= count) {
          schedule.emitOpError("root ")
              << static_cast<int64_t>(root) << " is out of range [0, " << count
              << ") (sdma-unroll's root option)";
          return signalPassFailure();
        }
        schedule.setRoot(static_cast<uint64_t>(root));
      }
      if (localRanks != 0) {
        std::optional<int64_t> fixed = schedule.getLocalRanks();
        if (fixed && *fixed != localRanks) {
          schedule.emitOpError("fixes ")
              << *fixed << " ranks per node but sdma-unroll was given "
              << "local-ranks=" << static_cast<int64_t>(localRanks);
          return signalPassFailure();
        }
        if (localRanks < 1 || localRanks > count || count % localRanks != 0) {
          schedule.emitOpError("cannot have ")
              << static_cast<int64_t>(localRanks)
              << " ranks per node: " << count
              << " ranks are not a whole number of such nodes "
              << "(sdma-unroll's local-ranks option)";
          return signalPassFailure();
        }
        schedule.setLocalRanks(static_cast<uint64_t>(localRanks));
      }
      if (failed(bindExperts(schedule)))
        return signalPassFailure();
      // Fix the rank count first so that the emitted ops verify against it.
      schedule.setNumRanks(count);
      SmallVector<int64_t> sizes(schedule.getBufferSizes());
      for (unsigned i = 0; i + 1 < sizes.size(); i += 2) {
        if (sizes[i] < 0) // k x experts x ranks, E bound above
          sizes[i] = -sizes[i] * *schedule.getExpertCount();
        sizes[i + 1] += sizes[i] * count; // verified not to overflow
        sizes[i] = 0;
      }
      schedule.setBufferSizes(sizes);
      if (failed(ScheduleExpander(schedule, count, maxOps).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
