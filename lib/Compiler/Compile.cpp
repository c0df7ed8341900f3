//===- Compile.cpp - one entry point from schedule text to artifacts ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Compiler/Compile.h"

#include "InputGuard.h"
#include "sdma/Analysis/ScheduleVerifier.h"
#include "sdma/Conversion/Passes.h"
#include "sdma/IR/SdmaDialect.h"
#include "sdma/IR/SdmaOps.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/Packets.h"
#include "sdma/Target/Plan.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/Pipelines.h"
#include "sdmapkt/IR/SdmaPkt.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>

using namespace mlir;

namespace sdma {

std::vector<std::string> dmaVariants() {
  std::vector<std::string> variants;
  for (llvm::StringRef variant : getDMAVariants())
    variants.push_back(variant.str());
  return variants;
}

std::vector<std::string> sdmaTargets() {
  std::vector<std::string> names;
  for (const pkt::TargetProfile &profile : pkt::targetProfiles())
    names.push_back(profile.name.str());
  return names;
}

struct Compiler::Impl {
  explicit Impl(bool threading)
      : context(registry(), threading ? MLIRContext::Threading::ENABLED
                                      : MLIRContext::Threading::DISABLED) {
    context.loadAllAvailableDialects();
    context.printOpOnDiagnostic(false);
  }
  static DialectRegistry registry() {
    DialectRegistry registry;
    registry
        .insert<SdmaDialect, pkt::SdmaPktDialect, affine::AffineDialect,
                arith::ArithDialect, index::IndexDialect, scf::SCFDialect>();
    return registry;
  }
  MLIRContext context;
};

namespace {

/// MLIR's file:line:col formatting, callable per diagnostic.
class Formatter : public SourceMgrDiagnosticHandler {
public:
  using SourceMgrDiagnosticHandler::emitDiagnostic;
  using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
};

/// While alive, formats every diagnostic as MLIR's tools do (file, line,
/// column, caret) and hands it to the options' sink or to `collected`.
class DiagnosticSink {
public:
  DiagnosticSink(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                 const CompileOptions &options, std::string &collected)
      : stream(text), formatter(sourceMgr, context, stream),
        forward(context, [this, &options, &collected](Diagnostic &diag) {
          formatter.emitDiagnostic(diag);
          stream.flush();
          if (options.diagnostics)
            options.diagnostics(text);
          else
            collected += text;
          text.clear();
          return success();
        }) {}

private:
  std::string text;
  llvm::raw_string_ostream stream;
  Formatter formatter;
  ScopedDiagnosticHandler forward;
};

/// While alive, swallows every diagnostic and keeps the first line of the
/// first error, with where it points: why a variant is skipped, in one line.
class FirstError : public ScopedDiagnosticHandler {
public:
  explicit FirstError(MLIRContext *context) : ScopedDiagnosticHandler(context) {
    setHandler([this](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error || !reason.empty())
        return success();
      reason = llvm::StringRef(diag.str()).split('\n').first.str();
      if (auto file =
              LocationAttr(diag.getLocation()).findInstanceOf<FileLineColLoc>())
        reason += (" (" + file.getFilename().getValue() + ":" +
                   llvm::Twine(file.getLine()) + ":" +
                   llvm::Twine(file.getColumn()) + ")")
                      .str();
      return success();
    });
  }
  std::string reason;
};

/// The stages of one compile.
class Compilation {
public:
  Compilation(MLIRContext &context, llvm::SourceMgr &sourceMgr,
              const CompileOptions &options, Artifacts &out)
      : context(context), sourceMgr(sourceMgr), options(options), out(out) {}

  /// Parses, proves and emits the load/store kernel; false after setting
  /// out.error.
  bool front(std::string_view text);
  /// Compiles the DMA variants by the options' policy.
  bool variants();

private:
  void progress(const std::string &line) {
    if (options.progress)
      options.progress(line);
  }
  bool fail(std::string error, bool diagnosed) {
    out.error = std::move(error);
    out.diagnosed = diagnosed;
    return false;
  }
  /// One variant; `quiet`: diagnostics swallowed, *reason says why it failed.
  std::optional<VariantArtifacts> variant(llvm::StringRef name,
                                          std::string *reason);
  std::optional<std::string> packets(ModuleOp engineLevel);

