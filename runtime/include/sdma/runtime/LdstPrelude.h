//===- LdstPrelude.h - what generated load/store kernels build on -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// `sdma-translate --sdma-to-hip` writes kernels against a handful of SDMA_*
// macros; each compiler gets a prelude that defines them:
//   - NVRTC / nvcc (CUDA): the CUDA builtins;
//   - hipRTC (HIP 5.2, gfx90a/gfx908): the HIP builtins hipRTC provides;
//   - clang-22 -x hip -nogpuinc (gfx942, no HIP headers): clang builtins.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LDSTPRELUDE_H
#define SDMA_RUNTIME_LDSTPRELUDE_H

#include <algorithm>
#include <cstdint>

namespace sdma::rt {

/// Threads per block the executors launch (and the kernel's bound).
constexpr int kLdstThreads = 512;

/// 16-byte units per thread a load/store launch is sized for by default:
/// one, i.e. as many blocks as the largest buffer fills (up to the cap).
/// Measured on one H200, 8 ranks, against 4 (bench/results/grid-h200.csv):
/// all-to-all 16 KiB-1 MiB 7-30% faster (64 KiB 8.7 -> 6.1 us, the fused
/// kernel 5.8), all-gather 4-256 KiB 3-18% faster, within 3% elsewhere.
constexpr int kLdstUnitsPerThread = 1;

/// Blocks per rank for a launch whose largest buffer is `bytes`: enough for
/// `unitsPerThread` 16-byte units per thread (0: kLdstUnitsPerThread), at
/// most `cap` (the blocks every rank sharing the GPU can have resident at
/// once: a rank's blocks wait for each other), at least one.
inline int ldstBlocks(int cap, uint64_t bytes, int unitsPerThread = 0) {
  const uint64_t perBlock =
      uint64_t(kLdstThreads) * 16 *
      uint64_t(unitsPerThread > 0 ? unitsPerThread : kLdstUnitsPerThread);
  return static_cast<int>(std::max<uint64_t>(
      1,
      std::min<uint64_t>(std::max(1, cap), (bytes + perBlock - 1) / perBlock)));
}

/// Put before a program's source to compile it with SDMA_STAGED_OPS
/// (CudaOptions::stagedOps; see the generated sdma_phase).
constexpr const char *kStagedOpsDefine = "#define SDMA_STAGED_OPS 1\n";

/// Put before a communicator's program when every rank of its job runs on
/// this GPU: the kernel's job-wide fences are then device-scope
/// (SDMA_FENCE_JOB in LdstKernel.hip).
constexpr const char *kOneGpuDefine = "#define SDMA_ONE_GPU 1\n";

constexpr const char *kCudaPrelude = R"SDMA(
#define SDMA_MAX_THREADS 512
#define SDMA_GRID_CONSTANT __grid_constant__
#define SDMA_TID threadIdx.x
#define SDMA_NTID blockDim.x
#define SDMA_BID blockIdx.x
#define SDMA_NBID gridDim.x
#define SDMA_BID_Y blockIdx.y
#define SDMA_SYNC() __syncthreads()
#define SDMA_BLOCK_SHARED(type, name, count) __shared__ type name[count]
#define SDMA_FENCE() __threadfence()
#define SDMA_FENCE_SYSTEM() __threadfence_system()
#define SDMA_ATOMIC_ADD_U32(p, v) atomicAdd((p), (v))
#define SDMA_ATOMIC_CAS_U64(p, c, v) atomicCAS((p), (c), (v))
#define SDMA_ATOMIC_ADD_SYSTEM_U64(p, v) atomicAdd_system((p), (v))
#define SDMA_TRAP() __trap()
// A low-latency packet (LdstLowLatency.hip): 16 bytes in one access.
#define SDMA_LL_STORE(p, w0, w1)                                               \
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p),          \
               "l"(w0), "l"(w1)                                                \
               : "memory")
#define SDMA_LL_LOAD(p, w0, w1)                                                \
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"                     \
               : "=l"(w0), "=l"(w1)                                            \
               : "l"(p)                                                        \
               : "memory")
static __device__ __forceinline__ unsigned long long SDMA_NOW_NS() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
)SDMA";

constexpr const char *kHipPrelude = R"SDMA(
#define SDMA_MAX_THREADS 512
#define SDMA_GRID_CONSTANT
#define SDMA_TID threadIdx.x
#define SDMA_NTID blockDim.x
#define SDMA_BID blockIdx.x
#define SDMA_NBID gridDim.x
#define SDMA_BID_Y blockIdx.y
#define SDMA_SYNC() __syncthreads()
#define SDMA_BLOCK_SHARED(type, name, count) __shared__ type name[count]
#define SDMA_FENCE() __threadfence()
#define SDMA_FENCE_SYSTEM() __threadfence_system()
#define SDMA_ATOMIC_ADD_U32(p, v) atomicAdd((p), (v))
#define SDMA_ATOMIC_CAS_U64(p, c, v) atomicCAS((p), (c), (v))
#define SDMA_ATOMIC_ADD_SYSTEM_U64(p, v) atomicAdd_system((p), (v))
// s_memrealtime counts at 100 MHz on gfx9.
#define SDMA_NOW_NS() (__builtin_amdgcn_s_memrealtime() * 10ull)
)SDMA";

constexpr const char *kHipClangPrelude = R"SDMA(
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define SDMA_GRID_CONSTANT
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define SDMA_MAX_THREADS 512
#define SDMA_TID __builtin_amdgcn_workitem_id_x()
#define SDMA_NTID __builtin_amdgcn_workgroup_size_x()
#define SDMA_BID __builtin_amdgcn_workgroup_id_x()
#define SDMA_NBID (__builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x())
#define SDMA_BID_Y __builtin_amdgcn_workgroup_id_y()
#define SDMA_SYNC()                                                            \
  do {                                                                         \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                     \
    __builtin_amdgcn_s_barrier();                                              \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                     \
  } while (0)
#define SDMA_BLOCK_SHARED(type, name, count)                                   \
  static __attribute__((shared)) type name[count]
#define SDMA_FENCE() __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent")
#define SDMA_FENCE_SYSTEM() __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "")
#define SDMA_ATOMIC_ADD_U32(p, v)                                              \
  __hip_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define SDMA_ATOMIC_ADD_SYSTEM_U64(p, v)                                       \
  __hip_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM)
static __device__ unsigned long long SDMA_ATOMIC_CAS_U64(unsigned long long *p,
                                                        unsigned long long c,
                                                        unsigned long long v) {
  __hip_atomic_compare_exchange_strong(p, &c, v, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_SYSTEM);
  return c;
}
#define SDMA_NOW_NS() (__builtin_amdgcn_s_memrealtime() * 10ull)
)SDMA";

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LDSTPRELUDE_H
