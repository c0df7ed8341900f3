//===- sdma-translate.cpp - sdma translation driver -----------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// mlir-translate's main, less the options sdma does not use, and without
// dumping the whole input in generic form on every diagnostic (mlir-translate
// forces that on; here --mlir-print-op-on-diagnostic turns it on).
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/Support/InputGuard.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/JSON.h"
#include "sdma/Target/MSCCL.h"
#include "sdma/Target/NodePlan.h"
#include "sdma/Target/Packets.h"
#include "sdma/Target/Plan.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

static cl::opt<std::string>
    inputFilename(cl::Positional, cl::desc("<input file>"), cl::init("-"));
static cl::opt<std::string> outputFilename("o", cl::desc("output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("translate each chunk of the input between '// -----' lines "
             "separately"));
static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("check the diagnostics against the expected-* comments of the "
             "input"));

static const llvm::StringRef kShownOptions[] = {"sdma-to-plan",
                                                "o",
                                                "split-input-file",
                                                "verify-diagnostics",
                                                "mlir-print-op-on-diagnostic",
                                                "help",
                                                "help-list",
                                                "version",
                                                "sdma-translate-unverified",
                                                "msccl-type",
                                                "msccl-reduce-op"};

/// Runs `translation` on one buffer (the whole input or one chunk).
static mlir::LogicalResult translate(const mlir::Translation &translation,
                                     std::unique_ptr<llvm::MemoryBuffer> buffer,
                                     llvm::raw_ostream &os) {
  // Translations read a null-terminated buffer; a chunk may not be one.
  if (!buffer->getBuffer().ends_with('\0'))
    buffer = llvm::MemoryBuffer::getMemBufferCopy(
        buffer->getBuffer(), buffer->getBufferIdentifier());
  mlir::MLIRContext context;
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  if (verifyDiagnostics) {
    context.printOpOnDiagnostic(false);
    mlir::SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
    (void)translation(sourceMgr, os, &context);
    return handler.verify();
  }
  mlir::SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
  return translation(sourceMgr, os, &context);
}

int main(int argc, char **argv) {
  sdma::tuneAllocator();
  llvm::InitLLVM init(argc, argv);
  if (!sdma::checkToolInputs(argc, argv, {"-o", "--o"}))
    return 1;
  sdma::registerToHIPTranslation();
  sdma::registerToJSONTranslation();
  sdma::registerImportMscclXmlTranslation();
  sdma::registerToMscclXmlTranslation();
  sdma::registerImportMscclppJsonTranslation();
  sdma::registerToPlanTranslation();
  sdma::registerToNodePlanTranslation();
  sdma::registerToPacketsTranslation();
  cl::opt<const mlir::Translation *, false, mlir::TranslationParser>
      translation("", cl::desc("Translation to perform"));
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerTranslationCLOptions();
  sdma::setBoolOptionDefault("mlir-print-op-on-diagnostic", false);
  sdma::showOnlyOptions(kShownOptions);
  sdma::addShortHelpAlias();
  sdma::installVersionPrinter("sdma-translate");
  if (!sdma::parseCommandLine(argc, argv, "sdma translation driver\n"))
    return 2;
  if (!translation) {
    llvm::errs() << "sdma-translate: error: no translation given (--help "
                    "lists them: --sdma-to-plan, --sdma-to-json, ...)\n";
    return 2;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  std::unique_ptr<llvm::ToolOutputFile> output =
      input ? mlir::openOutputFile(outputFilename, &error) : nullptr;
  if (!output) {
    llvm::errs() << "sdma-translate: error: " << error << "\n";
    return 1;
  }
  auto translateChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                            llvm::raw_ostream &os) {
    return translate(*translation, std::move(chunk), os);
  };
  if (mlir::failed(mlir::splitAndProcessBuffer(
          std::move(input), translateChunk, output->os(),
          splitInputFile ? mlir::kDefaultSplitMarker : "")))
    return 1;
  output->keep();
  return 0;
}
