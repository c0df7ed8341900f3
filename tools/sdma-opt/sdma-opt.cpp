//===- sdma-opt.cpp - sdma optimiser driver -------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/Conversion/Passes.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Support/InputGuard.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"

#include <set>

namespace sdma::test {
void registerTestScheduleGraphPass();
} // namespace sdma::test

/// The options --help shows: the passes and pipelines (one option holds them
/// all), then what a user combines them with. --help-hidden lists the rest.
static const llvm::StringRef kShownOptions[] = {"sdma-unroll",
                                                "o",
                                                "split-input-file",
                                                "verify-diagnostics",
                                                "pass-pipeline",
                                                "dump-pass-pipeline",
                                                "show-dialects",
                                                "mlir-print-ir-after-all",
                                                "mlir-print-ir-before-all",
                                                "mlir-print-ir-after-failure",
                                                "mlir-print-op-generic",
                                                "mlir-print-debuginfo",
                                                "mlir-print-op-on-diagnostic",
                                                "mlir-pass-statistics",
                                                "mlir-timing",
                                                "help",
                                                "help-list",
                                                "version"};

/// Every registered pass and pipeline with its options at their defaults,
/// in the form a command line takes them.
static std::string describePassDefaults() {
  std::string text = "\nPasses and pipelines, every option at its default:\n";
  llvm::raw_string_ostream os(text);
  std::set<std::string> names;
  for (auto &entry : llvm::cl::getRegisteredOptions())
    if (mlir::PassInfo::lookup(entry.first) ||
        mlir::PassPipelineInfo::lookup(entry.first))
      names.insert(entry.first.str());
  auto ignore = [](const llvm::Twine &) { return mlir::failure(); };
  for (const std::string &name : names) {
    // Options print as `{a=1 b=2}`; a command line takes `--name="a=1 b=2"`.
    std::string braced;
    llvm::raw_string_ostream bs(braced);
    mlir::OpPassManager pm;
    if (name == "sdma-lower-dma") {
      sdma::LowerToDMAOptions().print(bs);
    } else if (const mlir::PassInfo *pass = mlir::PassInfo::lookup(name)) {
      if (succeeded(pass->addToPipeline(pm, "", ignore)) && pm.size() == 1) {
        pm.begin()->printAsTextualPipeline(bs);
        braced = llvm::StringRef(braced).drop_front(name.size()).str();
      }
    }
    llvm::StringRef options = braced;
    os << "  --" << name;
    if (options.consume_front("{") && options.consume_back("}")) {
      // Empty list options print as nothing between spaces.
      llvm::SmallVector<llvm::StringRef> words;
      options.split(words, ' ', -1, /*KeepEmpty=*/false);
      os << "=\"" << llvm::join(words, " ") << "\"";
    }
    os << "\n";
  }
  return text;
}

// The two options mlir::parseCLIOptions defines.
static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input file>"),
                                                llvm::cl::init("-"));
static llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Output filename"),
                   llvm::cl::value_desc("filename"), llvm::cl::init("-"));

int main(int argc, char **argv) {
  sdma::tuneAllocator();
  if (!sdma::checkToolInputs(argc, argv, {"-o", "--o"}))
    return 1;
  mlir::DialectRegistry registry;
  sdma::registerAllDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  sdma::registerSdmaPasses();
  sdma::registerSdmaConversionPasses();
  sdma::registerSdmaPipelines();
  // Test passes (test/lib), as mlir-opt registers its own.
  sdma::test::registerTestScheduleGraphPass();
  std::string helpHeader =
      mlir::registerCLIOptions("sdma optimiser driver\n", registry);
  // Diagnostics are one line plus notes: the failing op is not dumped.
  sdma::setBoolOptionDefault("mlir-print-op-on-diagnostic", false);
  sdma::showOnlyOptions(kShownOptions);
  sdma::addShortHelpAlias();
  sdma::addHelpText(describePassDefaults());
  sdma::installVersionPrinter("sdma-opt");
  // mlir::parseCLIOptions, with a bad option or value one line and exit 2
  // as in the other tools (LLVM's parser would exit 1).
  if (!sdma::parseCommandLine(argc, argv, helpHeader))
    return 2;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
