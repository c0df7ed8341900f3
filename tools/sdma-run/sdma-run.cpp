//===- sdma-run.cpp - compile, run and check a schedule -------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-run SCHEDULE.mlir [--ranks=N] [--variant=pcpy|bcst|swap|b2b]
//          [--prelaunch] [--engines=N] [--backend=auto|sim|sdma-sim|
//          sdma-packets|ldst-cpu|cuda-ldst|cuda-ce|hip-ldst|hip-dma]
//          [-b MIN] [-e MAX] [-f FACTOR] [--iters=N] [--emit-plan=FILE]
// sdma-run SCHEDULE.mlir --compile-only -o DIR
//
// Runs the whole pipeline in-process (unroll, verify, lower to engine
// queues, plan), then for every message size fills the inputs with a
// pattern, executes the plan on the backend, checks every output byte and
// prints an nccl-tests style table. A schedule that fails verification never
// reaches a backend. Exit status: 0 all correct, 1 an error, 2 a bad command
// line, 3 wrong bytes. For tests, SDMA_RUN_FAIL_VARIANT=V makes DMA variant V
// fail to compile (SDMA_FORCE_NO_GPU=1 hides the GPUs).
//
//===----------------------------------------------------------------------===//

#include "InputGuard.h"
#include "Progress.h"
#include "ToolOptions.h"
#include "sdma/Analysis/ScheduleVerifier.h"
#include "sdma/Conversion/Passes.h"
#include "sdma/IR/SdmaDialect.h"
#include "sdma/Target/HIP.h"
#include "sdma/Target/Packets.h"
#include "sdma/Target/Plan.h"
#include "sdma/Transforms/Passes.h"
#include "sdma/Transforms/Pipelines.h"
#include "sdma/runtime/CudaCeExecutor.h"
#include "sdma/runtime/CudaExecutor.h"
#include "sdma/runtime/DmaTimingModel.h"
#ifdef SDMA_HAVE_HIP
#include "sdma/runtime/HipDmaExecutor.h"
#include "sdma/runtime/HipExecutor.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/MemoryBudget.h"
#endif
#include "sdma/runtime/NvTimingModel.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Simulator.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("sdma-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::cat(runCategory),
                                      cl::desc("<schedule.mlir>"));
static cl::opt<int64_t>
    ranksOpt("ranks", cl::cat(runCategory),
             cl::desc("rank count (default: the schedule's own fixed count)"),
             cl::init(0));
static cl::opt<std::string>
    variantOpt("variant", cl::cat(runCategory),
               cl::desc("pcpy | bcst | swap | b2b: the DMA variant to run; "
                        "without it, a variant that does not "
                        "compile is skipped with a warning"),
               cl::init("pcpy"));
static cl::opt<bool> prelaunchOpt("prelaunch", cl::cat(runCategory),
                                  cl::desc("prelaunched queues"));
static cl::opt<int64_t> enginesOpt("engines", cl::cat(runCategory),
                                   cl::desc("engines per rank (0: R)"),
                                   cl::init(0));
static cl::opt<std::string> backendOpt(
    "backend", cl::cat(runCategory),
    cl::desc(
        "auto | sim | sdma-sim | sdma-packets | ldst-cpu | cuda-ldst | "
        "cuda-ce | hip-ldst | hip-dma (auto: per size, the executor the NVIDIA "
        "cost model predicts fastest where there is an NVIDIA "
        "GPU, else sim; sdma-sim: the simulator, timed by the "
        "DMA model; sdma-packets: the AMD packet program on "
        "the packet simulator, checked against the "
        "reference simulator; ldst-cpu: the load/store kernel "
        "itself on the CPU, checked against the reference "
        "simulator)"),
    cl::init("auto"));
static cl::opt<std::string>
    dmaProfile("dma-profile", cl::cat(runCategory),
               cl::desc("DMA timing profile for --backend=sdma-sim"),
               cl::init(SDMA_DEFAULT_DMA_PROFILE));
static cl::opt<std::string>
    nvProfilePath("nv-profile", cl::cat(runCategory),
                  cl::desc("NVIDIA cost-model profile for --backend=auto"),
                  cl::init(SDMA_DEFAULT_NV_PROFILE));
static cl::opt<std::string>
    ceMode("ce-mode", cl::cat(runCategory),
           cl::desc("plain | batch | graph: how --backend=cuda-ce issues a "
                    "plan (cuMemcpyBatchAsync per run of copies; a replayed "
                    "CUDA graph)"),
           cl::init("plain"));
static cl::list<int> devicesOpt(
    "devices", cl::CommaSeparated, cl::cat(runCategory),
    cl::desc("GPUs to spread the ranks over (default: all on GPU 0)"));
static cl::opt<unsigned> timeoutMs("timeout-ms", cl::cat(runCategory),
                                   cl::desc("GPU waits fail after this long"),
                                   cl::init(5000));
static cl::opt<std::string> emitHip("emit-hip", cl::cat(runCategory),
                                    cl::desc("also write the kernel here"));
static cl::opt<std::string> minBytes("b", cl::cat(runCategory),
                                     cl::desc("smallest size (bytes, "
                                              "K/M/G suffixes)"),
                                     cl::init("1K"));
static cl::opt<std::string> maxBytes("e", cl::cat(runCategory),
                                     cl::desc("largest size"), cl::init("1M"));
