//===- HipLdstExecutor.h - load/store kernels on AMD GPUs -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The same generated source as the CUDA executor, compiled by hipRTC (with
// the HIP prelude) for the device's gfx architecture and launched with
// hipModuleLaunchKernel. libamdhip64 is dlopen'ed (hipRTC lives in it in
// HIP 5.2), so binaries load where HIP is absent. Built where the HIP
// headers are (Debian's HIP 5.2); there is no AMD GPU in this project's
// reach, so only compilation (compileWithHipRtc, for gfx90a/gfx908) runs in
// CI and the launch path has never run on hardware.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPLDSTEXECUTOR_H
#define SDMA_RUNTIME_LIB_HIP_HIPLDSTEXECUTOR_H

#include "sdma/runtime/Executor.h"

namespace sdma::rt {

/// Compiles a load/store program's source (with the HIP prelude) to an AMD
/// code object for `arch` (e.g. "gfx90a") with hipRTC. Needs no GPU.
bool compileWithHipRtc(const std::string &source, const std::string &name,
                       const std::string &arch, std::string &code,
                       std::string &error);
/// The program's code object for `info.arch` (e.g. "gfx90a"): from the
/// kernel cache, else compiled by hipRTC (then cached); `info` says which.
bool buildLdstCodeObject(const LdstProgram &program,
                         const std::string &cacheDirectory, CompileInfo &info,
                         std::string &code, std::string &error);

class HipLdstExecutor : public Executor {
public:
  /// "no GPU: ..." where HIP or an AMD device is missing.
  static std::unique_ptr<HipLdstExecutor> create(const LdstProgram &program,
                                                 const HipOptions &options,
                                                 std::string &error);
  ~HipLdstExecutor() override;

  std::string name() const override { return "hip-ldst"; }
  std::string description() const override {
    return "load/store kernel, hipRTC; host times of whole runs, median";
  }
  const CompileInfo *compileInfo() const override { return &compile_; }
  bool prepare(size_t chunkBytes, std::string &error) override;
  bool upload(const HostMemory &memory, std::string &error) override;
  bool download(HostMemory &memory, std::string &error) override;
  /// Enqueues one run on the executor's stream.
  bool launch(std::string &error) override;
  /// Waits (bounded) for the launched runs; a timed-out wait in the kernel
  /// is reported with the rank, flag slot and values.
  bool wait(std::string &error) override;
  /// Host time of each whole run.
  bool time(int runs, std::vector<double> &microseconds,
            std::string &error) override;

private:
  struct State;
  explicit HipLdstExecutor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  CompileInfo compile_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HIP_HIPLDSTEXECUTOR_H
