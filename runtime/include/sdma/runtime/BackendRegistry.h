//===- BackendRegistry.h - every backend, by name ---------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The table of backends (Executor.h's interface, one implementation per
// backend) and the factory that makes one by name:
//
//   auto executor = createExecutor("cuda-ldst", compiled, options, error);
//
// Tools list backends(), parse names with findBackend() and ask whether
// this build has one (backendBuilt: no HIP headers, no HIP backends).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_BACKENDREGISTRY_H
#define SDMA_RUNTIME_BACKENDREGISTRY_H

#include "sdma/runtime/Executor.h"

namespace sdma::rt {

/// One entry of the backend table.
struct BackendInfo {
  std::string_view name;
  /// For --help and error messages.
  std::string_view summary;
  /// It needs CompiledSchedule::ldst / ::packets.
  bool needsLdst = false, needsPackets = false;
  /// It runs on a GPU (and says "no GPU: ..." where there is none).
  bool gpu = false;
  /// Its runs may differ from each other (interleavings, epochs) and are
  /// cheap: check every run against the reference, not just the first.
  bool checkEveryRun = false;
  /// time() is a model's prediction, not a measurement.
  bool modelTimed = false;
};

/// Every backend, in the order tools list them.
const std::vector<BackendInfo> &backends();
/// The entry named `name`, or null.
const BackendInfo *findBackend(std::string_view name);
/// "sim, sdma-sim, ..." for messages.
std::string backendNames();
/// Whether this build has the backend's code (HIP needs HIP headers at
/// build time); the GPU itself is checked by createExecutor.
bool backendBuilt(std::string_view name);

/// Creates the executor `backend` for `compiled`; nullptr with `error`
/// ("no GPU: ..." where a GPU backend finds none; "unknown backend ...").
std::unique_ptr<Executor> createExecutor(std::string_view backend,
                                         const CompiledSchedule &compiled,
                                         const ExecutorOptions &options,
                                         std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_BACKENDREGISTRY_H
