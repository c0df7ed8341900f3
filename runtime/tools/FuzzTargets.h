//===- FuzzTargets.h - one input through a runtime loader and executor -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the fuzzer (sdma-plan-fuzz.cpp, libFuzzer + ASan + UBSan) and the
// unit tests' replay of test/fuzz/runtime-inputs (FuzzReplayTest.cpp) do
// with one input, per target:
//   plan        Plan::parse; an accepted plan is checked (Plan::check), its
//               memory made under a small budget and run on the reference
//               simulator (bounded steps, deterministic or adversarial), its
//               outputs checked, its NVIDIA features and DMA time computed;
//   packets     PacketPlan::parse; an accepted one is listed, simulated
//               under a small budget, lifted and timed;
//   ldst        LdstProgram::parse; an accepted one gets its layout's
//               memory and the CPU executor's pre-run checks (checkRun: no
//               compiler is run);
//   nvprofile   NvTimingProfile::parse (and coefficientsFor);
//   dmaprofile  DmaTimingProfile::parse.
// Each returns "" or what broke an invariant: a rejection without a
// message, an error message longer than the loaders' cap (an echo not cut),
// an accepted input that the checks then refuse. Crashes and sanitizer
// reports are the fuzzer's to catch.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TOOLS_FUZZTARGETS_H
#define SDMA_RUNTIME_TOOLS_FUZZTARGETS_H

#include "sdma/runtime/DmaTimingModel.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/NvTimingModel.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Simulator.h"

#include <string>
#include <string_view>

