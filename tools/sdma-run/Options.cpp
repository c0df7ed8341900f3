//===- Options.cpp - sdma-run's command line ------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "ToolOptions.h"
#include "sdma/Compiler/Compile.h"
#include "sdma/Support/InputGuard.h"
#include "sdma/runtime/BackendRegistry.h"
#include "sdma/runtime/MemoryBudget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using llvm::StringRef;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("sdma-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::cat(runCategory),
                                      cl::desc("<schedule.mlir>"));
static cl::opt<int64_t>
    ranksOpt("ranks", cl::cat(runCategory),
             cl::desc("rank count (default: the schedule's own fixed count)"),
             cl::init(0));
static cl::opt<int64_t> expertsOpt(
    "experts", cl::cat(runCategory),
    cl::desc("local experts per rank of an MoE schedule (sdma.experts)"),
    cl::init(0));
static cl::opt<int64_t> majorAlignOpt(
    "major-align", cl::cat(runCategory),
    cl::desc("rows an MoE schedule's expert-major segments are padded to"),
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
static cl::opt<bool> ceLocalKernel(
    "ce-local-kernel", cl::cat(runCategory),
    cl::desc("with --backend=cuda-ce: a queue run's copies within one GPU as "
             "one copy-list kernel launch (one graph node per run) instead "
             "of a cuMemcpy each"),
    cl::init(false));
static cl::list<int> devicesOpt(
    "devices", cl::CommaSeparated, cl::cat(runCategory),
    cl::desc("GPUs to spread the ranks over (default: all on GPU 0)"));
static cl::opt<unsigned> timeoutMs("timeout-ms", cl::cat(runCategory),
                                   cl::desc("GPU waits fail after this long"),
                                   cl::init(5000));
static cl::opt<std::string> countsOpt(
    "counts", cl::cat(runCategory),
    cl::desc(
        "an all-to-allv's run-time counts: uniform (every pair at its "
        "bound), zeros, skewed (every rank to rank 0 only), random[:SEED]"),
    cl::init("uniform"));
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
static cl::opt<std::string> sdmaTarget(
    "sdma-target", cl::cat(runCategory),
    cl::desc("SDMA target profile the packets are built for: gfx9 "
             "(conservative: 4 MiB per packet, no swap), gfx942 (MI300X, "
             "recent firmware) or gfx950 (MI355X)"),
    cl::init("gfx9"));
static cl::opt<int64_t> maxChunkBytes(
    "max-chunk-bytes", cl::cat(runCategory),
    cl::desc("largest chunk the packet program supports (splits packets; "
             "0: 64 MiB or the target's packet limit, whichever is less)"),
    cl::init(0));

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

/// Checks the options that do not need the schedule; an error message or
/// an empty string.
static std::string checkOptions(uint64_t &lo, uint64_t &hi) {
  if (!llvm::is_contained(sdma::dmaVariants(), variantOpt))
    return "unknown --variant '" + variantOpt + "' (pcpy, bcst, swap or b2b)";
  if (backendOpt != "auto" && !sdma::rt::findBackend(backendOpt))
    return "unknown --backend '" + backendOpt + "' (auto, " +
           sdma::rt::backendNames() + ")";
  if (ceMode != "plain" && ceMode != "batch" && ceMode != "graph")
    return "unknown --ce-mode '" + ceMode + "' (plain, batch or graph)";
  if (packetCompletion != "atomic" && packetCompletion != "fence")
    return "unknown --packet-completion '" + packetCompletion +
           "' (atomic or fence)";
  std::vector<std::string> targets = sdma::sdmaTargets();
  if (!llvm::is_contained(targets, sdmaTarget))
    return "unknown --sdma-target '" + sdmaTarget + "' (" +
           llvm::join(llvm::ArrayRef(targets).drop_back(), ", ") + " or " +
           targets.back() + ")";
  if (!parseBytes(minBytes, lo) || !parseBytes(maxBytes, hi) || lo > hi)
    return "bad size range -b " + minBytes + " -e " + maxBytes;
  llvm::StringRef shape = llvm::StringRef(countsOpt).split(':').first;
  llvm::StringRef seed = llvm::StringRef(countsOpt).split(':').second;
  uint64_t seedValue = 0;
  if (!sdma::rt::CountPattern::known(shape.str()) ||
      (shape != "random" && !seed.empty()) ||
      (!seed.empty() && seed.getAsInteger(10, seedValue)))
    return "unknown --counts '" + countsOpt +
           "' (uniform, zeros, skewed or random[:SEED])";
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

int sdma::run::parseOptions(int argc, char **argv, RunOptions &options) {
  if (!sdma::checkToolInputs(argc, argv, {"-o", "-b", "-e", "-f"}))
    return 1;
  cl::HideUnrelatedOptions(runCategory);
  sdma::addShortHelpAlias();
  sdma::describeDefaults(expertsOpt, majorAlignOpt, variantOpt, prelaunchOpt,
                         enginesOpt, backendOpt, dmaProfile, nvProfilePath,
                         ceMode, ceLocalKernel, timeoutMs, countsOpt, emitHip,
                         minBytes, maxBytes, factor, iters, emitPlan,
                         emitPackets, packetCompletion, sdmaTarget,
                         maxChunkBytes, compileOnly, outputDir);
  sdma::installVersionPrinter("sdma-run");
  if (!sdma::parseCommandLine(argc, argv,
                              "sdma-run: compile, run and check a "
                              "collective schedule\n"))
    return 2;
  std::string error = checkOptions(options.minBytes, options.maxBytes);
  if (error.empty())
    error = applyMemoryBudget();
  if (!error.empty()) {
    // A bad value is a bad command line, as an unknown option is.
    llvm::errs() << "sdma-run: error: " << error << "\n";
    return 2;
  }
  options.input = inputFile;
  options.ranks = ranksOpt;
  options.ranksGiven = ranksOpt.getNumOccurrences() > 0;
  options.experts = expertsOpt;
  options.majorAlign = majorAlignOpt;
  options.variant = variantOpt;
  options.variantGiven = variantOpt.getNumOccurrences() > 0;
  options.prelaunch = prelaunchOpt;
  options.engines = enginesOpt;
  options.backend = backendOpt;
  options.dmaProfile = dmaProfile;
  options.nvProfile = nvProfilePath;
  options.ceMode = ceMode;
  options.ceLocalKernel = ceLocalKernel;
  options.devices.assign(devicesOpt.begin(), devicesOpt.end());
  options.timeoutMs = timeoutMs;
  auto [shape, seed] = llvm::StringRef(countsOpt).split(':');
  options.counts.shape = shape.str();
  if (!seed.empty())
    seed.getAsInteger(10, options.counts.seed);
  options.factor = factor;
  options.iters = iters;
  options.emitHip = emitHip;
  options.emitPlan = emitPlan;
  options.emitPackets = emitPackets;
  options.packetCompletion = packetCompletion;
  options.sdmaTarget = sdmaTarget;
  options.maxChunkBytes = maxChunkBytes;
  options.compileOnly = compileOnly;
  options.outputDir = outputDir;
  return -1;
}