static cl::opt<unsigned> factor("f", cl::cat(runCategory),
                                cl::desc("size multiplier per row"),
                                cl::init(4));
static cl::opt<unsigned> iters("iters", cl::cat(runCategory),
                               cl::desc("timed runs per size"), cl::init(5));
static cl::opt<std::string> emitPlan("emit-plan", cl::cat(runCategory),
                                     cl::desc("also write the plan here"));
static cl::opt<std::string>
    emitPackets("emit-packets", cl::cat(runCategory),
                cl::desc("also write the AMD SDMA packet plan here"));
static cl::opt<std::string>
    packetCompletion("packet-completion", cl::cat(runCategory),
                     cl::desc("atomic | fence (how packet queues signal)"),
                     cl::init("atomic"));
static cl::opt<int64_t> maxChunkBytes(
    "max-chunk-bytes", cl::cat(runCategory),
    cl::desc("largest chunk the packet program supports (splits packets)"),
    cl::init(64 << 20));

static cl::opt<bool> compileOnly(
    "compile-only", cl::cat(runCategory),
    cl::desc("write the plan and AMD SDMA packets of every DMA variant and "
             "the load/store kernel into the -o directory; run nothing"));
static cl::opt<std::string>
    outputDir("o", cl::cat(runCategory), cl::value_desc("directory"),
              cl::desc("where --compile-only writes its files"), cl::init(""));

static cl::opt<std::string> memoryBudgetOpt(
    "memory-budget", cl::cat(runCategory), cl::value_desc("bytes"),
    cl::desc("the most memory a proof or a run may take, e.g. 16G (default: "
             "SDMA_MEMORY_BUDGET, else half the RAM)"),
    cl::init(""));

/// --memory-budget becomes SDMA_MEMORY_BUDGET, which the verifier and the
/// runtime both read; a malformed value (option or variable) is an error.
static std::string applyMemoryBudget() {
  if (!memoryBudgetOpt.empty()) {
    if (!sdma::rt::MemoryBudget::parseBytes(memoryBudgetOpt))
      return "--memory-budget='" + memoryBudgetOpt.substr(0, 64) +
             "' is not a positive byte count (e.g. 4096, 512M, 16G)";
    setenv("SDMA_MEMORY_BUDGET", memoryBudgetOpt.c_str(), /*overwrite=*/1);
  }
  std::string error;
  if (!sdma::rt::MemoryBudget::fromEnvironment(error))
    return error;
  return "";
}

static bool parseBytes(StringRef text, uint64_t &bytes) {
  uint64_t scale = 1;
  if (text.ends_with_insensitive("k"))
    scale = 1ull << 10;
  else if (text.ends_with_insensitive("m"))
    scale = 1ull << 20;
  else if (text.ends_with_insensitive("g"))
    scale = 1ull << 30;
  if (scale != 1)
    text = text.drop_back();
  if (text.getAsInteger(10, bytes) || bytes == 0 || bytes > (1ull << 36))
    return false;
  bytes *= scale;
  return true;
}

/// nccl-tests' bus-bandwidth factor for a collective over `ranks` ranks.
static double busFactor(const std::string &kind, int ranks) {
  if (kind == "broadcast")
    return 1.0;
  return ranks > 1 ? double(ranks - 1) / ranks : 1.0;
}

/// "16 MiB", "1 KiB", "1000 B": a size in progress lines.
static std::string formatSize(uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

/// Writes `text` to `path`; false with `error` set if it cannot.
static bool writeFile(StringRef path, StringRef text, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << text;
    out.close();
    ec = out.error();
  }
  if (ec)
    error = "cannot write '" + path.str() + "': " + ec.message();
  return !ec;
}

/// The rank count to compile for: --ranks where given, else 0 (sdma-unroll
/// then takes each schedule's own fixed count). Fails, naming the schedule,
/// when a schedule leaves its rank count open and --ranks is missing.
static std::optional<int64_t> ranksToCompile(ModuleOp module, int64_t given,
                                             bool explicitlyGiven,
                                             std::string &error) {
  if (explicitlyGiven)
    return given;
  for (sdma::ScheduleOp schedule : module.getOps<sdma::ScheduleOp>())
    if (!schedule.getRanks()) {
      error = "schedule '" + schedule.getSymName().str() +
              "' leaves its rank count open (ranks(%R)): give --ranks=N";
      return std::nullopt;
    }
  return 0;
}

namespace {
/// While alive, takes every diagnostic of `context` off the terminal and
/// keeps the first line of the first error, with where it points: why a
/// variant is skipped, in one line.
class FirstError : public ScopedDiagnosticHandler {
public:
  explicit FirstError(MLIRContext *context) : ScopedDiagnosticHandler(context) {
    setHandler([this](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error || !reason.empty())
        return success();
      reason = StringRef(diag.str()).split('\n').first.str();
      if (auto file =
              LocationAttr(diag.getLocation()).findInstanceOf<FileLineColLoc>())
        reason += (" (" + file.getFilename().getValue() + ":" +
                   Twine(file.getLine()) + ":" + Twine(file.getColumn()) + ")")
                      .str();
      return success();
    });
  }
  std::string reason;
};

