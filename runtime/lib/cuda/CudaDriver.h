//===- CudaDriver.h - the CUDA driver and NVRTC, dlopen'ed ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// libcuda.so.1 and libnvrtc are dlopen'ed, never linked: the same binary runs
// on machines without the NVIDIA driver (and says "no GPU"). Every entry
// point is listed once (X-macro) and every call is checked by one macro that
// names the call in the error. Building, loading and launching kernels is
// CudaKernel's.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDADRIVER_H
#define SDMA_RUNTIME_LIB_CUDA_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace sdma::rt::cuda {

// The few driver types sdma uses (ABI-compatible with cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using nvrtcResult = int;
/// CUDA IPC's 64-byte handle.
struct CUipcMemHandle {
  char reserved[64];
};
/// A GPU's 16-byte UUID.
struct CUuuid {
  char bytes[16];
};
constexpr unsigned CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;
constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 2;
using nvrtcProgram = struct _nvrtcProgram *;

constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
constexpr unsigned CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr unsigned CU_STREAM_CAPTURE_MODE_RELAXED = 2;

/// cuMemcpyBatchAsync's per-copy attributes (CUmemcpyAttributes_v1).
struct MemcpyAttributes {
  int srcAccessOrder = 1;           // CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
  int srcLocType = 1, srcLocId = 0; // CU_MEM_LOCATION_TYPE_DEVICE, ordinal
  int dstLocType = 1, dstLocId = 0;
  unsigned flags = 0; // 1: CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
};

#define SDMA_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuInit, (unsigned))                                                        \
  X(cuDriverGetVersion, (int *))                                               \
  X(cuDeviceGetCount, (int *))                                                 \
  X(cuDeviceGet, (CUdevice *, int))                                            \
  X(cuDeviceGetAttribute, (int *, int, CUdevice))                              \
  X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                         \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice))                                  \
  X(cuCtxSetCurrent, (CUcontext))                                              \
  X(cuCtxSynchronize, ())                                                      \
  X(cuGetErrorString, (CUresult, const char **))                               \
  X(cuMemAlloc_v2, (CUdeviceptr *, size_t))                                    \
  X(cuMemFree_v2, (CUdeviceptr))                                               \
  X(cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t))                       \
  X(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                      \
  X(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                            \
  X(cuModuleLoadData, (CUmodule *, const void *))                              \
  X(cuModuleUnload, (CUmodule))                                                \
  X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))               \
  X(cuFuncGetAttribute, (int *, int, CUfunction))                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                               \
    (int *, CUfunction, int, size_t))                                          \
  X(cuLaunchKernel,                                                            \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(cuStreamCreate, (CUstream *, unsigned))                                    \
  X(cuStreamDestroy_v2, (CUstream))                                            \
  X(cuStreamQuery, (CUstream))                                                 \
  X(cuStreamGetCtx, (CUstream, CUcontext *))                                   \
  X(cuStreamSynchronize, (CUstream))                                           \
  X(cuEventCreate, (CUevent *, unsigned))                                      \
  X(cuEventDestroy_v2, (CUevent))                                              \
  X(cuEventRecord, (CUevent, CUstream))                                        \
  X(cuEventSynchronize, (CUevent))                                             \
  X(cuEventElapsedTime, (float *, CUevent, CUevent))                           \
  X(cuStreamWaitEvent, (CUstream, CUevent, unsigned))                          \
  X(cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream))        \
  X(cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))               \
  X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))           \
  X(cuDeviceCanAccessPeer, (int *, CUdevice, CUdevice))                        \
  X(cuCtxEnablePeerAccess, (CUcontext, unsigned))                              \
  X(cuCtxGetCurrent, (CUcontext *))                                            \
  X(cuCtxGetDevice, (CUdevice *))                                              \
  X(cuDeviceGetPCIBusId, (char *, int, CUdevice))                              \
  X(cuDeviceGetUuid_v2, (CUuuid *, CUdevice))                                  \
  X(cuMemGetAddressRange_v2, (CUdeviceptr *, size_t *, CUdeviceptr))           \
  X(cuIpcGetMemHandle, (CUipcMemHandle *, CUdeviceptr))                        \
  X(cuIpcOpenMemHandle_v2, (CUdeviceptr *, CUipcMemHandle, unsigned))          \
  X(cuIpcCloseMemHandle, (CUdeviceptr))                                        \
  X(cuMemHostAlloc, (void **, size_t, unsigned))                               \
  X(cuMemFreeHost, (void *))                                                   \
  X(cuMemHostGetDevicePointer_v2, (CUdeviceptr *, void *, unsigned))

/// The driver's entry points, once loaded.
struct Driver {
#define SDMA_DECLARE(name, args, ...) CUresult(*name) args = nullptr;
  SDMA_CUDA_DRIVER_FUNCTIONS(SDMA_DECLARE)
#undef SDMA_DECLARE
  int version = 0;
  // Stream memory operations: the names moved between CUDA 12 (_v2) and 13.
  CUresult (*cuStreamWriteValue64)(CUstream, CUdeviceptr, unsigned long long,
                                   unsigned) = nullptr;
  CUresult (*cuStreamWaitValue64)(CUstream, CUdeviceptr, unsigned long long,
                                  unsigned) = nullptr;
  // Optional: graphs (prelaunch) and batched copies (CUDA 13's signature);
  // null where the driver lacks them, and the executors say so.
  CUresult (*cuStreamBeginCapture)(CUstream, unsigned) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  /// *status: 0 none, 1 active, 2 invalidated (CUstreamCaptureStatus).
  CUresult (*cuStreamIsCapturing)(CUstream, int *) = nullptr;
  /// (data, attribute, pointer); attribute 2: CU_POINTER_ATTRIBUTE_MEMORY_TYPE.
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyBatchAsync)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
                                 MemcpyAttributes *, size_t *, size_t,
                                 CUstream) = nullptr;
  /// A function's loading finished now (CUDA 12.4+; null before, where
  /// nothing is loaded lazily at a launch).
  CUresult (*cuFuncLoad)(CUfunction) = nullptr;

  /// Loads libcuda.so.1 and initialises it. Returns nullptr with `error`
  /// ("no GPU: ...") where there is no driver or no device.
  static const Driver *get(std::string &error);
  /// "cuX failed: CUDA_ERROR_..." for a failed call.
  std::string describe(const char *call, CUresult result) const;
};

/// NVRTC's entry points, once loaded.
struct Nvrtc {
  nvrtcResult (*nvrtcVersion)(int *, int *) = nullptr;
  const char *(*nvrtcGetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *,
                                    int, const char *const *,
                                    const char *const *) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *) = nullptr;
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int,
                                     const char *const *) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *) = nullptr;
  int major = 0, minor = 0;

  /// Loads libnvrtc ($SDMA_NVRTC, then the usual names and
  /// /usr/local/cuda/lib64). Needs no GPU.
  static const Nvrtc *get(std::string &error);
};

} // namespace sdma::rt::cuda

#endif // SDMA_RUNTIME_LIB_CUDA_CUDADRIVER_H
