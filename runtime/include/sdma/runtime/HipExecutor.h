//===- HipExecutor.h - load/store kernels on AMD GPUs ------------*- C++
//-*-===//
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

#ifndef SDMA_RUNTIME_HIPEXECUTOR_H
#define SDMA_RUNTIME_HIPEXECUTOR_H

#include "sdma/runtime/CudaExecutor.h"

namespace sdma::rt::hip {

/// Compiles a load/store program's source (with the HIP prelude) to an AMD
/// code object for `arch` (e.g. "gfx90a") with hipRTC. Needs no GPU.
bool compileWithHipRtc(const std::string &source, const std::string &name,
                       const std::string &arch, std::string &code,
                       std::string &error);

class HipLdstExecutor {
public:
  /// "no GPU: ..." where HIP or an AMD device is missing.
  static std::unique_ptr<HipLdstExecutor> create(const LdstProgram &program,
                                                 const CudaOptions &options,
                                                 std::string &error);
  ~HipLdstExecutor();
  const CompileInfo &compileInfo() const { return compile_; }
  bool prepare(size_t chunkBytes, std::string &error);
  bool upload(const HostMemory &memory, std::string &error);
  bool download(HostMemory &memory, std::string &error);
  bool run(std::string &error);

private:
  struct State;
  explicit HipLdstExecutor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  CompileInfo compile_;
};

} // namespace sdma::rt::hip

#endif // SDMA_RUNTIME_HIPEXECUTOR_H