/// One DMA variant, compiled and loaded: its engine-level schedule (the
/// packet lowering starts there) and its plan, as written and as read back.
struct CompiledVariant {
  std::string name;
  OwningOpRef<ModuleOp> engineLevel;
  std::string planText;
  sdma::rt::Plan plan;
};

/// How the DMA variants are compiled (sdma-lower-dma's options but the
/// variant).
struct VariantOptions {
  int64_t ranks = 0;
  bool prelaunch = false;
  int64_t engines = 0;
};
} // namespace

/// Why a compile failed when its diagnostics say it.
static const char *const kSeeDiagnostics = "a pass or translation failed";

/// Compiles `variant` of `schedule` and loads its plan as a host program
/// would. With `reason`, diagnostics are swallowed and `*reason` says in one
/// line why the variant did not compile; without, they print as usual.
static std::optional<CompiledVariant>
compileVariant(ModuleOp schedule, StringRef variant,
               const VariantOptions &options, std::string *reason) {
  std::optional<FirstError> quiet;
  if (reason)
    quiet.emplace(schedule.getContext());
  // `why` where no diagnostic says it (printed ones already do).
  auto failed = [&](const std::string &why) -> std::optional<CompiledVariant> {
    if (reason)
      *reason = quiet->reason.empty() ? why : quiet->reason;
    else if (why != kSeeDiagnostics)
      llvm::errs() << "sdma-run: error: variant " << variant << ": " << why
                   << "\n";
    return std::nullopt;
  };
  CompiledVariant compiled;
  compiled.name = variant.str();
  compiled.engineLevel = schedule.clone();
  PassManager pm(schedule.getContext());
  sdma::LowerToDMAOptions lower;
  lower.ranks = options.ranks;
  lower.variant = variant.str();
  lower.prelaunch = options.prelaunch;
  lower.engines = options.engines;
  // For tests: SDMA_RUN_FAIL_VARIANT=V gives V's sdma-unroll a budget of one
  // op, so that V fails to compile as it would for any failing pass.
  if (const char *failing = std::getenv("SDMA_RUN_FAIL_VARIANT"))
    if (variant == failing)
      lower.maxOps = 1;
  if (mlir::failed(sdma::buildLowerToDMAPipeline(pm, lower)) ||
      mlir::failed(pm.run(*compiled.engineLevel)))
    return failed(kSeeDiagnostics);
  llvm::raw_string_ostream planStream(compiled.planText);
  if (mlir::failed(sdma::translateToPlan(*compiled.engineLevel, planStream)))
    return failed(kSeeDiagnostics);
  std::string error;
  std::optional<sdma::rt::Plan> plan =
      sdma::rt::Plan::parse(compiled.planText, error);
  if (!plan)
    return failed("the runtime rejects its plan: " + error);
  compiled.plan = std::move(*plan);
  return compiled;
}

/// Compiles the DMA variants to run. With --variant (`isExplicit`), that
/// one: its failure is an error. Without, `requested` (the default) first,
/// then, where `all`, every other variant; a variant that does not compile
/// is skipped with one warning line, and compiling stops at the first that
/// does unless `all`. Empty when none compiled, after saying why.
static std::vector<CompiledVariant>
compileVariants(ModuleOp schedule, StringRef requested, bool isExplicit,
                bool all, const VariantOptions &options,
                sdma::ProgressLines &progress) {
  std::vector<CompiledVariant> compiled;
  std::vector<StringRef> order{requested};
  if (!isExplicit)
    for (StringRef variant : sdma::getDMAVariants())
      if (variant != requested)
        order.push_back(variant);
  for (StringRef variant : order) {
    progress.step("compiling variant " + variant.str());
    std::string reason;
    std::optional<CompiledVariant> one = compileVariant(
        schedule, variant, options, isExplicit ? nullptr : &reason);
    if (!one) {
      if (!isExplicit)
        llvm::errs() << "sdma-run: warning: variant " << variant
                     << " skipped: " << reason << "\n";
      continue;
    }
    compiled.push_back(std::move(*one));
    if (!all)
      break;
  }
  return compiled;
}

/// The AMD SDMA packet plan of an engine-level schedule (diagnostics print).
static std::optional<std::string> lowerToPackets(ModuleOp engineLevel,
                                                 StringRef completion,
                                                 int64_t maxChunkBytes) {
  PassManager pm(engineLevel.getContext());
  sdma::ConvertSdmaToSdmaPktOptions options;
  options.completion = completion.str();
  options.maxChunkBytes = maxChunkBytes;
  pm.addPass(sdma::createConvertSdmaToSdmaPkt(options));
  OwningOpRef<ModuleOp> packets(engineLevel.clone());
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(pm.run(*packets)) ||
      failed(sdma::translateToPackets(*packets, os)))
    return std::nullopt;
  return text;
}