namespace sdma::fuzz {

/// Small enough that every target runs fast; large enough for real plans.
constexpr uint64_t kFuzzBudget = uint64_t(4) << 20;
/// Loaders cut echoes to 64 characters and messages to 1024.
constexpr size_t kMaxError = 1100;

inline std::string rejection(const char *what, const std::string &error) {
  if (error.empty())
    return std::string(what) + ": rejected without a message";
  if (error.size() > kMaxError)
    return std::string(what) + ": an error of " + std::to_string(error.size()) +
           " characters";
  return "";
}

inline rt::DmaTimingProfile fuzzDmaProfile() {
  rt::DmaTimingProfile p;
  p.controlUs = 0.6, p.scheduleUs = 3.7, p.engineStartupUs = 3.3;
  p.perCommandUs = 0.2, p.engineAtomicUs = 0.2, p.hostSyncUs = 4;
  p.engineGBps = 55, p.linkGBps = 64;
  return p;
}

inline std::string fuzzPlan(std::string_view text, uint64_t variant) {
  using namespace rt;
  std::string error;
  std::optional<Plan> plan = Plan::parse(text, error);
  if (!plan)
    return rejection("plan", error);
  if (!plan->check(error))
    return "plan: accepted, then Plan::check says: " + error;
  MemoryBudget budget{kFuzzBudget};
  size_t chunk = 1 + variant % 8;
  if (std::optional<HostMemory> memory =
          HostMemory::create(*plan, chunk, error, budget)) {
    fillInputs(*plan, *memory);
    SimulatorOptions options;
    options.maxSteps = 1 << 16;
    options.adversarial = variant & 8;
    options.seed = variant;
    options.budget = budget;
    if (simulate(*plan, *memory, options, error))
      (void)checkOutputs(*plan, *memory);
    else if (std::string why = rejection("simulate", error); !why.empty())
      return why;
  } else if (std::string why = rejection("host memory", error); !why.empty()) {
    return why;
  }
  for (int devices = 1; devices <= 3; ++devices)
    for (NvExecutor executor : {NvExecutor::Ldst, NvExecutor::Ce,
                                NvExecutor::CeBatch, NvExecutor::CeGraph})
      (void)nvFeatures(*plan, 4096, executor, devices);
  (void)nvBatchApplies(*plan);
  if (!predictDmaTime(*plan, 4096, fuzzDmaProfile(), error))
    return rejection("predictDmaTime", error);
  return "";
}

inline std::string fuzzPacketPlan(std::string_view text, uint64_t variant) {
  using namespace rt;
  std::string error;
  std::optional<PacketPlan> packets = PacketPlan::parse(text, error);
  if (!packets)
    return rejection("packet plan", error);
  std::string listing;
  if (!packetListing(*packets, listing, error))
    if (std::string why = rejection("listing", error); !why.empty())
      return why;
  MemoryBudget budget{kFuzzBudget};
  uint64_t chunk = uint64_t(packets->chunkAlign) << (variant % 2);
  Plan layout = packets->layout();
  if (std::optional<HostMemory> memory =
          HostMemory::create(layout, chunk, error, budget)) {
    fillInputs(layout, *memory);
    PacketSimOptions options;
    options.seed = variant % 3;
    options.budget = budget;
    if (simulatePackets(*packets, *memory, options, error))
      (void)checkOutputs(layout, *memory);
    else if (std::string why = rejection("simulatePackets", error);
             !why.empty())
      return why;
  } else if (std::string why = rejection("host memory", error); !why.empty()) {
    return why;
  }
  uint64_t dwords = 0;
  for (const PacketQueue &queue : packets->queues)
    dwords += queue.image.size();
  if (dwords <= (1u << 16)) {
    if (std::optional<Plan> lifted = liftPackets(*packets, chunk, error))
      (void)predictDmaTime(*lifted, chunk, fuzzDmaProfile(), error);
    else if (std::string why = rejection("liftPackets", error); !why.empty())
      return why;
  }
  return "";
}

inline std::string fuzzLdst(std::string_view text, uint64_t variant) {
  using namespace rt;
  std::string error;
  std::optional<LdstProgram> program =
      LdstProgram::parse(std::string(text), error);
  if (!program)
    return rejection("ld/st program", error);
  MemoryBudget budget{kFuzzBudget};
  LdstCpuOptions options;
  options.budget = budget;
  options.threads = 1 + variant % 64;
  Plan layout = program->layout();
  if (!LdstCpuExecutor::checkRun(*program, options, nullptr, 0, error))
    return rejection("ld/st executor (create)", error);
  if (std::optional<HostMemory> memory =
          HostMemory::create(layout, 1 + variant % 16, error, budget)) {
    fillInputs(layout, *memory);
    if (!LdstCpuExecutor::checkRun(*program, options, &*memory,
                                   int(variant % 3), error))
      return rejection("ld/st executor (run)", error);
    (void)checkOutputs(layout, *memory);
  } else if (std::string why = rejection("host memory", error); !why.empty()) {
    return why;
  }
  return "";
}

inline std::string fuzzNvProfile(std::string_view text) {
  using namespace rt;
  std::string error;
  std::optional<NvTimingProfile> profile =
      NvTimingProfile::parse(std::string(text), error);
  if (!profile)
    return rejection("nvidia profile", error);
  for (int devices = 0; devices <= 9; ++devices)
    (void)profile->coefficientsFor(devices);
  return "";
}

inline std::string fuzzDmaProfileText(std::string_view text) {
  std::string error;
  if (!rt::DmaTimingProfile::parse(text, error))
    return rejection("dma profile", error);
  return "";
}

/// Every target in turn, or the one `target` names ("plan", "packets",
/// "ldst", "nvprofile", "dmaprofile"; "" or "all": every one).
inline std::string fuzzOne(std::string_view text, std::string_view target,
                           uint64_t variant) {
  bool all = target.empty() || target == "all";
  std::string why;
  if (all || target == "plan")
    why = fuzzPlan(text, variant);
  if (why.empty() && (all || target == "packets"))
    why = fuzzPacketPlan(text, variant);
  if (why.empty() && (all || target == "ldst"))
    why = fuzzLdst(text, variant);
  if (why.empty() && (all || target == "nvprofile"))
    why = fuzzNvProfile(text);
  if (why.empty() && (all || target == "dmaprofile"))
    why = fuzzDmaProfileText(text);
  return why;
}

} // namespace sdma::fuzz

#endif // SDMA_RUNTIME_TOOLS_FUZZTARGETS_H
