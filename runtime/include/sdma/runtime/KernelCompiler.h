//===- KernelCompiler.h - compile a load/store kernel, no GPU ---*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ahead-of-time compilation of a load/store program with the compilers the
// executors JIT with: NVRTC (CUDA prelude, a CUBIN for sm_XX) or hipRTC (HIP
// prelude, a code object for gfxNNN). Both are dlopen'ed; no GPU is needed.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_KERNELCOMPILER_H
#define SDMA_RUNTIME_KERNELCOMPILER_H

#include "sdma/runtime/LdstProgram.h"

#include <string>
#include <string_view>

namespace sdma::rt {

struct KernelBinary {
  std::string code;     // CUBIN or AMD code object
  std::string compiler; // "NVRTC 13.0", "hipRTC"
  double milliseconds = 0;
  /// NVRTC: compiled for 3 resident blocks per SM (a specialised kernel
  /// that fits 40 registers without spilling; see CudaKernel::compile).
  bool bounded = false;
};

/// Compiles `program` with `compiler` ("nvrtc" or "hiprtc") for `arch`;
/// false with `error` (the compiler's log, or why it cannot be loaded).
bool compileKernel(const LdstProgram &program, std::string_view compiler,
                   const std::string &arch, KernelBinary &binary,
                   std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_KERNELCOMPILER_H
