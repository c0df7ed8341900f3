//===- HipKernel.cpp - a kernel built by hipRTC, loaded, launched ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#define __HIP_PLATFORM_AMD__ 1
#include "hip/HipKernel.h"
#include "compile/KernelCache.h"
#include "sdma/runtime/LdstPrelude.h"

#include <chrono>

using namespace sdma::rt;
using namespace sdma::rt::hip;

bool HipKernel::compile(const std::string &text, const std::string &name,
                        const std::string &arch, std::string &code,
                        std::string &error) {
  const HipApi *api = HipApi::get(error);
  if (!api)
    return false;
  std::string source = std::string(kHipPrelude) + text;
  hiprtcProgram program = nullptr;
  hiprtcResult result = api->hiprtcCreateProgram(
      &program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (result != HIPRTC_SUCCESS) {
    error = std::string("hiprtcCreateProgram failed: ") +
            api->hiprtcGetErrorString(result);
    return false;
  }
  std::string archOption = "--offload-arch=" + arch;
  const char *options[] = {archOption.c_str(), "-O3", "-std=c++17"};
  result = api->hiprtcCompileProgram(program, 3, options);
  size_t logSize = 0;
  api->hiprtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    api->hiprtcGetProgramLog(program, log.data());
  if (result != HIPRTC_SUCCESS) {
    error = "hipRTC could not compile " + name + " for " + arch + ":\n" + log;
    api->hiprtcDestroyProgram(&program);
    return false;
  }
  size_t size = 0;
  result = api->hiprtcGetCodeSize(program, &size);
  if (result == HIPRTC_SUCCESS) {
    code.resize(size);
    result = api->hiprtcGetCode(program, code.data());
  }
  api->hiprtcDestroyProgram(&program);
  if (result != HIPRTC_SUCCESS || code.empty()) {
    error = "hipRTC produced no code object for " + arch;
    return false;
  }
  return true;
}

bool HipKernel::build(const std::string &text, const std::string &name,
                      const std::string &cacheDirectory, CompileInfo &compile,
                      std::string &code, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  KernelCache cache(cacheDirectory);
  uint64_t key = KernelCache::key(std::string(kHipPrelude) + text,
                                  "-O3 -std=c++17", compile.arch, "hiprtc 5.2");
  KernelCache::Lookup lookup = cache.get(key, code);
  compile.cacheHit = lookup == KernelCache::Lookup::Hit;
  compile.cacheWasCorrupt = lookup == KernelCache::Lookup::Corrupt;
  if (compile.cacheHit)
    return true;
  if (!HipKernel::compile(text, name, compile.arch, code, error))
    return false;
  compile.compileMs = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  cache.put(key, code);
  return true;
}

HipKernel::~HipKernel() {
  if (!module_)
    return;
  (void)api_.hipSetDevice(ordinal_);
  (void)api_.hipModuleUnload(module_);
}

bool HipKernel::check(hipError_t result, const char *call, std::string &error) {
  if (result == hipSuccess)
    return true;
  failure_ = result;
  error = api_.describe(call, result);
  return false;
}

bool HipKernel::load(int ordinal, const std::string &code,
                     const std::string &entry, int threads,
                     std::string &error) {
  ordinal_ = ordinal;
  threads_ = threads;
  return check(api_.hipSetDevice(ordinal), "hipSetDevice", error) &&
         check(api_.hipModuleLoadData(&module_, code.data()),
               "hipModuleLoadData", error) &&
         check(api_.hipModuleGetFunction(&function_, module_, entry.c_str()),
               "hipModuleGetFunction", error);
}

bool HipKernel::launch(unsigned blocksX, unsigned blocksY, hipStream_t stream,
                       void **args, std::string &error) {
  return check(api_.hipModuleLaunchKernel(function_, blocksX, blocksY, 1,
                                          static_cast<unsigned>(threads_), 1, 1,
                                          0, stream, args, nullptr),
               "hipModuleLaunchKernel", error);
}
