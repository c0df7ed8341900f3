//===- sdma-plan-fuzz.cpp - libFuzzer target for the runtime's loaders ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Arbitrary bytes as a plan, a packet plan, a load/store program, an NVIDIA
// cost-model profile and a DMA timing profile: each must be accepted or
// rejected with a short error, never crash; accepted ones go on to the CPU
// executors (FuzzTargets.h says what runs on each). SDMA_FUZZ_TARGET=plan,
// packets, ldst, nvprofile or dmaprofile fuzzes one target (default: all).
// Build and run: scripts/fuzz-runtime.sh.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *target = std::getenv("SDMA_FUZZ_TARGET");
  std::string_view text(reinterpret_cast<const char *>(data), size);
  uint64_t variant = size ? data[size / 2] ^ size : 0;
  std::string why = sdma::fuzz::fuzzOne(text, target ? target : "", variant);
  if (!why.empty()) {
    std::fprintf(stderr, "sdma-plan-fuzz: %s\n", why.c_str());
    __builtin_trap();
  }
  return 0;
}
