//===- sdma-run.cpp - compile, run and check a schedule -------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-run SCHEDULE.mlir [--ranks=N] [--variant=pcpy|bcst|swap|b2b]
//          [--prelaunch] [--engines=N] [--backend=auto|sim|sdma-sim|
//          sdma-packets|ldst-cpu|cuda-ldst|cuda-ce|hip-ldst|hip-dma]
//          [-b MIN] [-e MAX] [-f FACTOR] [--iters=N] [--emit-plan=FILE]
//          [--emit-packets=FILE] [--sdma-target=gfx9|gfx942|gfx950]
// sdma-run SCHEDULE.mlir --compile-only -o DIR
//
// A thin driver: sdma::compile (lib/Compiler) runs the whole pipeline
// in-process (unroll, verify, lower to engine queues, plan, kernel,
// packets); the backend is an rt::Executor from the runtime's backend table;
// Sweep.cpp then, for every message size, fills the inputs with a pattern,
// runs, checks every byte (rt::runAndCheck) and prints an nccl-tests
// style table. A schedule that fails verification never
// reaches a backend. Exit status: 0 all correct, 1 an error, 2 a bad command
// line, 3 wrong bytes. For tests, SDMA_RUN_FAIL_VARIANT=V makes DMA variant V
// fail to compile (SDMA_FORCE_NO_GPU=1 hides the GPUs).
//
//===----------------------------------------------------------------------===//

#include "Options.h"
#include "Progress.h"
#include "Sweep.h"
#include "ToolOptions.h"
#include "sdma/Compiler/Compile.h"
#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/LdstProgram.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>
#include <numeric>

using llvm::StringRef;
using llvm::Twine;
namespace rt = sdma::rt;

using namespace sdma;
using sdma::run::RunOptions;

static int fail(const Twine &message) {
  llvm::errs() << "sdma-run: error: " << message << "\n";
  return 1;
}

/// Writes `text` to `path`; false after saying why not.
static bool writeFile(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << text;
    out.close();
    ec = out.error();
  }
  if (ec)
    fail("cannot write '" + path + "': " + ec.message());
  return !ec;
}

/// The compile the options ask for.
static CompileOptions compileOptions(const RunOptions &run,
                                     ProgressLines &progress) {
  CompileOptions options;
  if (run.ranksGiven)
    options.ranks = run.ranks;
  if (run.experts)
    options.experts = run.experts;
  if (run.majorAlign)
    options.majorAlign = run.majorAlign;
  // With --variant, that one (its failure is an error). Without, it first,
  // then the others: a variant that does not compile is skipped; auto and
  // --compile-only take every variant that compiles.
  options.variants = {run.variant};
  if (!run.variantGiven)
    for (const std::string &variant : dmaVariants())
      if (variant != run.variant)
        options.variants.push_back(variant);
  using Policy = CompileOptions::VariantPolicy;
  options.policy = run.variantGiven ? Policy::Each
                   : run.compileOnly || run.backend == "auto"
                       ? Policy::AllThatCompile
                       : Policy::FirstThatCompiles;
  options.prelaunch = run.prelaunch;
  options.engines = run.engines;
  using Packets = CompileOptions::Packets;
  options.packets = run.compileOnly ? Packets::All
                    : !run.emitPackets.empty() || run.backend == "sdma-packets"
                        ? Packets::Primary
                        : Packets::None;
  options.packetCompletion = run.packetCompletion;
  options.sdmaTarget = run.sdmaTarget;
  options.maxChunkBytes = run.maxChunkBytes;
  options.bufferName = run.input;
  options.diagnostics = [](std::string_view text) { llvm::errs() << text; };
  options.progress = [&progress](const std::string &line) {
    progress.step(line);
  };
  if (const char *failing = std::getenv("SDMA_RUN_FAIL_VARIANT"))
    options.failVariantForTesting = failing;
  return options;
}

/// --compile-only: the load/store kernel and each variant's plan and packet
/// plan into `run.outputDir`, each file named on stdout.
static int writeCompiled(const RunOptions &run, const Artifacts &out) {
  if (std::error_code ec = llvm::sys::fs::create_directories(run.outputDir))
    return fail("cannot create '" + run.outputDir + "': " + ec.message());
  StringRef stem = llvm::sys::path::stem(run.input);
  auto write = [&](const Twine &name, StringRef text, const Twine &what) {
    llvm::SmallString<128> path(run.outputDir);
    llvm::sys::path::append(path, name);
    if (!writeFile(path, text))
      return false;
    llvm::outs() << "wrote " << path << "  (" << what << ")\n";
    llvm::outs().flush();
    return true;
  };
  if (!write(stem + ".hip", out.ldstProgram, "load/store kernel"))
    return 1;
  for (const VariantArtifacts &variant : out.variants) {
    std::string error;
    std::optional<rt::Plan> plan = rt::Plan::parse(variant.plan, error);
    if (!plan)
      return fail("the runtime rejects its plan: " + error);
    size_t commands = plan->commandCount();
    std::string base = (stem + "." + variant.variant).str();
    if (!write(base + ".plan.json", variant.plan,
               "plan, variant " + variant.variant + ": " +
                   Twine(plan->streams.size()) + " engine queues, " +
                   Twine(commands) + " commands") ||
        !write(base + ".packets.json", variant.packets,
               "AMD SDMA packet plan, variant " + variant.variant + ", " +
                   run.packetCompletion + " completion, target " +
                   run.sdmaTarget))
      return 1;
  }
  return 0;
}

