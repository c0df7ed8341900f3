//===- HipLdstExecutor.h - load/store kernels on AMD GPUs -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The same generated source as the CUDA executor, built by hipRTC (with
// the HIP prelude) for the device's gfx architecture and launched with
// hipModuleLaunchKernel, through HipKernel; its memory is a HipDeviceSet.
// Built where the HIP headers are (Debian's HIP 5.2); there is no AMD GPU
// in this project's reach, so only compilation (HipKernel::compile, for
// gfx90a/gfx908) runs in CI and the launch path has never run on hardware.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPLDSTEXECUTOR_H
#define SDMA_RUNTIME_LIB_HIP_HIPLDSTEXECUTOR_H

#include "sdma/runtime/Executor.h"

namespace sdma::rt {

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
