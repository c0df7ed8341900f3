//===- SyncOps.cpp - sdma ordering and synchronisation ops ----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The ordering ops of a schedule (sdma.fence, sdma.signal, sdma.wait,
// sdma.barrier) and the engine-level ones sdma-insert-sync creates
// (sdma.notify, sdma.poll).
//
//===----------------------------------------------------------------------===//

#include "OpFields.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace sdma;
using namespace sdma::detail;

//===----------------------------------------------------------------------===//
// FenceOp
//===----------------------------------------------------------------------===//

ParseResult FenceOp::parse(OpAsmParser &parser, OperationState &result) {
  FieldListParser fields;
  if (succeeded(parser.parseOptionalKeyword("on")) && fields.parseField(parser))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  return fields.finish<FenceOp>(parser, result);
}

void FenceOp::print(OpAsmPrinter &printer) {
  if (hasRank()) {
    printer << " on ";
    printField(printer, getField(0));
  }
  sdma::detail::printAttributes(printer, *this, {});
}

LogicalResult FenceOp::verify() {
  size_t numFields = getStaticFields().size();
  FailureOr<ScheduleOp> schedule =
      verifyFieldsAndParent(*this, numFields <= 1 ? numFields : 1);
  if (failed(schedule))
    return failure();
  if (hasRank())
    return verifyRank(*this, getField(0), schedule->getRanks(), "rank");
  return success();
}

//===----------------------------------------------------------------------===//
// SignalOp / WaitOp
//===----------------------------------------------------------------------===//

/// pair ::= field (`->` | `<-`) field (`tag` integer)?
static ParseResult parseRankPair(OpAsmParser &parser, OperationState &result,
                                 bool isWait) {
  FieldListParser fields;
  if (fields.parseField(parser))
    return failure();
  if (isWait) {
    if (parser.parseLess() || parser.parseMinus())
      return failure();
  } else if (parser.parseArrow()) {
    return failure();
  }
  if (fields.parseField(parser))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("tag"))) {
    int64_t tag = 0; // set by a successful parse; GCC cannot tell
    if (parser.parseInteger(tag))
      return failure();
    result.addAttribute("tag", parser.getBuilder().getI64IntegerAttr(tag));
  }
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  return isWait ? fields.finish<WaitOp>(parser, result)
                : fields.finish<SignalOp>(parser, result);
}

static void printRankPair(OpAsmPrinter &printer, FieldsOpInterface op,
                          int64_t tag, bool isWait) {
  printer << " ";
  printField(printer, op.getField(0));
  printer << (isWait ? " <- " : " -> ");
  printField(printer, op.getField(1));
  if (tag != 0)
    printer << " tag " << tag;
  sdma::detail::printAttributes(printer, op, {"tag"});
}

static LogicalResult verifyRankPair(Operation *op, int64_t tag, StringRef first,
                                    StringRef second) {
  FailureOr<ScheduleOp> schedule = verifyFieldsAndParent(op, 2);
  if (failed(schedule))
    return failure();
  auto fields = cast<FieldsOpInterface>(op);
  if (tag < 0)
    return op->emitOpError("tag ") << tag << " is negative";
  if (failed(verifyRank(op, fields.getConstantField(0), schedule->getRanks(),
                        first)) ||
      failed(verifyRank(op, fields.getConstantField(1), schedule->getRanks(),
                        second)))
    return failure();
  return success();
}

ParseResult SignalOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseRankPair(parser, result, /*isWait=*/false);
}
void SignalOp::print(OpAsmPrinter &printer) {
  printRankPair(printer, *this, getTag(), /*isWait=*/false);
}
LogicalResult SignalOp::verify() {
  return verifyRankPair(*this, getTag(), "signalling rank", "signalled rank");
}

ParseResult WaitOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseRankPair(parser, result, /*isWait=*/true);
}
void WaitOp::print(OpAsmPrinter &printer) {
  printRankPair(printer, *this, getTag(), /*isWait=*/true);
}
LogicalResult WaitOp::verify() {
  return verifyRankPair(*this, getTag(), "waiting rank", "awaited rank");
}

//===----------------------------------------------------------------------===//
// BarrierOp
//===----------------------------------------------------------------------===//

LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<ScheduleOp>())
    return emitOpError("must be nested in an 'sdma.schedule'");
  return success();
}

//===----------------------------------------------------------------------===//
// NotifyOp / PollOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyEngineOp(Operation *op, IntegerAttr rank,
                                    int64_t engine, int64_t flag) {
  auto schedule = op->getParentOfType<ScheduleOp>();
  if (!schedule)
    return op->emitOpError("must be nested in an 'sdma.schedule'");
  if (failed(verifyRank(op, rank, schedule.getRanks(), "rank")))
    return failure();
  if (engine < 0)
    return op->emitOpError("engine ") << engine << " is negative";
  if (flag < 0)
    return op->emitOpError("flag ") << flag << " is negative";
  return success();
}

LogicalResult NotifyOp::verify() {
  if (failed(verifyEngineOp(*this, getRankAttr(), getEngine(), getFlag())))
    return failure();
  if (getFlag() == 0)
    return emitOpError("notifies flag 0, the launch flag, which only the "
                       "host raises (flags from 1 up)");
  auto schedule = (*this)->getParentOfType<ScheduleOp>();
  return verifyRank(*this, getTargetAttr(), schedule.getRanks(), "target rank");
}

LogicalResult PollOp::verify() {
  if (failed(verifyEngineOp(*this, getRankAttr(), getEngine(), getFlag())))
    return failure();
  if (static_cast<int64_t>(getValue()) < 1)
    return emitOpError("value ")
           << static_cast<int64_t>(getValue()) << " is not positive";
  if (getFlag() == 0 && getValue() != 1)
    return emitOpError("polls the launch flag 0 for ")
           << static_cast<int64_t>(getValue())
           << ", but the host raises it to 1 (once per launch)";
  return success();
}