  MLIRContext &context;
  llvm::SourceMgr &sourceMgr;
  const CompileOptions &options;
  Artifacts &out;
  OwningOpRef<ModuleOp> module;
};

bool Compilation::front(std::string_view text) {
  progress("parsing and verifying " + options.bufferName);
  OwningOpRef<ModuleOp> flat;
  {
    // MLIR's parser recurses per nesting level: refuse deep input first.
    std::string guard;
    llvm::raw_string_ostream guardStream(guard);
    if (!checkInputNesting(llvm::StringRef(text.data(), text.size()),
                           options.bufferName, kMaxInputNesting, guardStream)) {
      guardStream.flush();
      if (options.diagnostics)
        options.diagnostics(guard);
      else
        out.diagnostics += guard;
      return fail("'" + options.bufferName + "' nests too deeply", true);
    }
  }
  module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return fail("'" + options.bufferName + "' does not parse", true);
  auto schedules = module->getOps<ScheduleOp>();
  if (size_t n = llvm::range_size(schedules); n != 1)
    return fail("'" + options.bufferName + "' holds " + std::to_string(n) +
                    " sdma.schedule ops; expected exactly one",
                false);
  ScheduleOp schedule = *schedules.begin();
  out.schedule = schedule.getSymName().str();
  if (!options.ranks && !schedule.getRanks()) {
    out.ranksOpen = true;
    return fail("schedule '" + out.schedule +
                    "' leaves its rank count open (ranks(%R))",
                false);
  }
  // The flat, proved schedule; the load/store kernel comes from it.
  PassManager pm(&context);
  SdmaUnrollOptions unroll;
  unroll.ranks = options.ranks.value_or(0);
  if (options.maxOps)
    unroll.maxOps = options.maxOps;
  pm.addPass(createSdmaUnroll(unroll));
  flat = module->clone();
  FailureOr<VerifyReport> proved = failure();
  ScheduleOp flatSchedule;
  if (succeeded(pm.run(*flat))) {
    flatSchedule = *flat->getOps<ScheduleOp>().begin();
    proved = verifySchedule(flatSchedule);
  }
  if (failed(proved))
    return fail("'" + options.bufferName + "' did not compile", true);
  out.ranks = proved->ranks;
  out.proof = proved->summary(flatSchedule);
  out.runtimeCounts = !flatSchedule.getBody().getOps<CopyvOp>().empty();
  out.needsCompute = !flatSchedule.getBody().getOps<sdma::ReduceOp>().empty();
  out.reduction = proved->reduction.value_or("");
  out.declaresCollective = proved->collective.has_value();
  if (options.ldst) {
    llvm::raw_string_ostream hip(out.ldstProgram);
    if (failed(translateToHIP(*flat, hip)))
      return fail("'" + options.bufferName +
                      "': translation to a load/store kernel failed",
                  true);
  }
  return true;
}

std::optional<std::string> Compilation::packets(ModuleOp engineLevel) {
  PassManager pm(&context);
  ConvertSdmaToSdmaPktOptions convert;
  convert.completion = options.packetCompletion;
  if (!options.sdmaTarget.empty())
    convert.target = options.sdmaTarget;
  convert.maxChunkBytes = options.maxChunkBytes;
  if (options.maxPacketBytes)
    convert.maxPacketBytes = options.maxPacketBytes;
  convert.timestamps = options.packetTimestamps;
  pm.addPass(createConvertSdmaToSdmaPkt(convert));
  OwningOpRef<ModuleOp> lowered(engineLevel.clone());
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(pm.run(*lowered)) || failed(translateToPackets(*lowered, os)))
    return std::nullopt;
  return text;
}

