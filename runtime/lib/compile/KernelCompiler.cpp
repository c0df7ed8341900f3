//===- KernelCompiler.cpp - compile a load/store kernel, no GPU -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/KernelCompiler.h"

#include "cuda/CudaKernel.h"
#ifdef SDMA_HAVE_HIP
#include "hip/HipKernel.h"
#endif

#include <chrono>

using namespace sdma::rt;

bool sdma::rt::compileKernel(const LdstProgram &program,
                             std::string_view compiler, const std::string &arch,
                             KernelBinary &binary, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  if (compiler == "hiprtc") {
#ifdef SDMA_HAVE_HIP
    if (!HipKernel::compile(program.source, program.schedule + ".hip", arch,
                            binary.code, error))
      return false;
    binary.compiler = "hipRTC";
#else
    error = "built without HIP headers";
    return false;
#endif
  } else if (compiler == "nvrtc") {
    const cuda::Nvrtc *nvrtc = cuda::Nvrtc::get(error);
    if (!nvrtc)
      return false;
    if (!CudaKernel::compile(*nvrtc, CudaKernelSource::ldst(program, false),
                             arch, binary.code, binary.bounded, error))
      return false;
    binary.compiler = "NVRTC " + std::to_string(nvrtc->major) + "." +
                      std::to_string(nvrtc->minor);
  } else {
    error = "unknown kernel compiler '" + std::string(compiler.substr(0, 64)) +
            "' (nvrtc or hiprtc)";
    return false;
  }
  binary.milliseconds = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  return true;
}
