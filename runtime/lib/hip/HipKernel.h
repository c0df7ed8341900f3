//===- HipKernel.h - a kernel built by hipRTC, loaded, launched -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// CudaKernel's twin on AMD GPUs, and the one way the runtime runs generated
// code there: program text, after the HIP prelude, is built into a code
// object by hipRTC for a device's gfx architecture through the kernel
// cache; a HipKernel loads the code object on one GPU (module, function)
// and launches it on a stream. The load/store executor and the
// communicator's HIP device build, load and launch through it; the ring
// writer and ahead-of-time compilation (KernelCompiler) use its hipRTC step
// alone, which needs no GPU (gfx90a/gfx908: HIP 5.2's hipRTC cannot build
// gfx942). libamdhip64 is dlopen'ed (HipApi.h). No AMD GPU was available:
// loading and launching are compiled, never run.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPKERNEL_H
#define SDMA_RUNTIME_LIB_HIP_HIPKERNEL_H

#include "hip/HipApi.h"
#include "sdma/runtime/Executor.h"

#include <string>

namespace sdma::rt {

class HipKernel {
public:
  /// Compiles the HIP prelude and `text` to a code object for `arch` (e.g.
  /// "gfx90a") with hipRTC, naming the program `name` in its messages: no
  /// GPU, no cache. False with the compiler's log in `error`.
  static bool compile(const std::string &text, const std::string &name,
                      const std::string &arch, std::string &code,
                      std::string &error);
  /// compile()'s code object for `compile.arch`: from the kernel cache in
  /// `cacheDirectory` ("": the default one), else compiled (then cached).
  /// `compile` gets whether the cache had it (or held a corrupt entry) and
  /// the compile time.
  static bool build(const std::string &text, const std::string &name,
                    const std::string &cacheDirectory, CompileInfo &compile,
                    std::string &code, std::string &error);

  explicit HipKernel(const hip::HipApi &api) : api_(api) {}
  HipKernel(const HipKernel &) = delete;
  HipKernel &operator=(const HipKernel &) = delete;
  /// Unloads the module (on its GPU).
  ~HipKernel();

  /// Makes GPU `ordinal` current (and leaves it so), loads `code` there and
  /// finds `entry`, which launch() runs with `threads` threads per block.
  /// False with the failed call in `error` (and its result in failure()).
  bool load(int ordinal, const std::string &code, const std::string &entry,
            int threads, std::string &error);
  /// Enqueues a grid of blocksX x blocksY blocks on `stream`; `args` as
  /// hipModuleLaunchKernel takes them. The kernel's GPU must be current.
  bool launch(unsigned blocksX, unsigned blocksY, hipStream_t stream,
              void **args, std::string &error);

  bool loaded() const { return function_ != nullptr; }
  /// The API's result of the call that failed last.
  hipError_t failure() const { return failure_; }

private:
  bool check(hipError_t result, const char *call, std::string &error);

  const hip::HipApi &api_;
  int ordinal_ = 0, threads_ = 0;
  hipModule_t module_ = nullptr;
  hipFunction_t function_ = nullptr;
  hipError_t failure_ = hipSuccess;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HIP_HIPKERNEL_H