std::optional<VariantArtifacts> Compilation::variant(llvm::StringRef name,
                                                     std::string *reason) {
  std::optional<FirstError> quiet;
  if (reason)
    quiet.emplace(&context);
  auto failed = [&](const std::string &why) -> std::optional<VariantArtifacts> {
    if (reason)
      *reason = quiet->reason.empty() ? why : quiet->reason;
    return std::nullopt;
  };
  progress("compiling variant " + name.str());
  OwningOpRef<ModuleOp> engineLevel(module->clone());
  PassManager pm(&context);
  LowerToDMAOptions lower;
  lower.ranks = options.ranks.value_or(0);
  lower.variant = name.str();
  lower.prelaunch = options.prelaunch;
  lower.engines = options.engines;
  if (options.maxOps)
    lower.maxOps = options.maxOps;
  if (name == options.failVariantForTesting)
    lower.maxOps = 1;
  if (mlir::failed(buildLowerToDMAPipeline(pm, lower)) ||
      mlir::failed(pm.run(*engineLevel)))
    return failed("a pass failed");
  VariantArtifacts artifacts;
  artifacts.variant = name.str();
  llvm::raw_string_ostream plan(artifacts.plan);
  if (mlir::failed(translateToPlan(*engineLevel, plan)))
    return failed("the plan translation failed");
  bool wantPackets = options.packets == CompileOptions::Packets::All ||
                     (options.packets == CompileOptions::Packets::Primary &&
                      out.variants.empty());
  if (wantPackets) {
    progress("lowering variant " + name.str() + " to SDMA packets");
    std::optional<std::string> text = packets(*engineLevel);
    if (!text)
      return failed("lowering to SDMA packets failed");
    artifacts.packets = std::move(*text);
  }
  return artifacts;
}

bool Compilation::variants() {
  using Policy = CompileOptions::VariantPolicy;
  // Counts read at run time have no DMA plan (sdma-assign-engines says
  // why); the load/store kernel is the program.
  if (out.runtimeCounts && options.ldst) {
    for (const std::string &name : options.variants)
      out.skipped.push_back(
          {name, "the schedule reads counts at run time (sdma.copyv); DMA "
                 "plans need every size when they are built"});
    return true;
  }
  // Reductions need compute units: the load/store kernel adds.
  if (out.needsCompute && options.ldst) {
    for (const std::string &name : options.variants)
      out.skipped.push_back(
          {name, "the schedule reduces (sdma.reduce) and DMA engines cannot "
                 "add; the load/store kernel does the arithmetic"});
    return true;
  }
  if (options.packets != CompileOptions::Packets::None &&
      !options.sdmaTarget.empty() &&
      !pkt::findTargetProfile(options.sdmaTarget))
    return fail("unknown SDMA target '" + options.sdmaTarget + "' (" +
                    pkt::targetNameList() + ")",
                false);
  for (const std::string &name : options.variants) {
    if (!llvm::is_contained(getDMAVariants(), name))
      return fail("unknown DMA variant '" + name +
                      "' (pcpy, bcst, swap or b2b)",
                  false);
    bool quiet = options.policy != Policy::Each;
    std::string reason;
    std::optional<VariantArtifacts> one =
        variant(name, quiet ? &reason : nullptr);
    if (!one) {
      if (!quiet)
        return fail("variant " + name + " of '" + options.bufferName +
                        "' did not compile",
                    true);
      out.skipped.push_back({name, reason});
      continue;
    }
    out.variants.push_back(std::move(*one));
    if (options.policy == Policy::FirstThatCompiles)
      break;
  }
  if (out.variants.empty())
    return fail("no DMA variant of '" + options.bufferName + "' compiled",
                false);
  return true;
}

} // namespace

Compiler::Compiler(bool threading) : impl_(std::make_unique<Impl>(threading)) {}
Compiler::~Compiler() = default;

Artifacts Compiler::compile(std::string_view text,
                            const CompileOptions &options) {
  Artifacts out;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(text.data(), text.size()), options.bufferName),
      llvm::SMLoc());
  DiagnosticSink sink(sourceMgr, &impl_->context, options, out.diagnostics);
  Compilation compilation(impl_->context, sourceMgr, options, out);
  out.ok = compilation.front(text) && compilation.variants();
  return out;
}

Artifacts compile(std::string_view text, const CompileOptions &options) {
  return Compiler().compile(text, options);
}

} // namespace sdma
