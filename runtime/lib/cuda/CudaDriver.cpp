//===- CudaDriver.cpp - load the CUDA driver and NVRTC at run time --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <type_traits>
#include <vector>

using namespace sdma::rt::cuda;

const Driver *Driver::get(std::string &error) {
  static Driver driver;
  static std::string loadError;
  static std::once_flag once;
  std::call_once(once, [] {
    // Lets tests (and users) exercise the no-GPU path on a GPU machine.
    if (std::getenv("SDMA_FORCE_NO_GPU")) {
      loadError = "no GPU: SDMA_FORCE_NO_GPU is set";
      return;
    }
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      loadError = "no GPU: the NVIDIA driver (libcuda.so.1) is not installed";
      return;
    }
#define SDMA_LOAD(name, args, ...)                                             \
  driver.name = reinterpret_cast<decltype(driver.name)>(dlsym(handle, #name)); \
  if (!driver.name) {                                                          \
    loadError = "libcuda.so.1 lacks " #name " (driver too old?)";              \
    return;                                                                    \
  }
    SDMA_CUDA_DRIVER_FUNCTIONS(SDMA_LOAD)
#undef SDMA_LOAD
    for (const char *name : {"cuStreamWriteValue64_v2", "cuStreamWriteValue64"})
      if (!driver.cuStreamWriteValue64)
        driver.cuStreamWriteValue64 =
            reinterpret_cast<decltype(driver.cuStreamWriteValue64)>(
                dlsym(handle, name));
    for (const char *name : {"cuStreamWaitValue64_v2", "cuStreamWaitValue64"})
      if (!driver.cuStreamWaitValue64)
        driver.cuStreamWaitValue64 =
            reinterpret_cast<decltype(driver.cuStreamWaitValue64)>(
                dlsym(handle, name));
    auto optional = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(handle, name));
    };
    optional(driver.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
    optional(driver.cuStreamIsCapturing, "cuStreamIsCapturing");
    optional(driver.cuPointerGetAttribute, "cuPointerGetAttribute");
    optional(driver.cuStreamEndCapture, "cuStreamEndCapture");
    optional(driver.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    optional(driver.cuGraphLaunch, "cuGraphLaunch");
    optional(driver.cuGraphExecDestroy, "cuGraphExecDestroy");
    optional(driver.cuGraphDestroy, "cuGraphDestroy");
    // CUDA 12.8 exported a different signature under the plain name; only
    // CUDA 13's _v2 is used.
    optional(driver.cuMemcpyBatchAsync, "cuMemcpyBatchAsync_v2");
    optional(driver.cuFuncLoad, "cuFuncLoad");
    CUresult result = driver.cuInit(0);
    if (result != 0) {
      loadError = "no GPU: " + driver.describe("cuInit", result);
      return;
    }
    int count = 0;
    result = driver.cuDeviceGetCount(&count);
    if (result != 0 || count == 0) {
      loadError = "no GPU: the NVIDIA driver sees no device";
      return;
    }
    driver.cuDriverGetVersion(&driver.version);
  });
  if (!loadError.empty()) {
    error = loadError;
    return nullptr;
  }
  return &driver;
}

std::string Driver::describe(const char *call, CUresult result) const {
  const char *text = nullptr;
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  return std::string(call) +
         " failed: " + (text ? text : "CUDA error " + std::to_string(result));
}

const Nvrtc *Nvrtc::get(std::string &error) {
  static Nvrtc nvrtc;
  static std::string loadError;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> names;
    if (const char *env = std::getenv("SDMA_NVRTC"))
      names.push_back(env);
    for (const char *name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                             "/usr/local/cuda/lib64/libnvrtc.so",
                             "/usr/local/cuda/lib64/libnvrtc.so.13"})
      names.push_back(name);
    void *handle = nullptr;
    for (const std::string &name : names)
      if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      loadError = "NVRTC (libnvrtc.so) not found; set SDMA_NVRTC to its path";
      return;
    }
#define SDMA_LOAD(name)                                                        \
  nvrtc.name = reinterpret_cast<decltype(nvrtc.name)>(dlsym(handle, #name));   \
  if (!nvrtc.name) {                                                           \
    loadError = "libnvrtc lacks " #name;                                       \
    return;                                                                    \
  }
    SDMA_LOAD(nvrtcVersion)
    SDMA_LOAD(nvrtcGetErrorString)
    SDMA_LOAD(nvrtcCreateProgram)
    SDMA_LOAD(nvrtcDestroyProgram)
    SDMA_LOAD(nvrtcCompileProgram)
    SDMA_LOAD(nvrtcGetProgramLogSize)
    SDMA_LOAD(nvrtcGetProgramLog)
    SDMA_LOAD(nvrtcGetCUBINSize)
    SDMA_LOAD(nvrtcGetCUBIN)
#undef SDMA_LOAD
    nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor);
  });
  if (!loadError.empty()) {
    error = loadError;
    return nullptr;
  }
  return &nvrtc;
}
