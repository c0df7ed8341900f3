//===- HipApi.h - HIP and hipRTC, loaded at run time ------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// libamdhip64 (which holds hipRTC in HIP 5.2) is dlopen'ed, never linked;
// every entry point sdma uses is listed once. Internal to the runtime
// library, shared by the HIP load/store and DMA executors.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPAPI_H
#define SDMA_RUNTIME_LIB_HIP_HIPAPI_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <dlfcn.h>
#include <mutex>
#include <string>

namespace sdma::rt::hip {

#define SDMA_HIP_FUNCTIONS(X)                                                  \
  X(hipGetDeviceCount, hipError_t, (int *))                                    \
  X(hipSetDevice, hipError_t, (int))                                           \
  X(hipDeviceGetAttribute, hipError_t, (int *, hipDeviceAttribute_t, int))     \
  X(hipGetDeviceProperties, hipError_t, (hipDeviceProp_t *, int))              \
  X(hipGetErrorString, const char *, (hipError_t))                             \
  X(hipMalloc, hipError_t, (void **, size_t))                                  \
  X(hipFree, hipError_t, (void *))                                             \
  X(hipMemset, hipError_t, (void *, int, size_t))                              \
  X(hipMemcpy, hipError_t, (void *, const void *, size_t, hipMemcpyKind))      \
  X(hipDeviceSynchronize, hipError_t, ())                                      \
  X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))              \
  X(hipModuleUnload, hipError_t, (hipModule_t))                                \
  X(hipModuleGetFunction, hipError_t,                                          \
    (hipFunction_t *, hipModule_t, const char *))                              \
  X(hipModuleLaunchKernel, hipError_t,                                         \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned,          \
     unsigned, unsigned, hipStream_t, void **, void **))                       \
  X(hipStreamCreate, hipError_t, (hipStream_t *))                              \
  X(hipStreamDestroy, hipError_t, (hipStream_t))                               \
  X(hipStreamQuery, hipError_t, (hipStream_t))                                 \
  X(hiprtcCreateProgram, hiprtcResult,                                         \
    (hiprtcProgram *, const char *, const char *, int, const char **,          \
     const char **))                                                           \
  X(hiprtcCompileProgram, hiprtcResult, (hiprtcProgram, int, const char **))   \
  X(hiprtcGetProgramLogSize, hiprtcResult, (hiprtcProgram, size_t *))          \
  X(hiprtcGetProgramLog, hiprtcResult, (hiprtcProgram, char *))                \
  X(hiprtcGetCodeSize, hiprtcResult, (hiprtcProgram, size_t *))                \
  X(hiprtcGetCode, hiprtcResult, (hiprtcProgram, char *))                      \
  X(hiprtcDestroyProgram, hiprtcResult, (hiprtcProgram *))                     \
  X(hiprtcGetErrorString, const char *, (hiprtcResult))                        \
  X(hipMemcpyAsync, hipError_t,                                                \
    (void *, const void *, size_t, hipMemcpyKind, hipStream_t))                \
  X(hipMemsetAsync, hipError_t, (void *, int, size_t, hipStream_t))            \
  X(hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned))           \
  X(hipStreamSynchronize, hipError_t, (hipStream_t))                           \
  X(hipStreamWaitEvent, hipError_t, (hipStream_t, hipEvent_t, unsigned))       \
  X(hipEventCreateWithFlags, hipError_t, (hipEvent_t *, unsigned))             \
  X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                     \
  X(hipEventDestroy, hipError_t, (hipEvent_t))                                 \
  X(hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))        \
  X(hipStreamWriteValue64, hipError_t,                                         \
    (hipStream_t, void *, uint64_t, unsigned))                                 \
  X(hipStreamWaitValue64, hipError_t,                                          \
    (hipStream_t, void *, uint64_t, unsigned, uint64_t))                       \
  X(hipDeviceCanAccessPeer, hipError_t, (int *, int, int))                     \
  X(hipDeviceEnablePeerAccess, hipError_t, (int, unsigned))                    \
  X(hipGetDevice, hipError_t, (int *))                                         \
  X(hipDeviceGetPCIBusId, hipError_t, (char *, int, int))                      \
  X(hipMemGetAddressRange, hipError_t,                                         \
    (hipDeviceptr_t *, size_t *, hipDeviceptr_t))                              \
  X(hipIpcGetMemHandle, hipError_t, (hipIpcMemHandle_t *, void *))             \
  X(hipIpcOpenMemHandle, hipError_t, (void **, hipIpcMemHandle_t, unsigned))   \
  X(hipIpcCloseMemHandle, hipError_t, (void *))                                \
  X(hipHostMalloc, hipError_t, (void **, size_t, unsigned))                    \
  X(hipHostFree, hipError_t, (void *))                                         \
  X(hipHostGetDevicePointer, hipError_t, (void **, void *, unsigned))

struct HipApi {
#define SDMA_DECLARE(name, ret, args) ret(*name) args = nullptr;
  SDMA_HIP_FUNCTIONS(SDMA_DECLARE)
#undef SDMA_DECLARE

  static const HipApi *get(std::string &error) {
    static HipApi api;
    static std::string loadError;
    static std::once_flag once;
    std::call_once(once, [] {
      void *handle = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        handle = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        loadError = "no GPU: HIP (libamdhip64.so.5) is not installed";
        return;
      }
#define SDMA_LOAD(name, ret, args)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name) {                                                             \
    loadError = "libamdhip64 lacks " #name;                                    \
    return;                                                                    \
  }
      SDMA_HIP_FUNCTIONS(SDMA_LOAD)
#undef SDMA_LOAD
    });
    if (!loadError.empty()) {
      error = loadError;
      return nullptr;
    }
    return &api;
  }

  /// The API where there is at least one AMD device (how many in `count`),
  /// else std::nullptr with "no GPU: ..." in `error`.
  static const HipApi *withDevices(int &count, std::string &error) {
    const HipApi *api = get(error);
    count = 0;
    if (api && (api->hipGetDeviceCount(&count) != hipSuccess || count == 0)) {
      error = "no GPU: HIP sees no AMD device";
      return nullptr;
    }
    return api;
  }

  std::string describe(const char *call, hipError_t result) const {
    return std::string(call) + " failed: " + hipGetErrorString(result);
  }
  /// True on success, else false with describe(call, result) in `error`.
  bool check(hipError_t result, const char *call, std::string &error) const {
    if (result == hipSuccess)
      return true;
    error = describe(call, result);
    return false;
  }
};

} // namespace sdma::rt::hip

#endif // SDMA_RUNTIME_LIB_HIP_HIPAPI_H
