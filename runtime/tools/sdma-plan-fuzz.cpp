//===- sdma-plan-fuzz.cpp - libFuzzer target for the runtime's loaders ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Arbitrary bytes as a plan, a packet plan, a load/store program and an
// NVIDIA cost-model profile: each must be accepted or rejected with an
// error, never crash. An accepted plan also has its cost-model features
// computed and is run on the simulator (small chunks, bounded steps), an
// accepted packet plan decoded, listed and run on the packet simulator,
// whose checks must hold or fail with an error. Build and run:
// scripts/fuzz-runtime.sh.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstProgram.h"
#include "sdma/runtime/NvTimingModel.h"
#include "sdma/runtime/Packets.h"
#include "sdma/runtime/Simulator.h"

#include <string>

using namespace sdma::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  if (std::optional<Plan> plan = Plan::parse(text, error)) {
    // Keep the simulated memory small: the fuzzer explores structure.
    int64_t chunks = 0;
    for (const Buffer &buffer : plan->buffers)
      chunks += buffer.chunks;
    if (chunks * plan->ranks <= (1 << 16)) {
      HostMemory memory(*plan, 4);
      fillInputs(*plan, memory);
      SimulatorOptions options;
      options.maxSteps = 1 << 16;
      options.adversarial = size % 2;
      if (simulate(*plan, memory, options, error))
        (void)checkOutputs(*plan, memory);
    }
    // The cost model's features of any accepted plan, on 1-3 GPUs.
    for (int devices = 1; devices <= 3; ++devices)
      for (NvExecutor executor : {NvExecutor::Ldst, NvExecutor::Ce,
                                  NvExecutor::CeBatch, NvExecutor::CeGraph})
        (void)nvFeatures(*plan, 4096, executor, devices);
    (void)nvBatchApplies(*plan);
  } else if (error.empty()) {
    __builtin_trap(); // a rejection must say why
  }
  error.clear();
  if (std::optional<PacketPlan> packets = PacketPlan::parse(text, error)) {
    std::string listing;
    if (!packetListing(*packets, listing, error) && error.empty())
      __builtin_trap();
    int64_t chunks = 0;
    for (const Buffer &buffer : packets->buffers)
      chunks += buffer.chunks;
    uint64_t chunk = packets->chunkAlign;
    if (chunk <= uint64_t(packets->maxChunkBytes) &&
        chunks * packets->ranks * chunk <= (1 << 20)) {
      Plan layout = packets->layout();
      HostMemory memory(layout, chunk);
      fillInputs(layout, memory);
      PacketSimOptions options;
      options.seed = size % 3;
      error.clear();
      if (simulatePackets(*packets, memory, options, error))
        (void)checkOutputs(layout, memory);
      else if (error.empty())
        __builtin_trap();
    }
  } else if (error.empty()) {
    __builtin_trap();
  }
  error.clear();
  if (!LdstProgram::parse(text, error) && error.empty())
    __builtin_trap();
  error.clear();
  if (std::optional<NvTimingProfile> profile =
          NvTimingProfile::parse(text, error)) {
    for (int devices = 0; devices <= 9; ++devices)
      (void)profile->coefficientsFor(devices);
  } else if (error.empty()) {
    __builtin_trap();
  }
  return 0;
}