/// --compile-only: writes into `dir` the load/store kernel and each
/// variant's plan and packet plan, naming every file on stdout. Returns the
/// exit status.
static int writeCompiled(StringRef dir, StringRef stem, StringRef hipSource,
                         std::vector<CompiledVariant> &variants,
                         StringRef packetCompletion, int64_t maxChunkBytes,
                         sdma::ProgressLines &progress) {
  std::string error;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    llvm::errs() << "sdma-run: error: cannot create '" << dir
                 << "': " << ec.message() << "\n";
    return 1;
  }
  auto write = [&](StringRef name, StringRef text, StringRef what) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    if (!writeFile(path, text, error)) {
      llvm::errs() << "sdma-run: error: " << error << "\n";
      return false;
    }
    llvm::outs() << "wrote " << path << "  (" << what << ")\n";
    llvm::outs().flush();
    return true;
  };
  if (!write((stem + ".hip").str(), hipSource, "load/store kernel"))
    return 1;
  for (CompiledVariant &variant : variants) {
    size_t commands = 0;
    for (const sdma::rt::Stream &stream : variant.plan.streams)
      commands += stream.commands.size();
    std::string base = (stem + "." + variant.name).str();
    if (!write(base + ".plan.json", variant.planText,
               "plan, variant " + variant.name + ": " +
                   std::to_string(variant.plan.streams.size()) +
                   " engine queues, " + std::to_string(commands) + " commands"))
      return 1;
    progress.step("lowering variant " + variant.name + " to SDMA packets");
    std::optional<std::string> packets =
        lowerToPackets(*variant.engineLevel, packetCompletion, maxChunkBytes);
    if (!packets) {
      llvm::errs() << "sdma-run: error: variant " << variant.name
                   << ": lowering to SDMA packets failed (see above)\n";
      return 1;
    }
    if (!write(base + ".packets.json", *packets,
               "AMD SDMA packet plan, variant " + variant.name + ", " +
                   packetCompletion.str() + " completion"))
      return 1;
  }
  return 0;
}

