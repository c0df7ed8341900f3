//===- TransferOps.cpp - sdma data-movement ops ---------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma.copy, sdma.bcast, sdma.swap and sdma.reduce: their syntax, the slices
// each reads and writes (TransferOpInterface), and the overlaps each forbids.
//
//===----------------------------------------------------------------------===//

#include "OpFields.h"

using namespace mlir;
using namespace sdma;
using namespace sdma::detail;

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

/// copy ::= `pull`? slice `->` slice attr-dict
ParseResult CopyOp::parse(OpAsmParser &parser, OperationState &result) {
  if (succeeded(parser.parseOptionalKeyword("pull")))
    result.addAttribute(getPullAttrName(result.name),
                        parser.getBuilder().getUnitAttr());
  return parseTransfer<CopyOp>(parser, result, {"->"});
}
void CopyOp::print(OpAsmPrinter &printer) {
  if (getPull())
    printer << " pull";
  printTransfer(printer, *this, {"->"}, {getPullAttrName()});
}
unsigned CopyOp::getNumSlices() { return 2; }
bool CopyOp::isSliceRead(unsigned i) { return i == 0; }
bool CopyOp::isSliceWritten(unsigned i) { return i == 1; }

LogicalResult CopyOp::verify() {
  if (failed(verifyTransfer(*this, {"source", "destination"})))
    return failure();
  std::optional<StaticSlice> src = getStaticSlice(*this, 0);
  std::optional<StaticSlice> dst = getStaticSlice(*this, 1);
  // A copy of a slice onto itself is a no-op (canonicalisation drops it);
  // any other overlap has no defined result.
  if (src && dst && !(*src == *dst) && src->overlaps(*dst))
    return emitOpError("source and destination overlap");
  return success();
}

//===----------------------------------------------------------------------===//
// BcastOp
//===----------------------------------------------------------------------===//

ParseResult BcastOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseTransfer<BcastOp>(parser, result, {"->", ","});
}
void BcastOp::print(OpAsmPrinter &printer) {
  printTransfer(printer, *this, {"->", ","});
}
unsigned BcastOp::getNumSlices() { return 3; }
bool BcastOp::isSliceRead(unsigned i) { return i == 0; }
bool BcastOp::isSliceWritten(unsigned i) { return i != 0; }

LogicalResult BcastOp::verify() {
  if (failed(
          verifyTransfer(*this, {"source", "destination 0", "destination 1"})))
    return failure();
  if (failed(verifyNoOverlap(*this, 1, 2, "destinations overlap")) ||
      failed(
          verifyNoOverlap(*this, 0, 1, "destination 0 overlaps the source")) ||
      failed(verifyNoOverlap(*this, 0, 2, "destination 1 overlaps the source")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// SwapOp
//===----------------------------------------------------------------------===//

ParseResult SwapOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseTransfer<SwapOp>(parser, result, {"<->"});
}
void SwapOp::print(OpAsmPrinter &printer) {
  printTransfer(printer, *this, {"<->"});
}
unsigned SwapOp::getNumSlices() { return 2; }
bool SwapOp::isSliceRead(unsigned) { return true; }
bool SwapOp::isSliceWritten(unsigned) { return true; }

LogicalResult SwapOp::verify() {
  if (failed(verifyTransfer(*this, {"first slice", "second slice"})))
    return failure();
  return verifyNoOverlap(*this, 0, 1, "swap slices overlap");
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

ArrayRef<StringRef> ReduceOp::getKinds() {
  static const StringRef kinds[] = {"sum", "max", "min", "prod"};
  return kinds;
}

/// reduce ::= kind slice `<-` slice attr-dict
ParseResult ReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  StringRef kind;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kind))
    return failure();
  if (!llvm::is_contained(getKinds(), kind))
    return parser.emitError(loc, "unknown reduction '")
           << kind << "' (expected sum, max, min or prod)";
  result.addAttribute(getKindAttrName(result.name),
                      parser.getBuilder().getStringAttr(kind));
  return parseTransfer<ReduceOp>(parser, result, {"<-"});
}
void ReduceOp::print(OpAsmPrinter &printer) {
  printer << " " << getKind();
  printTransfer(printer, *this, {"<-"}, {getKindAttrName()});
}
unsigned ReduceOp::getNumSlices() { return 2; }
bool ReduceOp::isSliceRead(unsigned) { return true; }
bool ReduceOp::isSliceWritten(unsigned i) { return i == 0; }

LogicalResult ReduceOp::verify() {
  if (failed(verifyTransfer(*this, {"destination", "source"})))
    return failure();
  if (!llvm::is_contained(getKinds(), getKind()))
    return emitOpError("unknown reduction '")
           << getKind() << "' (expected sum, max, min or prod)";
  auto schedule = (*this)->getParentOfType<ScheduleOp>();
  Type target = schedule.getBufferElementType(getTarget());
  Type source = schedule.getBufferElementType(getSource());
  for (auto [type, buffer] :
       {std::pair(target, getTarget()), std::pair(source, getSource())})
    if (!type)
      return emitOpError("needs typed buffers, but '")
             << schedule.getBufferName(buffer)
             << "' has no element type (declare it as, e.g., f32[ranks])";
  if (target != source)
    return emitOpError("combines '")
           << schedule.getBufferName(getSource()) << "' of " << source
           << " into '" << schedule.getBufferName(getTarget()) << "' of "
           << target << ": the element types differ";
  return verifyNoOverlap(*this, 0, 1, "source and destination overlap");
}
