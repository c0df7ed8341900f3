//===- CudaKernel.cpp - a kernel built by NVRTC, loaded, launched ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaKernel.h"
#include "compile/KernelCache.h"
#include "sdma/runtime/LdstPrelude.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {

/// Compiles `text` to a CUBIN for `arch` with NVRTC; false with the
/// compiler's log in `error`. `extraOptions` go after the standard ones;
/// `logOut`, when given, receives the log (ptxas's too with
/// --ptxas-options=-v).
bool compileToCubin(const Nvrtc &nvrtc, const std::string &text,
                    const std::string &name, const std::string &arch,
                    std::string &cubin, std::string &error,
                    const std::vector<std::string> &extraOptions = {},
                    std::string *logOut = nullptr) {
  nvrtcProgram program = nullptr;
  nvrtcResult result = nvrtc.nvrtcCreateProgram(
      &program, text.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (result != 0) {
    error = std::string("nvrtcCreateProgram failed: ") +
            nvrtc.nvrtcGetErrorString(result);
    return false;
  }
  std::string archOption = "--gpu-architecture=" + arch;
  std::vector<const char *> options = {archOption.c_str(), "-std=c++17",
                                       "--extra-device-vectorization"};
  for (const std::string &option : extraOptions)
    options.push_back(option.c_str());
  result = nvrtc.nvrtcCompileProgram(program, static_cast<int>(options.size()),
                                     options.data());
  size_t logSize = 0;
  nvrtc.nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtc.nvrtcGetProgramLog(program, log.data());
  if (logOut)
    *logOut = log;
  if (result != 0) {
    error = "NVRTC could not compile " + name + " for " + arch + ":\n" + log;
    nvrtc.nvrtcDestroyProgram(&program);
    return false;
  }
  size_t size = 0;
  result = nvrtc.nvrtcGetCUBINSize(program, &size);
  if (result == 0) {
    cubin.resize(size);
    result = nvrtc.nvrtcGetCUBIN(program, cubin.data());
  }
  nvrtc.nvrtcDestroyProgram(&program);
  if (result != 0) {
    error = std::string("nvrtcGetCUBIN failed: ") +
            nvrtc.nvrtcGetErrorString(result);
    return false;
  }
  return true;
}

} // namespace

CudaKernelSource CudaKernelSource::ldst(const LdstProgram &program,
                                        bool stagedOps, bool oneGpu) {
  CudaKernelSource source;
  source.text = std::string(kCudaPrelude) +
                (stagedOps ? kStagedOpsDefine : "") +
                (oneGpu ? kOneGpuDefine : "") + program.source;
  source.name = program.schedule + ".cu";
  source.specialised = program.specialised;
  return source;
}

bool CudaKernel::compile(const Nvrtc &nvrtc, const CudaKernelSource &source,
                         const std::string &arch, std::string &cubin,
                         bool &bounded, std::string &error) {
  bounded = false;
  // A program that sets its own bound (a benchmark's variant) keeps it.
  if (source.specialised &&
      source.text.find("#define SDMA_MIN_BLOCKS") == std::string::npos) {
    std::string log;
    std::string first = "#define SDMA_MIN_BLOCKS " +
                        std::to_string(kLdstBoundedBlocks) + "\n" + source.text;
    if (!compileToCubin(nvrtc, first, source.name, arch, cubin, error,
                        {"--ptxas-options=-v"}, &log))
      return false;
    // ptxas -v: "N bytes stack frame, N bytes spill stores, N bytes spill
    // loads" per function; any non-zero spill means the bound cost more
    // than it gave.
    bool spilled = false;
    for (size_t p = log.find(" bytes spill "); p != std::string::npos;
         p = log.find(" bytes spill ", p + 1)) {
      size_t q = p;
      while (q > 0 && std::isdigit(static_cast<unsigned char>(log[q - 1])))
        --q;
      spilled |= q < p && std::stoull(log.substr(q, p - q)) != 0;
    }
    if (log.find("bytes spill") != std::string::npos && !spilled) {
      bounded = true;
      return true;
    }
  }
  return compileToCubin(nvrtc, source.text, source.name, arch, cubin, error);
}

