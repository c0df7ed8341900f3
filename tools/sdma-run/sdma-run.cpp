//===- sdma-run.cpp - compile, run and check a schedule -------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-run SCHEDULE.mlir [--ranks=N] [--variant=pcpy|bcst|swap|b2b]
//          [--prelaunch] [--engines=N] [--backend=auto|sim|sdma-sim|
//          sdma-packets|ldst-cpu|cuda-ldst|cuda-ce|hip-ldst|hip-dma]
//          [-b MIN] [-e MAX] [-f FACTOR] [--iters=N] [--emit-plan=FILE]
//
// Runs the whole pipeline in-process (unroll, verify, lower to engine
// queues, plan), then for every message size fills the inputs with a
// pattern, executes the plan on the backend, checks every output byte and
// prints an nccl-tests style table. A schedule that fails verification never
// reaches a backend. Exit status: 0 all correct, 1 an error, 2 wrong bytes.
//
//===----------------------------------------------------------------------===//

#include "InputGuard.h"
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
#endif
#include "sdma/runtime/NvTimingModel.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Simulator.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<schedule.mlir>"));
static cl::opt<int64_t> ranksOpt("ranks", cl::desc("rank count (default 8)"),
                                 cl::init(8));
static cl::opt<std::string> variantOpt("variant",
                                       cl::desc("pcpy | bcst | swap | b2b"),
                                       cl::init("pcpy"));
static cl::opt<bool> prelaunchOpt("prelaunch", cl::desc("prelaunched queues"));
static cl::opt<int64_t>
    enginesOpt("engines", cl::desc("engines per rank (0: R)"), cl::init(0));
