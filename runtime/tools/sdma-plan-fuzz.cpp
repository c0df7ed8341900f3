//===- sdma-plan-fuzz.cpp - libFuzzer target for the runtime's loaders ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Arbitrary bytes as a plan, a packet plan and a load/store program: each
// must be accepted or rejected with an error, never crash. An accepted plan
// is also run on the simulator (small chunks, bounded steps), an accepted
// packet plan decoded, listed and run on the packet simulator, whose checks
// must hold or fail with an error. Build and run: scripts/fuzz-runtime.sh.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstProgram.h"
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
  return 0;
}
