//===- SdmaDialect.cpp - sdma dialect -------------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaDialect.h"
#include "sdma/IR/SdmaOps.h"
#include "sdma/IR/SdmaTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sdma;

#include "sdma/IR/SdmaDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "sdma/IR/SdmaTypes.cpp.inc"

void SdmaDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sdma/IR/SdmaOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "sdma/IR/SdmaTypes.cpp.inc"
      >();
}

Operation *SdmaDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (auto intAttr = dyn_cast<IntegerAttr>(value); intAttr && type.isIndex())
    return arith::ConstantIndexOp::create(builder, loc, intAttr.getInt());
  return nullptr;
}
