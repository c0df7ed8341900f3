//===- RingCpu.h - the ring writer kernel on host threads -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What simulateRing (RingSimulator.cpp) compiles around a ring writer
// kernel (after HostKernel's prelude): its ring macros, whose stores and
// doorbells call into the engine model, and the entry that runs a thread
// per writer; and the host's mirror of the kernel's structures
// (RingDevice.h), which must match them field for field. Internal to the
// runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_SIM_RINGCPU_H
#define SDMA_RUNTIME_LIB_SIM_RINGCPU_H

#include <cstdint>

namespace sdma::rt::ringcpu {

// The ring macros on host threads; the kernel's stores and doorbells call
// into the engine model.
constexpr const char *kRingCpuPrelude = R"SDMA(
struct SdmaRingHooks {
  void *ctx;
  void (*store)(void *, unsigned long long, unsigned);
  void (*doorbell)(void *, unsigned long long, unsigned long long);
};
// Per writer thread: ranks that are threads of one process share the
// compiled writer (one object from the kernel cache), each with its hooks.
static thread_local SdmaRingHooks sdma_ring_hooks;
#define SDMA_RING_WAVE 1
#define SDMA_RING_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SDMA_RING_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define SDMA_ATOMIC_ADD_U64(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define SDMA_RING_STORE(q, i, v)                                               \
  (__atomic_store_n(&(q)->ring[(i)], (v), __ATOMIC_RELAXED),                   \
   sdma_ring_hooks.store(sdma_ring_hooks.ctx, (q)->id, (i)))
#define SDMA_RING_DOORBELL(q, v)                                               \
  sdma_ring_hooks.doorbell(sdma_ring_hooks.ctx, (q)->id, (v))
)SDMA";

constexpr const char *kRingCpuEntry = R"SDMA(
extern "C" int sdma_ring_cpu_run(SdmaRingArgs a, int queues, int writers,
                                 SdmaRingHooks hooks) {
  return sdma_host_launch(queues, 1, writers, [&] {
    sdma_ring_hooks = hooks;
    sdma_ring_write(a);
  });
}
)SDMA";

// The kernel's view of a queue (SdmaRingQueue in RingDevice.h).
struct KernelQueue {
  uint32_t *ring;
  unsigned long long bytes, *rptr, *wptr, *doorbell;
  unsigned long long reserve, committed, id, fullWaits, arrive;
};
struct KernelArgs {
  const unsigned long long *buf, *flags, *ts;
  unsigned long long chunkBytes;
  KernelQueue *queues;
  unsigned long long *error, timeoutNs;
  int rank;
};
struct Hooks {
  void *ctx;
  void (*store)(void *, unsigned long long, unsigned);
  void (*doorbell)(void *, unsigned long long, unsigned long long);
};
/// 0, or the error number of a writer thread that could not be started
/// (then none ran).
using RunFn = int (*)(KernelArgs, int, int, Hooks);

} // namespace sdma::rt::ringcpu

#endif // SDMA_RUNTIME_LIB_SIM_RINGCPU_H
