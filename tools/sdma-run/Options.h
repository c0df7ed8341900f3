//===- Options.h - sdma-run's command line -------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TOOLS_SDMARUN_OPTIONS_H
#define SDMA_TOOLS_SDMARUN_OPTIONS_H

#include "sdma/runtime/HostMemory.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sdma::run {

struct RunOptions {
  std::string input;
  int64_t ranks = 0;
  bool ranksGiven = false;
  /// An MoE schedule's sdma.experts and major alignment (0: its own).
  int64_t experts = 0, majorAlign = 0;
  std::string variant;
  bool variantGiven = false;
  bool prelaunch = false;
  bool ceLocalKernel = false;
  int64_t engines = 0;
  std::string backend, dmaProfile, nvProfile, ceMode;
  std::vector<int> devices;
  unsigned timeoutMs = 5000;
  /// An all-to-allv's run-time counts.
  rt::CountPattern counts;
  uint64_t minBytes = 0, maxBytes = 0;
  unsigned factor = 4, iters = 5;
  std::string emitHip, emitPlan, emitPackets;
  std::string packetCompletion, sdmaTarget;
  int64_t maxChunkBytes = 0;
  bool compileOnly = false;
  std::string outputDir;
};

/// Parses and checks the command line (SDMA_MEMORY_BUDGET is set from
/// --memory-budget). Returns -1 with `options` filled, else the exit status
/// (0 after --help or --version, 1 or 2 after an error message).
int parseOptions(int argc, char **argv, RunOptions &options);

} // namespace sdma::run

#endif // SDMA_TOOLS_SDMARUN_OPTIONS_H