bool CudaKernel::build(const Driver &driver, CUdevice device,
                       const CudaKernelSource &source,
                       const std::string &cacheDirectory, CompileInfo &compile,
                       std::string &cubin, std::string &error) {
  int major = 0, minor = 0;
  CUresult r = driver.cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  if (r == 0)
    r = driver.cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  if (r != 0) {
    error = driver.describe("cuDeviceGetAttribute", r);
    return false;
  }
  compile.arch = "sm_" + std::to_string(major * 10 + minor);
  auto start = std::chrono::steady_clock::now();
  std::string nvrtcError;
  const Nvrtc *nvrtc = Nvrtc::get(nvrtcError);
  std::string versions = "driver " + std::to_string(driver.version);
  if (nvrtc)
    versions += " nvrtc " + std::to_string(nvrtc->major) + "." +
                std::to_string(nvrtc->minor);
  KernelCache cache(cacheDirectory);
  uint64_t key = KernelCache::key(source.text, kLdstCompileOptions,
                                  compile.arch, versions);
  KernelCache::Lookup lookup = cache.get(key, cubin);
  compile.cacheHit = lookup == KernelCache::Lookup::Hit;
  compile.cacheWasCorrupt = lookup == KernelCache::Lookup::Corrupt;
  if (compile.cacheHit)
    return true;
  if (!nvrtc) {
    error = nvrtcError;
    return false;
  }
  bool bounded = false;
  if (!CudaKernel::compile(*nvrtc, source, compile.arch, cubin, bounded, error))
    return false;
  compile.compileMs = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  cache.put(key, cubin);
  return true;
}

CudaKernel::CudaKernel(CudaKernel &&other) noexcept
    : driver_(other.driver_), context_(other.context_),
      module_(std::move(other.module_)), function_(other.function_),
      threads_(other.threads_), registers_(other.registers_),
      blocksPerSM_(other.blocksPerSM_), localBytes_(other.localBytes_),
      failure_(other.failure_) {
  other.function_ = nullptr;
}

CudaKernel::Module::~Module() {
  if (!module)
    return;
  driver->cuCtxSetCurrent(context);
  driver->cuModuleUnload(module);
}

std::string CudaKernel::describeHandles() const {
  char text[160];
  int registers = 0;
  CUresult r = driver_->cuFuncGetAttribute(
      &registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function_);
  std::snprintf(text, sizeof(text), "function %p of context %p: %s",
                static_cast<void *>(function_), static_cast<void *>(context_),
                r ? driver_->describe("cuFuncGetAttribute", r).c_str()
                  : "answers");
  return text;
}

bool CudaKernel::check(CUresult result, const char *call, std::string &error) {
  if (result == 0)
    return true;
  failure_ = result;
  error = driver_->describe(call, result);
  return false;
}

bool CudaKernel::load(CUcontext context, const std::string &cubin,
                      const std::string &entry, int threads,
                      std::string &error) {
  context_ = context;
  module_ = std::make_shared<Module>();
  module_->driver = driver_;
  module_->context = context;
  return check(driver_->cuCtxSetCurrent(context), "cuCtxSetCurrent", error) &&
         check(driver_->cuModuleLoadData(&module_->module, cubin.data()),
               "cuModuleLoadData", error) &&
         find(entry, threads, error);
}

bool CudaKernel::loadEntry(const CudaKernel &loaded, const std::string &entry,
                           int threads, std::string &error) {
  if (!loaded.module_ || !loaded.module_->module) {
    error = "internal: no module loaded to find " + entry + " in";
    return false;
  }
  context_ = loaded.context_;
  module_ = loaded.module_;
  return check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent", error) &&
         find(entry, threads, error);
}

bool CudaKernel::find(const std::string &entry, int threads,
                      std::string &error) {
  threads_ = threads;
  // Loaded whole now, not at its first launch: under lazy loading (the
  // default since CUDA 12.2) NVIDIA warns that loading at a launch may wait
  // for the kernels running on the GPU, and a peer rank's kernel there may
  // be waiting for this launch. (It did not cure the timeouts of 8 ranks as
  // threads on one H100, docs/limitations.md: nor did eager loading.)
  return check(driver_->cuModuleGetFunction(&function_, module_->module,
                                            entry.c_str()),
               "cuModuleGetFunction", error) &&
         (!driver_->cuFuncLoad ||
          check(driver_->cuFuncLoad(function_), "cuFuncLoad", error)) &&
         check(driver_->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                   &blocksPerSM_, function_, threads, 0),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor", error) &&
         check(driver_->cuFuncGetAttribute(
                   &registers_, CU_FUNC_ATTRIBUTE_NUM_REGS, function_),
               "cuFuncGetAttribute", error) &&
         check(driver_->cuFuncGetAttribute(
                   &localBytes_, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function_),
               "cuFuncGetAttribute", error);
}

bool CudaKernel::launch(unsigned blocksX, unsigned blocksY, CUstream stream,
                        void **args, std::string &error) {
  return check(driver_->cuLaunchKernel(function_, blocksX, blocksY, 1,
                                       static_cast<unsigned>(threads_), 1, 1, 0,
                                       stream, args, nullptr),
               "cuLaunchKernel", error);
}
