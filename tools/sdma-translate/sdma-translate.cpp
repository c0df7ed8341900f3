//===- sdma-translate.cpp - sdma translation driver -----------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "InputGuard.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/JSON.h"
#include "sdma/Target/Packets.h"
#include "sdma/Target/Plan.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  if (!sdma::checkToolInputs(argc, argv, {"-o", "--o"}))
    return 1;
  sdma::registerToHIPTranslation();
  sdma::registerToJSONTranslation();
  sdma::registerToPlanTranslation();
  sdma::registerToPacketsTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "sdma translation driver\n"));
}