/// `first` (a schedule that reads counts at run time) compiled again with
/// the count tables --counts gives, so that it has DMA variants; the count
/// tables' contents at the end go to `hostTables` by buffer index.
static std::optional<Artifacts> compileForCounts(
    llvm::StringRef text, const RunOptions &run, const Artifacts &first,
    CompileOptions options,
    std::vector<std::pair<int, std::vector<std::vector<int64_t>>>> &hostTables,
    std::string &why) {
  std::optional<rt::LdstProgram> program =
      rt::LdstProgram::parse(first.ldstProgram, why);
  if (!program)
    return std::nullopt;
  rt::Plan layout = program->layout();
  if (layout.collective &&
      layout.collective->kind.rfind("all_to_allv_2d", 0) == 0 &&
      rt::moeCounts(layout, run.counts, &why).empty()) {
    why = "cannot run '" + run.input + "' here: " + why +
          " (fewer --experts or a smaller --major-align)";
    return std::nullopt;
  }
  std::optional<rt::HostMemory> memory = rt::HostMemory::create(layout, 8, why);
  if (!memory)
    return std::nullopt;
  rt::fillInputs(layout, *memory, run.counts);
  for (size_t b = 0; b < layout.buffers.size(); ++b) {
    if (!layout.buffers[b].counts)
      continue;
    std::vector<std::vector<int64_t>> &table =
        options.countTables[layout.buffers[b].name];
    for (int r = 0; r < layout.ranks; ++r) {
      table.emplace_back(layout.buffers[b].chunks);
      std::memcpy(table.back().data(), memory->buffer(r, int(b)),
                  table.back().size() * sizeof(int64_t));
    }
  }
  Artifacts out = compile(text, options);
  if (!out.ok) {
    why = out.error + (out.diagnosed ? " (see above)" : "");
    return std::nullopt;
  }
  for (const auto &[name, tables] : out.resolvedCounts)
    for (size_t b = 0; b < layout.buffers.size(); ++b)
      if (layout.buffers[b].name == name)
        hostTables.push_back({int(b), tables});
  return out;
}

/// The executors' options from the command line.
static rt::ExecutorOptions executorOptions(const RunOptions &run) {
  rt::ExecutorOptions options;
  uint64_t timeoutNs = uint64_t(run.timeoutMs) * 1000000ull;
  options.cuda.devices = options.hip.devices = run.devices;
  options.cuda.timeoutNs = options.hip.timeoutNs = timeoutNs;
  options.cpu.timeoutNs = timeoutNs;
  options.cpu.blocks = 2;
  options.ce.batch = run.ceMode == "batch";
  options.ce.graph = run.ceMode == "graph";
  options.ce.localCopyKernel = run.ceLocalKernel;
  options.dmaProfile = run.dmaProfile;
  return options;
}

