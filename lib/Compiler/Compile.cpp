//===- Compile.cpp - one entry point from schedule text to artifacts ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Compiler/Compile.h"

#include "sdma/Analysis/ScheduleVerifier.h"
#include "sdma/Conversion/Passes.h"
#include "sdma/IR/SdmaDialect.h"
#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Support/InputGuard.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/NodePlan.h"
#include "sdma/Target/Packets.h"
#include "sdma/Target/Plan.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/Pipelines.h"
#include "sdmapkt/IR/SdmaPkt.h"

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
    registerAllDialects(registry);
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
                 const ProgramOptions &options, std::string &collected)
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
              const ProgramOptions &options, Artifacts &out)
      : context(context), sourceMgr(sourceMgr), options(options), out(out) {}

  /// Parses, unrolls and proves, and emits the load/store kernel where
  /// `ldst`; false after setting out.error. Keeps the proved flat schedule
  /// for variants().
  bool front(std::string_view text, bool ldst);
  /// Compiles the DMA variants of `dma` by its policy, each from the flat
  /// schedule front() proved.
  bool variants(const CompileOptions &dma);

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
  /// One variant; `reason` set: diagnostics swallowed, *reason says why it
  /// failed. `last`: no variant follows, so it may take the flat schedule
  /// instead of a copy.
  std::optional<VariantArtifacts> variant(const CompileOptions &dma,
                                          llvm::StringRef name,
                                          std::string *reason, bool last);
  std::optional<std::string> packets(const CompileOptions &dma,
                                     ModuleOp engineLevel);

  MLIRContext &context;
  llvm::SourceMgr &sourceMgr;
  const ProgramOptions &options;
  Artifacts &out;
  /// The schedule as parsed, and unrolled and proved.
  OwningOpRef<ModuleOp> module, flat;
};

bool Compilation::front(std::string_view text, bool ldst) {
  progress("parsing and verifying " + options.bufferName);
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
  if (options.root && *options.root < 0) {
    schedule.emitOpError("root ")
        << *options.root << " is out of range [0, "
        << options.ranks.value_or(schedule.getRanks().value_or(0)) << ")";
    return fail("'" + options.bufferName + "' did not compile", true);
  }
  // The flat, proved schedule; the load/store kernel and every DMA variant
  // come from it.
  PassManager pm(&context);
  SdmaUnrollOptions unroll;
  unroll.ranks = options.ranks.value_or(0);
  unroll.root = options.root.value_or(-1);
  unroll.localRanks = options.localRanks.value_or(0);
  unroll.experts = options.experts.value_or(0);
  unroll.majorAlign = options.majorAlign.value_or(0);
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
  if (options.localRanks) {
    llvm::raw_string_ostream plan(out.nodePlan);
    if (failed(translateToNodePlan(*flat, plan)))
      return fail("'" + options.bufferName +
                      "' cannot be split across nodes of " +
                      std::to_string(*options.localRanks) + " ranks",
                  true);
    return true;
  }
  if (ldst) {
    llvm::raw_string_ostream hip(out.ldstProgram);
    if (failed(translateToHIP(*flat, hip)))
      return fail("'" + options.bufferName +
                      "': translation to a load/store kernel failed",
                  true);
  }
  return true;
}

std::optional<std::string> Compilation::packets(const CompileOptions &dma,
                                                ModuleOp engineLevel) {
  PassManager pm(&context);
  ConvertSdmaToSdmaPktOptions convert;
  convert.completion = dma.packetCompletion;
  if (!dma.sdmaTarget.empty())
    convert.target = dma.sdmaTarget;
  convert.maxChunkBytes = dma.maxChunkBytes;
  if (dma.maxPacketBytes)
    convert.maxPacketBytes = dma.maxPacketBytes;
  convert.timestamps = dma.packetTimestamps;
  pm.addPass(createConvertSdmaToSdmaPkt(convert));
  OwningOpRef<ModuleOp> lowered(engineLevel.clone());
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(pm.run(*lowered)) || failed(translateToPackets(*lowered, os)))
    return std::nullopt;
  return text;
}

