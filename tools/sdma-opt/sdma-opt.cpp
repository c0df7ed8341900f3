//===- sdma-opt.cpp - sdma optimiser driver -------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "InputGuard.h"
#include "sdma/Conversion/Passes.h"
#include "sdma/IR/SdmaDialect.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/Pipelines.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  if (!sdma::checkToolInputs(argc, argv, {"-o", "--o"}))
    return 1;
  mlir::DialectRegistry registry;
  registry.insert<sdma::SdmaDialect, sdma::pkt::SdmaPktDialect,
                  mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                  mlir::index::IndexDialect, mlir::scf::SCFDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  sdma::registerSdmaPasses();
  sdma::registerSdmaConversionPasses();
  sdma::registerSdmaPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "sdma optimiser driver\n", registry));
}