int main(int argc, char **argv) {
  sdma::tuneAllocator();
  llvm::InitLLVM init(argc, argv);
  RunOptions run;
  if (int status = sdma::run::parseOptions(argc, argv, run); status >= 0)
    return status;
  ProgressLines progress("sdma-run");

  // Compile.
  auto file = llvm::MemoryBuffer::getFile(run.input);
  if (!file)
    return fail("cannot open '" + run.input + "'");
  Artifacts out = compile((*file)->getBuffer(), compileOptions(run, progress));
  if (!out.proof.empty())
    llvm::outs() << "# " << out.proof << "\n";
  if (!out.proof.empty() && !out.declaresCollective)
    llvm::errs() << "sdma-run: warning: '" << run.input
                 << "' declares no collective (`implements`): only agreement "
                    "with the reference simulator is checked\n";
  for (const SkippedVariant &skipped : out.skipped)
    llvm::errs() << "sdma-run: warning: variant " << skipped.variant
                 << " skipped: " << skipped.reason << "\n";
  if (!out.ok)
    return fail(out.error + (out.ranksOpen   ? ": give --ranks=N"
                             : out.diagnosed ? " (see above); nothing was run"
                             : out.variants.empty() && !out.skipped.empty()
                                 ? " (see the warnings above; --variant=V "
                                   "shows V's diagnostics); nothing was run"
                                 : ""));
  if (!run.emitHip.empty() && !writeFile(run.emitHip, out.ldstProgram))
    return 1;
  if (run.compileOnly)
    return writeCompiled(run, out);
  // Counts read at run time: the host knows --counts, so the DMA variants
  // are built for them too (sdma-resolve-counts). A plan backend runs one
  // (the host writes the receive counts it does not move); a load/store
  // one runs the kernel, which reads the counts itself, and the reference
  // simulator runs the plan: the two are compared byte for byte.
  std::vector<std::pair<int, std::vector<std::vector<int64_t>>>> hostTables;
  bool runtimeCounts = out.runtimeCounts;
  if (runtimeCounts) {
    std::string why;
    std::optional<Artifacts> resolved =
        compileForCounts((*file)->getBuffer(), run, out,
                         compileOptions(run, progress), hostTables, why);
    if (!resolved)
      return fail(why);
    out = std::move(*resolved);
  }
  // A schedule that reduces or reads counts at run time (sdma.copyv) has
  // no DMA plan: its load/store program runs alone, checked against the
  // collective's definition (an all-to-allv's against its --counts).
  if (out.variants.empty())
    out.variants.push_back({"ldst", "", "", 0, 0});
  const VariantArtifacts &primary = out.variants.front();
  if ((!run.emitPlan.empty() && !writeFile(run.emitPlan, primary.plan)) ||
      (!run.emitPackets.empty() &&
       !writeFile(run.emitPackets, primary.packets)))
    return 1;

  // Load it as any host program would, and make the backend.
  std::string error;
  std::vector<std::pair<std::string, rt::CompiledSchedule>> loaded;
  for (const VariantArtifacts &variant : out.variants) {
    std::optional<rt::CompiledSchedule> one = rt::CompiledSchedule::parse(
        variant.plan, out.ldstProgram, variant.packets, error);
    if (!one)
      return fail("the runtime rejects its output: " + error);
    loaded.emplace_back(variant.variant, std::move(*one));
  }
  const rt::CompiledSchedule &compiled = loaded.front().second;
  rt::ExecutorOptions options = executorOptions(run);
  bool isAuto = run.backend == "auto";
  std::unique_ptr<rt::Executor> executor = rt::createExecutor(
      isAuto ? "cuda-ldst" : run.backend, compiled, options, error);
  std::string note;
  if (!executor && !isAuto)
    return fail(error);
  if (!executor) { // auto without a GPU: the simulator, and the model's picks
    note = " (" + error + ")";
    executor = rt::createExecutor(
        compiled.plan.hasQueues && !runtimeCounts ? "sim" : "ldst-cpu",
        compiled, options, error);
    if (!executor)
      return fail(error);
  }
  std::string backend = executor->name();
  note = executor->description() + note;
  std::unique_ptr<sdma::run::ExecutorChoice> choice;
  if (isAuto && compiled.plan.hasQueues && !runtimeCounts) {
    std::optional<rt::NvTimingProfile> profile =
        rt::NvTimingProfile::load(run.nvProfile, error);
    if (!profile)
      return fail(error);
    bool onGpu = backend != "sim";
    note += (onGpu ? "; per size, the executor the NVIDIA cost model ("
                   : "; the NVIDIA cost model (") +
            run.nvProfile + ") " +
            (onGpu ? "predicts fastest" : "would pick, if there were one");
    choice = sdma::run::autoChoice(
        std::move(executor), onGpu, std::move(*profile), std::move(loaded),
        options, std::max<int>(1, run.devices.size()));
  } else {
    choice = sdma::run::fixedChoice(std::move(executor));
  }

  const rt::Plan &plan = compiled.plan;
  size_t commands = plan.commandCount();
  std::string kind = plan.collective ? plan.collective->kind : "";
  llvm::outs() << "# sdma-run " << run.input << "\n"
               << "# schedule " << plan.schedule << "  collective "
               << (kind.empty() ? "(none: outputs unchecked)" : kind)
               << "  ranks " << plan.ranks << "  variant " << primary.variant
               << (run.prelaunch ? "+prelaunch" : "") << "\n"
               << "# backend " << backend << " (" << note << ")\n"
               << "# " << plan.streams.size() << " engine queues, " << commands
               << " commands; size = output bytes per rank\n";
  sdma::run::SweepOptions sweep;
  sweep.minBytes = run.minBytes;
  sweep.maxBytes = run.maxBytes;
  sweep.factor = run.factor;
  sweep.iters = run.iters;
  sweep.backend = rt::findBackend(backend);
  sweep.counts = run.counts;
  sweep.hostTables = hostTables;
  sweep.hostTablesOnActual = !sweep.backend || !sweep.backend->needsLdst;
  sweep.chunkAlign = compiled.packets && backend == "sdma-packets"
                         ? compiled.packets->chunkAlign
                         : 1;
  // Chunks of typed buffers hold whole elements.
  for (const rt::Buffer &buffer : plan.buffers)
    sweep.chunkAlign =
        std::lcm<size_t>(sweep.chunkAlign, buffer.elementBytes());
  return sdma::run::sweep(*choice, plan, sweep, progress);
}