static cl::opt<std::string> backendOpt(
    "backend",
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
    dmaProfile("dma-profile",
               cl::desc("DMA timing profile for --backend=sdma-sim"),
               cl::init(SDMA_DEFAULT_DMA_PROFILE));
static cl::opt<std::string>
    nvProfilePath("nv-profile",
                  cl::desc("NVIDIA cost-model profile for --backend=auto"),
                  cl::init(SDMA_DEFAULT_NV_PROFILE));
static cl::opt<std::string>
    ceMode("ce-mode",
           cl::desc("plain | batch | graph: how --backend=cuda-ce issues a "
                    "plan (cuMemcpyBatchAsync per run of copies; a replayed "
                    "CUDA graph)"),
           cl::init("plain"));
static cl::list<int> devicesOpt(
    "devices", cl::CommaSeparated,
    cl::desc("GPUs to spread the ranks over (default: all on GPU 0)"));
static cl::opt<unsigned> timeoutMs("timeout-ms",
                                   cl::desc("GPU waits fail after this long"),
                                   cl::init(5000));
static cl::opt<std::string> emitHip("emit-hip",
                                    cl::desc("also write the kernel here"));
static cl::opt<std::string> minBytes("b",
                                     cl::desc("smallest size (bytes, "
                                              "K/M/G suffixes)"),
                                     cl::init("1K"));
static cl::opt<std::string> maxBytes("e", cl::desc("largest size"),
                                     cl::init("1M"));
static cl::opt<unsigned> factor("f", cl::desc("size multiplier per row"),
                                cl::init(4));
static cl::opt<unsigned> iters("iters", cl::desc("timed runs per size"),
                               cl::init(5));
static cl::opt<std::string> emitPlan("emit-plan",
                                     cl::desc("also write the plan here"));
static cl::opt<std::string>
    emitPackets("emit-packets",
                cl::desc("also write the AMD SDMA packet plan here"));
static cl::opt<std::string>
    packetCompletion("packet-completion",
                     cl::desc("atomic | fence (how packet queues signal)"),
                     cl::init("atomic"));
static cl::opt<int64_t> maxChunkBytes(
    "max-chunk-bytes",
    cl::desc("largest chunk the packet program supports (splits packets)"),
    cl::init(64 << 20));

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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (!sdma::checkToolInputs(argc, argv, {}))
    return 1;
  cl::ParseCommandLineOptions(argc, argv,
                              "sdma: compile, run and check a "
                              "collective schedule\n");
  auto fail = [](const Twine &message) {
    llvm::errs() << "sdma-run: error: " << message << "\n";
    return 1;
  };
  if (!llvm::is_contained(sdma::getDMAVariants(), variantOpt))
    return fail("unknown --variant '" + variantOpt +
                "' (pcpy, bcst, swap or b2b)");
  if (backendOpt != "auto" && backendOpt != "sim" &&
      backendOpt != "cuda-ldst" && backendOpt != "cuda-ce" &&
      backendOpt != "sdma-sim" && backendOpt != "sdma-packets" &&
      backendOpt != "hip-ldst" && backendOpt != "hip-dma" &&
      backendOpt != "ldst-cpu")
    return fail("unknown --backend '" + backendOpt +
                "' (auto, sim, sdma-sim, sdma-packets, ldst-cpu, cuda-ldst, "
                "cuda-ce, hip-ldst or hip-dma)");
  if (ceMode != "plain" && ceMode != "batch" && ceMode != "graph")
    return fail("unknown --ce-mode '" + ceMode + "' (plain, batch or graph)");
  uint64_t lo, hi;
  if (!parseBytes(minBytes, lo) || !parseBytes(maxBytes, hi) || lo > hi)
    return fail("bad size range -b " + minBytes + " -e " + maxBytes);
  if (factor < 2)
    return fail("-f must be at least 2");
  if (iters < 1)
    return fail("--iters must be at least 1");

  // Compile.
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
  // The load/store kernel comes from the flat, verified schedule; the DMA
  // plan from the rest of the pipeline.
  std::string hipSource;
  {
    PassManager verifyPm(&context);
    sdma::SdmaUnrollOptions unroll;
    unroll.ranks = ranksOpt;
    verifyPm.addPass(sdma::createSdmaUnroll(unroll));
    verifyPm.addPass(sdma::createSdmaVerify());
    OwningOpRef<ModuleOp> flat(module.get().clone());
    if (failed(verifyPm.run(*flat)))
      return fail("'" + inputFile +
                  "' did not compile (see above); nothing "
                  "was run");
    llvm::raw_string_ostream hipStream(hipSource);
    if (failed(sdma::translateToHIP(*flat, hipStream)))
      return 1;
  }
  if (!emitHip.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(emitHip, ec);
    if (ec)
      return fail("cannot write '" + emitHip + "': " + ec.message());
    out << hipSource;
  }
  OwningOpRef<ModuleOp> original(module.get().clone());
  PassManager pm(&context);
  sdma::LowerToDMAOptions options;
  options.ranks = ranksOpt;
  options.variant = variantOpt;
  options.prelaunch = prelaunchOpt;
  options.engines = enginesOpt;
  if (failed(sdma::buildLowerToDMAPipeline(pm, options)) ||
      failed(pm.run(*module)))
    return fail("'" + inputFile +
                "' did not compile (see above); nothing "
                "was run");
  std::string planText;
  llvm::raw_string_ostream planStream(planText);
  if (failed(sdma::translateToPlan(*module, planStream)))
    return 1;
  if (!emitPlan.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(emitPlan, ec);
    if (ec)
      return fail("cannot write '" + emitPlan + "': " + ec.message());
    out << planText;
  }

  // The AMD packet program, from the same engine-level schedule.
  std::string packetText;
  if (!emitPackets.empty() || backendOpt == "sdma-packets") {
    PassManager packetPm(&context);
    sdma::ConvertSdmaToSdmaPktOptions packetOptions;
    packetOptions.completion = packetCompletion;
    packetOptions.maxChunkBytes = maxChunkBytes;
    packetPm.addPass(sdma::createConvertSdmaToSdmaPkt(packetOptions));
    OwningOpRef<ModuleOp> packets(module.get().clone());
    llvm::raw_string_ostream packetStream(packetText);
    if (failed(packetPm.run(*packets)) ||
        failed(sdma::translateToPackets(*packets, packetStream)))
      return fail("lowering to SDMA packets failed (see above)");
  }
  if (!emitPackets.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(emitPackets, ec);
    if (ec)
      return fail("cannot write '" + emitPackets + "': " + ec.message());
    out << packetText;
  }

  // Load it as any host program would.
  std::string error;
  std::optional<sdma::rt::Plan> plan = sdma::rt::Plan::parse(planText, error);
  if (!plan)
    return fail(error);
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
  // Auto without --variant: every DMA variant is a candidate too.
  std::vector<std::pair<std::string, sdma::rt::Plan>> candidates{
      {variantOpt, *plan}};
  if (nvProfile && variantOpt.getNumOccurrences() == 0)
    for (StringRef variant : sdma::getDMAVariants()) {
      if (variant == variantOpt)
        continue;
      OwningOpRef<ModuleOp> copy(original.get().clone());
      PassManager variantPm(&context);
      sdma::LowerToDMAOptions variantOptions;
      variantOptions.ranks = ranksOpt;
      variantOptions.variant = variant.str();
      variantOptions.prelaunch = prelaunchOpt;
      variantOptions.engines = enginesOpt;
      std::string text;
      llvm::raw_string_ostream variantStream(text);
      if (failed(sdma::buildLowerToDMAPipeline(variantPm, variantOptions)) ||
          failed(variantPm.run(*copy)) ||
          failed(sdma::translateToPlan(*copy, variantStream)))
        return fail("the " + variant.str() + " variant did not compile");
      std::optional<sdma::rt::Plan> other = sdma::rt::Plan::parse(text, error);
      if (!other)
        return fail(error);
      candidates.emplace_back(variant.str(), std::move(*other));
    }
  std::string kind = plan->collective ? plan->collective->kind : "";
  int output = plan->collective ? plan->collective->output : 0;
  int64_t outChunks = plan->buffers[output].chunks;

  llvm::outs() << "# sdma-run " << inputFile << "\n"
               << "# schedule " << plan->schedule << "  collective "
               << (kind.empty() ? "(none: outputs unchecked)" : kind)
               << "  ranks " << plan->ranks << "  variant " << variantOpt
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
  for (uint64_t size = lo; size <= hi; size *= factor) {
    uint64_t chunk = std::max<uint64_t>(1, size / outChunks);
    if (packetPlan) {
      uint64_t align = packetPlan->chunkAlign;
      chunk = std::max<uint64_t>(align, chunk - chunk % align);
    }
    uint64_t actual = chunk * outChunks;
    sdma::rt::HostMemory memory(*plan, chunk);
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
      sdma::rt::HostMemory expected(*plan, chunk);
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
      sdma::rt::HostMemory expected(*plan, chunk);
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
                        kind.empty() ? "n/a"
                                     : std::to_string(check.wrongBytes).c_str())
                 << pickText;
    llvm::outs() << "\n";
    if (check.wrongBytes) {
      anyWrong = true;
      llvm::errs() << "sdma-run: wrong output at size " << actual << ": "
                   << check.firstWrong << "\n";
    }
    if (size > hi / factor)
      break;
  }
  return anyWrong ? 2 : 0;
}