std::optional<VariantArtifacts> Compilation::variant(const CompileOptions &dma,
                                                     llvm::StringRef name,
                                                     std::string *reason,
                                                     bool last) {
  std::optional<FirstError> quiet;
  if (reason)
    quiet.emplace(&context);
  auto failed = [&](const std::string &why) -> std::optional<VariantArtifacts> {
    if (reason)
      *reason = quiet->reason.empty() ? why : quiet->reason;
    return std::nullopt;
  };
  progress("compiling variant " + name.str());
  if (name == dma.failVariantForTesting) {
    // The test hook: unrolling the source again with a budget of one op
    // fails as any failing pass would, with the same diagnostics.
    PassManager unroll(&context);
    SdmaUnrollOptions one;
    one.ranks = options.ranks.value_or(0);
    one.root = options.root.value_or(-1);
    one.maxOps = 1;
    unroll.addPass(createSdmaUnroll(one));
    OwningOpRef<ModuleOp> source(module->clone());
    if (mlir::failed(unroll.run(*source)))
      return failed("a pass failed");
  }
  // The last variant lowers the proved schedule itself: one flat schedule
  // in memory rather than two.
  OwningOpRef<ModuleOp> engineLevel =
      last ? std::move(flat) : OwningOpRef<ModuleOp>(flat->clone());
  PassManager pm(&context);
  LowerToDMAOptions lower;
  lower.ranks = options.ranks.value_or(0);
  lower.root = options.root.value_or(-1);
  lower.variant = name.str();
  lower.prelaunch = dma.prelaunch;
  lower.engines = dma.engines;
  if (options.maxOps)
    lower.maxOps = options.maxOps;
  if (mlir::failed(buildLowerProvedToDMAPipeline(pm, lower)) ||
      mlir::failed(pm.run(*engineLevel)))
    return failed("a pass failed");
  VariantArtifacts artifacts;
  artifacts.variant = name.str();
  llvm::raw_string_ostream plan(artifacts.plan);
  if (mlir::failed(translateToPlan(*engineLevel, plan)))
    return failed("the plan translation failed");
  bool wantPackets =
      dma.packets == CompileOptions::Packets::All ||
      (dma.packets == CompileOptions::Packets::Primary && out.variants.empty());
  if (wantPackets) {
    progress("lowering variant " + name.str() + " to SDMA packets");
    std::optional<std::string> text = packets(dma, *engineLevel);
    if (!text)
      return failed("lowering to SDMA packets failed");
    artifacts.packets = std::move(*text);
  }
  return artifacts;
}

bool Compilation::variants(const CompileOptions &dma) {
  using Policy = CompileOptions::VariantPolicy;
  // Counts the host knows: the DMA variants are built for them.
  if (out.runtimeCounts && !dma.countTables.empty()) {
    for (ScheduleOp schedule : flat->getOps<ScheduleOp>())
      if (mlir::failed(
              resolveCounts(schedule, dma.countTables, out.resolvedCounts)))
        return fail("'" + dma.bufferName + "': the counts given do not fit",
                    true);
  } else if (out.runtimeCounts && dma.ldst) {
    // Counts read at run time have no DMA plan (sdma-assign-engines says
    // why); the load/store kernel is the program.
    for (const std::string &name : dma.variants)
      out.skipped.push_back(
          {name, "the schedule reads counts at run time (sdma.copyv); DMA "
                 "plans need every size when they are built"});
    return true;
  }
  // Reductions need compute units: the load/store kernel adds.
  if (out.needsCompute && dma.ldst) {
    for (const std::string &name : dma.variants)
      out.skipped.push_back(
          {name, "the schedule reduces (sdma.reduce) and DMA engines cannot "
                 "add; the load/store kernel does the arithmetic"});
    return true;
  }
  if (dma.packets != CompileOptions::Packets::None && !dma.sdmaTarget.empty() &&
      !pkt::findTargetProfile(dma.sdmaTarget))
    return fail("unknown SDMA target '" + dma.sdmaTarget + "' (" +
                    pkt::targetNameList() + ")",
                false);
  for (size_t i = 0, e = dma.variants.size(); i < e; ++i) {
    const std::string &name = dma.variants[i];
    if (!llvm::is_contained(getDMAVariants(), name))
      return fail("unknown DMA variant '" + name +
                      "' (pcpy, bcst, swap or b2b)",
                  false);
    bool quiet = dma.policy != Policy::Each;
    std::string reason;
    std::optional<VariantArtifacts> one =
        variant(dma, name, quiet ? &reason : nullptr, i + 1 == e);
    if (!one) {
      if (!quiet)
        return fail("variant " + name + " of '" + options.bufferName +
                        "' did not compile",
                    true);
      out.skipped.push_back({name, reason});
      continue;
    }
    out.variants.push_back(std::move(*one));
    if (dma.policy == Policy::FirstThatCompiles)
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

namespace {
/// Runs `stages` on a Compilation of `text` with its diagnostics sunk.
template <typename Stages>
Artifacts run(MLIRContext &context, std::string_view text,
              const ProgramOptions &options, Stages stages) {
  Artifacts out;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(text.data(), text.size()), options.bufferName),
      llvm::SMLoc());
  DiagnosticSink sink(sourceMgr, &context, options, out.diagnostics);
  Compilation compilation(context, sourceMgr, options, out);
  out.ok = stages(compilation);
  return out;
}
} // namespace

Artifacts Compiler::compile(std::string_view text,
                            const CompileOptions &options) {
  return run(impl_->context, text, options, [&](Compilation &compilation) {
    return compilation.front(text, options.ldst) &&
           compilation.variants(options);
  });
}

Artifacts Compiler::compileProgram(std::string_view text,
                                   const ProgramOptions &options) {
  return run(impl_->context, text, options, [&](Compilation &compilation) {
    return compilation.front(text, /*ldst=*/true);
  });
}

Artifacts compile(std::string_view text, const CompileOptions &options) {
  return Compiler().compile(text, options);
}

Artifacts compileProgram(std::string_view text, const ProgramOptions &options) {
  return Compiler().compileProgram(text, options);
}

} // namespace sdma