/// Checks the options that do not need the schedule; an error message or
/// an empty string.
static std::string checkOptions(uint64_t &lo, uint64_t &hi) {
  if (!llvm::is_contained(sdma::getDMAVariants(), variantOpt))
    return "unknown --variant '" + variantOpt + "' (pcpy, bcst, swap or b2b)";
  static const StringRef backends[] = {"auto",         "sim",      "sdma-sim",
                                       "sdma-packets", "ldst-cpu", "cuda-ldst",
                                       "cuda-ce",      "hip-ldst", "hip-dma"};
  if (!llvm::is_contained(backends, backendOpt))
    return "unknown --backend '" + backendOpt +
           "' (auto, sim, sdma-sim, sdma-packets, ldst-cpu, cuda-ldst, "
           "cuda-ce, hip-ldst or hip-dma)";
  if (ceMode != "plain" && ceMode != "batch" && ceMode != "graph")
    return "unknown --ce-mode '" + ceMode + "' (plain, batch or graph)";
  if (packetCompletion != "atomic" && packetCompletion != "fence")
    return "unknown --packet-completion '" + packetCompletion +
           "' (atomic or fence)";
  if (!parseBytes(minBytes, lo) || !parseBytes(maxBytes, hi) || lo > hi)
    return "bad size range -b " + minBytes + " -e " + maxBytes;
  if (factor < 2)
    return "-f must be at least 2";
  if (iters < 1)
    return "--iters must be at least 1";
  if (compileOnly && outputDir.empty())
    return "--compile-only needs -o DIRECTORY";
  if (!compileOnly && !outputDir.empty())
    return "-o DIRECTORY is for --compile-only (to write one file while "
           "running, use --emit-plan, --emit-hip or --emit-packets)";
  return "";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (!sdma::checkToolInputs(argc, argv, {"-o", "-b", "-e", "-f"}))
    return 1;
  cl::HideUnrelatedOptions(runCategory);
  sdma::addShortHelpAlias();
  sdma::describeDefaults(variantOpt, prelaunchOpt, enginesOpt, backendOpt,
                         dmaProfile, nvProfilePath, ceMode, timeoutMs, emitHip,
                         minBytes, maxBytes, factor, iters, emitPlan,
                         emitPackets, packetCompletion, maxChunkBytes,
                         compileOnly, outputDir);
  sdma::installVersionPrinter("sdma-run");
  if (!sdma::parseCommandLine(argc, argv,
                              "sdma-run: compile, run and check a "
                              "collective schedule\n"))
    return 2;
  auto fail = [](const Twine &message) {
    llvm::errs() << "sdma-run: error: " << message << "\n";
    return 1;
  };
  uint64_t lo, hi;
  if (std::string error = checkOptions(lo, hi); !error.empty())
    return fail(error);
  if (std::string error = applyMemoryBudget(); !error.empty())
    return fail(error);
  sdma::ProgressLines progress("sdma-run");

  // Compile.
  progress.step("parsing and verifying " + inputFile);
  DialectRegistry registry;
  registry.insert<sdma::SdmaDialect, sdma::pkt::SdmaPktDialect,
                  affine::AffineDialect, arith::ArithDialect,
                  index::IndexDialect, scf::SCFDialect>();
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  std::string includeError;
  if (!sourceMgr.AddIncludeFile(inputFile, llvm::SMLoc(), includeError))
    return fail("cannot open '" + inputFile + "'");
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  if (size_t n = llvm::range_size(module->getOps<sdma::ScheduleOp>()); n != 1)
    return fail("'" + inputFile + "' holds " + Twine(n) +
                " sdma.schedule ops; sdma-run takes exactly one");
  std::string error;
  std::optional<int64_t> ranks = ranksToCompile(
      *module, ranksOpt, ranksOpt.getNumOccurrences() > 0, error);
  if (!ranks)
    return fail(error);
  // The load/store kernel comes from the flat, verified schedule; the DMA
  // plan from the rest of the pipeline.
  std::string hipSource;
  {
    PassManager verifyPm(&context);
    sdma::SdmaUnrollOptions unroll;
    unroll.ranks = *ranks;
    verifyPm.addPass(sdma::createSdmaUnroll(unroll));
    OwningOpRef<ModuleOp> flat(module.get().clone());
    FailureOr<sdma::VerifyReport> proved = failure();
    sdma::ScheduleOp schedule;
    if (succeeded(verifyPm.run(*flat))) {
      schedule = *flat->getOps<sdma::ScheduleOp>().begin();
      proved = sdma::verifySchedule(schedule);
    }
    if (failed(proved))
      return fail("'" + inputFile +
                  "' did not compile (see above); nothing "
                  "was run");
    llvm::outs() << "# " << proved->summary(schedule) << "\n";
    if (!proved->collective)
      llvm::errs() << "sdma-run: warning: '" << inputFile
                   << "' declares no collective (`implements`): only "
                      "agreement with the reference simulator is checked\n";
    llvm::raw_string_ostream hipStream(hipSource);
    if (failed(sdma::translateToHIP(*flat, hipStream)))
      return 1;
  }
  if (!emitHip.empty() && !writeFile(emitHip, hipSource, error))
    return fail(error);
  // The DMA variants: the one asked for; without --variant, every variant
  // the cost model or --compile-only may use, skipping those that do not
  // compile.
  bool explicitVariant = variantOpt.getNumOccurrences() > 0;
  VariantOptions variantOptions;
  variantOptions.ranks = *ranks;
  variantOptions.prelaunch = prelaunchOpt;
  variantOptions.engines = enginesOpt;
  std::vector<CompiledVariant> variants = compileVariants(
      *module, variantOpt, explicitVariant, compileOnly || backendOpt == "auto",
      variantOptions, progress);
  if (variants.empty())
    return fail(explicitVariant
                    ? "variant " + variantOpt + " of '" + inputFile +
                          "' did not compile (see above); nothing was run"
                    : "no DMA variant of '" + inputFile +
                          "' compiled (see the warnings above; --variant=V "
                          "shows V's diagnostics); nothing was run");
  if (compileOnly)
    return writeCompiled(outputDir, llvm::sys::path::stem(inputFile), hipSource,
                         variants, packetCompletion, maxChunkBytes, progress);
  const CompiledVariant &primary = variants.front();
  if (!emitPlan.empty() && !writeFile(emitPlan, primary.planText, error))
    return fail(error);

  // The AMD packet program, from the same engine-level schedule.
  std::string packetText;
  if (!emitPackets.empty() || backendOpt == "sdma-packets") {
    progress.step("lowering to SDMA packets");
    std::optional<std::string> packets =
        lowerToPackets(*primary.engineLevel, packetCompletion, maxChunkBytes);
    if (!packets)
      return fail("lowering to SDMA packets failed (see above)");
    packetText = std::move(*packets);
  }
  if (!emitPackets.empty() && !writeFile(emitPackets, packetText, error))
    return fail(error);

  // Load it as any host program would.
  const sdma::rt::Plan *plan = &primary.plan;
  size_t commands = 0;
  for (const sdma::rt::Stream &stream : plan->streams)
    commands += stream.commands.size();
  // The backend: the GPU where there is one (or where asked for).
  std::unique_ptr<sdma::rt::CudaLdstExecutor> gpu;
  std::unique_ptr<sdma::rt::CudaCeExecutor> ce;
#ifdef SDMA_HAVE_HIP
  std::unique_ptr<sdma::rt::hip::HipDmaExecutor> hipDma;
  std::unique_ptr<sdma::rt::hip::HipLdstExecutor> hipLdst;
  std::unique_ptr<sdma::rt::LdstCpuExecutor> cpuLdst;
#endif
  std::string backend = "sim";
  std::string backendNote =
      "CPU reference simulator; times are host times, not GPU predictions";
  std::optional<sdma::rt::DmaTimingProfile> profile;
  std::optional<sdma::rt::PacketPlan> packetPlan;
  if (backendOpt == "sdma-packets") {
    packetPlan = sdma::rt::PacketPlan::parse(packetText, error);
    profile = packetPlan ? sdma::rt::DmaTimingProfile::load(dmaProfile, error)
                         : std::nullopt;
    if (!packetPlan || !profile)
      return fail(error);
    backend = "sdma-packets";
    backendNote = "AMD SDMA packets (" + packetCompletion +
                  " completion) patched and run on the packet simulator, "
                  "every byte compared with the reference simulator; time "
                  "predicted from the packets by the DMA timing model for " +
                  profile->target + "; sizes rounded down to the packets' " +
                  std::to_string(packetPlan->chunkAlign) +
                  "-byte chunk alignment";
  } else if (backendOpt == "ldst-cpu") {
    std::optional<sdma::rt::LdstProgram> program =
        sdma::rt::LdstProgram::parse(hipSource, error);
    if (!program)
      return fail(error);
    sdma::rt::LdstCpuOptions cpuOptions;
    cpuOptions.blocks = 2;
    cpuOptions.timeoutNs = uint64_t(timeoutMs) * 1000000ull;
    cpuLdst = sdma::rt::LdstCpuExecutor::create(*program, cpuOptions, error);
    if (!cpuLdst)
      return fail(error);
    backend = "ldst-cpu";
    backendNote = "the load/store kernel itself on the CPU (each of 2 x 32 GPU "
                  "threads per rank a host thread), every byte compared with "
                  "the reference simulator; host times, not GPU times";
  } else if (backendOpt == "sdma-sim") {
    profile = sdma::rt::DmaTimingProfile::load(dmaProfile, error);
    if (!profile)
      return fail(error);
    backend = "sdma-sim";
    backendNote = "CPU simulator checks the bytes; time predicted by the DMA "
                  "timing model for " +
                  profile->target + " (" + dmaProfile + ")";
  } else if (backendOpt == "cuda-ce") {
    sdma::rt::CudaOptions cudaOptions;
    cudaOptions.devices.assign(devicesOpt.begin(), devicesOpt.end());
    cudaOptions.timeoutNs = uint64_t(timeoutMs) * 1000000ull;
    sdma::rt::CeOptions ceOptions;
    ceOptions.batch = ceMode == "batch";
    ceOptions.graph = ceMode == "graph";
    ce = sdma::rt::CudaCeExecutor::create(*plan, cudaOptions, error, ceOptions);
    if (!ce)
      return fail(error);
    backend = "cuda-ce";
    backendNote = "the plan's queues as CUDA streams (" + ceMode + "), " +
                  (devicesOpt.size() > 1
                       ? "ranks spread over GPUs"
                       : "all ranks on one GPU (there, device copies run "
                         "on the SMs)") +
                  "; CUDA-event times, median";
  } else if (backendOpt == "hip-ldst" || backendOpt == "hip-dma") {
#ifdef SDMA_HAVE_HIP
    sdma::rt::CudaOptions hipOptions;
    hipOptions.devices.assign(devicesOpt.begin(), devicesOpt.end());
    hipOptions.timeoutNs = uint64_t(timeoutMs) * 1000000ull;
    if (backendOpt == "hip-dma") {
      hipDma = sdma::rt::hip::HipDmaExecutor::create(*plan, hipOptions, error);
      if (!hipDma)
        return fail(error);
      backendNote = "the plan's queues as HIP streams (SDMA engines between "
                    "GPUs); HIP-event times, median";
    } else {
      std::optional<sdma::rt::LdstProgram> program =
          sdma::rt::LdstProgram::parse(hipSource, error);
      if (!program)
        return fail(error);
      hipLdst =
          sdma::rt::hip::HipLdstExecutor::create(*program, hipOptions, error);
      if (!hipLdst)
        return fail(error);
      backendNote = "load/store kernel, hipRTC; host times of whole runs, "
                    "median";
    }
    backend = backendOpt;
#else
    return fail("this build has no HIP executors (HIP headers were not "
                "found at configure time)");
#endif
  } else if (backendOpt != "sim") {
    std::optional<sdma::rt::LdstProgram> program =
        sdma::rt::LdstProgram::parse(hipSource, error);
    if (!program)
      return fail(error);
    sdma::rt::CudaOptions cudaOptions;
    cudaOptions.devices.assign(devicesOpt.begin(), devicesOpt.end());
    cudaOptions.timeoutNs = uint64_t(timeoutMs) * 1000000ull;
    gpu = sdma::rt::CudaLdstExecutor::create(*program, cudaOptions, error);
    if (!gpu && backendOpt == "cuda-ldst")
      return fail(error);
    if (gpu) {
      backend = "cuda-ldst";
      const sdma::rt::CompileInfo &info = gpu->compileInfo();
      backendNote = "load/store kernel, NVRTC " + info.arch + ", " +
                    (info.cacheHit ? "cache hit" : "compiled") + " in " +
                    std::to_string(info.compileMs + info.loadMs) + " ms; " +
                    (devicesOpt.size() > 1 ? "ranks spread over GPUs"
                                           : "all ranks on one GPU") +
                    "; CUDA-event times, median";
    } else {
      backendNote += " (" + error + ")";
    }
  }
  // Auto: the NVIDIA cost model's pick per size (shown without a GPU too).
  std::optional<sdma::rt::NvTimingProfile> nvProfile;
  std::map<std::pair<size_t, sdma::rt::NvExecutor>,
           std::unique_ptr<sdma::rt::CudaCeExecutor>>
      autoCe; // (candidate, executor)
  if (backendOpt == "auto") {
    nvProfile = sdma::rt::NvTimingProfile::load(nvProfilePath, error);
    if (!nvProfile)
      return fail(error);
    backendNote += gpu ? "; per size, the executor the NVIDIA cost model ("
                       : "; the NVIDIA cost model (";
    backendNote += nvProfilePath + ") " +
                   (gpu ? "predicts fastest" : "would pick, if there were one");
  }
  // Auto without --variant: every DMA variant that compiled is a candidate.
  std::vector<std::pair<std::string, sdma::rt::Plan>> candidates;
  for (const CompiledVariant &variant : variants)
    candidates.emplace_back(variant.name, variant.plan);
  std::string kind = plan->collective ? plan->collective->kind : "";
  int output = plan->collective ? plan->collective->output : 0;
  int64_t outChunks = plan->buffers[output].chunks;

  llvm::outs() << "# sdma-run " << inputFile << "\n"
               << "# schedule " << plan->schedule << "  collective "
               << (kind.empty() ? "(none: outputs unchecked)" : kind)
               << "  ranks " << plan->ranks << "  variant " << primary.name
               << (prelaunchOpt ? "+prelaunch" : "") << "\n"
               << "# backend " << backend << " (" << backendNote << ")\n"
               << "# " << plan->streams.size() << " engine queues, " << commands
               << " commands; size = output bytes per rank\n"
               << llvm::format("#%11s %11s %10s %12s %11s %11s %8s", "size",
                               "count", "chunk", "time(us)", "algbw(GB/s)",
                               "busbw(GB/s)", "#wrong")
               << (nvProfile ? "  pick(predicted us)" : "") << "\n";
  bool anyWrong = false;
  // The collective's outputs, and every byte of every buffer against the
  // reference simulator's run (for backends that are not the simulator).
  auto checkAgainst = [&](const sdma::rt::HostMemory &memory,
                          const sdma::rt::HostMemory &expected) {
    sdma::rt::CheckResult result = sdma::rt::checkOutputs(*plan, memory);
    uint64_t differ = sdma::rt::differingBytes(*plan, memory, expected);
    if (differ) {
      result.wrongBytes += differ;
      result.firstWrong =
          std::to_string(differ) +
          " bytes differ from the reference simulator" +
          (result.firstWrong.empty() ? "" : "; " + result.firstWrong);
    }
    return result;
  };
  llvm::outs().flush();
  for (uint64_t size = lo; size <= hi; size *= factor) {
    progress.step("running " + formatSize(size) + " on " + backend);
    uint64_t chunk = std::max<uint64_t>(1, size / outChunks);
    if (packetPlan) {
      uint64_t align = packetPlan->chunkAlign;
      chunk = std::max<uint64_t>(align, chunk - chunk % align);
    }
    uint64_t actual = chunk * outChunks;
    // Every allocation is checked against the memory budget first
    // (SDMA_MEMORY_BUDGET, default half the RAM): a refusal, not an abort.
    std::optional<sdma::rt::HostMemory> made =
        sdma::rt::HostMemory::create(*plan, chunk, error);
    if (!made)
      return fail(error);
    sdma::rt::HostMemory &memory = *made;
    std::vector<double> times;
    sdma::rt::CheckResult check;
    std::string pickText;
    sdma::rt::CudaCeExecutor *ceRun = ce.get();
    if (nvProfile) {
      // The predicted-fastest (variant, executor); the load/store kernel
      // does not depend on the DMA variant: it is costed on the first plan.
      std::optional<std::pair<size_t, sdma::rt::NvExecutor>> pick;
      double best = 0;
      int devices = std::max<int>(1, static_cast<int>(devicesOpt.size()));
      for (size_t c = 0; c < candidates.size(); ++c)
        for (auto [executor, coefficients] : nvProfile->coefficientsFor(
                 std::min(devices, candidates[c].second.ranks))) {
          if (c > 0 && executor == sdma::rt::NvExecutor::Ldst)
            continue;
          std::optional<double> predicted = nvProfile->predict(
              candidates[c].second, chunk, executor, devices);
          if (!predicted)
            continue;
          double us = *predicted;
          if (!pick || us < best) {
            pick = {c, executor};
            best = us;
          }
        }
      if (pick) {
        auto [c, executor] = *pick;
        pickText =
            std::string("  ") + sdma::rt::nvExecutorName(executor) +
            (executor == sdma::rt::NvExecutor::Ldst || candidates.size() == 1
                 ? ""
                 : "/" + candidates[c].first) +
            "(" + llvm::formatv("{0:F1}", best).str() + ")";
        if (gpu && executor != sdma::rt::NvExecutor::Ldst) {
          std::unique_ptr<sdma::rt::CudaCeExecutor> &slot = autoCe[*pick];
          if (!slot) {
            sdma::rt::CudaOptions cudaOptions;
            cudaOptions.devices.assign(devicesOpt.begin(), devicesOpt.end());
            cudaOptions.timeoutNs = uint64_t(timeoutMs) * 1000000ull;
            sdma::rt::CeOptions ceOptions;
            ceOptions.batch = executor == sdma::rt::NvExecutor::CeBatch;
            ceOptions.graph = executor == sdma::rt::NvExecutor::CeGraph;
            slot = sdma::rt::CudaCeExecutor::create(
                candidates[c].second, cudaOptions, error, ceOptions);
            if (!slot)
              return fail(error);
          }
          ceRun = slot.get();
        }
      }
    }
#ifdef SDMA_HAVE_HIP
    if (hipDma || hipLdst) {
      sdma::rt::fillInputs(*plan, memory);
      bool ok =
          hipDma ? hipDma->prepare(chunk, error) &&
                       hipDma->upload(memory, error) && hipDma->run(error) &&
                       hipDma->download(memory, error)
                 : hipLdst->prepare(chunk, error) &&
                       hipLdst->upload(memory, error) && hipLdst->run(error) &&
                       hipLdst->download(memory, error);
      if (!ok)
        return fail(error);
      check = sdma::rt::checkOutputs(*plan, memory);
      if (hipDma) {
        if (!hipDma->time(iters, times, error))
          return fail(error);
      } else {
        for (unsigned i = 0; i < iters; ++i) {
          auto start = std::chrono::steady_clock::now();
          if (!hipLdst->run(error))
            return fail(error);
          times.push_back(std::chrono::duration<double, std::micro>(
                              std::chrono::steady_clock::now() - start)
                              .count());
        }
      }
    } else
#endif
        if (ceRun) {
      sdma::rt::CudaCeExecutor *ce = ceRun;
      sdma::rt::fillInputs(*plan, memory);
      if (!ce->prepare(chunk, error) || !ce->upload(memory, error) ||
          !ce->run(error) || !ce->download(memory, error))
        return fail(error);
      check = sdma::rt::checkOutputs(*plan, memory);
      if (!ce->time(iters, times, error))
        return fail(error);
    } else if (gpu) {
      // Fill, run once, check every byte; then time `iters` runs.
      sdma::rt::fillInputs(*plan, memory);
      if (!gpu->prepare(chunk, error) || !gpu->upload(memory, error) ||
          !gpu->run(error) || !gpu->download(memory, error))
        return fail(error);
      check = sdma::rt::checkOutputs(*plan, memory);
      if (!gpu->time(iters, times, error))
        return fail(error);
    } else if (cpuLdst) {
      // Bytes: the kernel on the CPU against the reference simulator, for
      // every run (each the next flag epoch). Time: host time per run.
      std::optional<sdma::rt::HostMemory> reference =
          sdma::rt::HostMemory::create(*plan, chunk, error);
      if (!reference)
        return fail(error);
      sdma::rt::HostMemory &expected = *reference;
      sdma::rt::fillInputs(*plan, expected);
      if (!sdma::rt::simulate(*plan, expected, {}, error))
        return fail(error);
      for (unsigned i = 0; i < iters; ++i) {
        sdma::rt::fillInputs(*plan, memory);
        auto start = std::chrono::steady_clock::now();
        if (!cpuLdst->run(memory, error))
          return fail("ldst-cpu: " + error);
        times.push_back(std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - start)
                            .count());
        check = checkAgainst(memory, expected);
        if (check.wrongBytes)
          break;
      }
    } else if (packetPlan) {
      // Bytes: the packets patched and run on the packet simulator (round
      // robin, then random interleavings), compared with the reference.
      // Time: the DMA timing model over the packets themselves.
      std::optional<sdma::rt::HostMemory> reference =
          sdma::rt::HostMemory::create(*plan, chunk, error);
      if (!reference)
        return fail(error);
      sdma::rt::HostMemory &expected = *reference;
      sdma::rt::fillInputs(*plan, expected);
      if (!sdma::rt::simulate(*plan, expected, {}, error))
        return fail(error);
      sdma::rt::Plan layout = packetPlan->layout();
      for (unsigned i = 0; i < iters; ++i) {
        sdma::rt::fillInputs(layout, memory);
        sdma::rt::PacketSimOptions packetOptions;
        packetOptions.seed = i; // round robin first, then random orders
        if (!sdma::rt::simulatePackets(*packetPlan, memory, packetOptions,
                                       error))
          return fail("packet simulator: " + error);
        check = checkAgainst(memory, expected);
        if (check.wrongBytes)
          break;
      }
      std::optional<sdma::rt::Plan> lifted =
          sdma::rt::liftPackets(*packetPlan, chunk, error);
      std::optional<double> us =
          lifted ? sdma::rt::predictDmaTime(*lifted, chunk, *profile, error)
                 : std::nullopt;
      if (!us)
        return fail("timing the packets: " + error);
      times.push_back(*us);
    } else if (profile) {
      sdma::rt::fillInputs(*plan, memory);
      if (!sdma::rt::simulate(*plan, memory, {}, error))
        return fail(error);
      check = sdma::rt::checkOutputs(*plan, memory);
      std::optional<double> us =
          sdma::rt::predictDmaTime(*plan, chunk, *profile, error);
      if (!us)
        return fail(error);
      times.push_back(*us);
    } else {
      for (unsigned i = 0; i < iters; ++i) {
        sdma::rt::fillInputs(*plan, memory);
        auto start = std::chrono::steady_clock::now();
        if (!sdma::rt::simulate(*plan, memory, {}, error))
          return fail(error);
        auto stop = std::chrono::steady_clock::now();
        times.push_back(
            std::chrono::duration<double, std::micro>(stop - start).count());
        check = sdma::rt::checkOutputs(*plan, memory);
        if (check.wrongBytes)
          break;
      }
    }
    std::sort(times.begin(), times.end());
    double us = times[times.size() / 2];
    double algbw = actual / (us * 1e3);
    llvm::outs() << llvm::format(
                        " %11llu %11llu %10llu %12.2f %11.3f %11.3f %8s",
                        (unsigned long long)actual,
                        (unsigned long long)(actual / 4),
                        (unsigned long long)chunk, us, algbw,
                        algbw * busFactor(kind, plan->ranks),
                        kind.empty() && !check.wrongBytes
                            ? "n/a"
                            : std::to_string(check.wrongBytes).c_str())
                 << pickText << "\n";
    llvm::outs().flush(); // one row at a time, also into a pipe
    if (check.wrongBytes) {
      anyWrong = true;
      llvm::errs() << "sdma-run: wrong output at size " << actual << ": "
                   << check.firstWrong << "\n";
    }
    if (size > hi / factor)
      break;
  }
  return anyWrong ? 3 : 0;
}
