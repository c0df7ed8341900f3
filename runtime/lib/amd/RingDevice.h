//===- RingDevice.h - what generated SDMA ring writers build on -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The device side of GPU-initiated SDMA (RingWriter.cpp emits a kernel that
// calls it): sdma_ring_submit places one packet in an engine's ring the way
// mori and rocSHMEM do (../shared/SDMA-PACKETS.md):
//   1. reserve: compare-and-swap on the queue's reservation counter (several
//      wavefronts may submit to one queue at once); a packet that would
//      cross the ring's end also reserves the tail, to be filled with NOPs;
//   2. back-pressure: wait until the engine's read pointer leaves room for
//      the reservation (the ring holds at most `bytes` unread bytes);
//   3. write the NOP padding and the packet's dwords (plain stores; the
//      ring is uncached);
//   4. commit in order: wait until every earlier reservation is committed,
//      then a system-scope release, the write pointer, the doorbell, and the
//      committed counter, so the engine never reads a half-written packet.
// Offsets are monotonic 64-bit byte counts (the ring index is the offset
// modulo the ring's size, a power of two), as the write pointer and the
// doorbell take them. Every wait is bounded: a timeout writes the error
// record (kind, queue, awaited value, seen value) and gives up.
//
// A prelude defines the SDMA_* macros for each compiler: on AMD GPUs
// (hipRTC, clang -x hip) ring stores are plain stores and the doorbell a
// system-scope atomic store; on the CPU (RingSimulator.cpp) ring stores and
// the doorbell also report to the simulated engine, which checks what it
// would fetch at the moment the doorbell rings.
//
// Fault injection (tests only), each caught by the engine model:
//   SDMA_RING_FAULT_EARLY_DOORBELL: commit before the packet's last dword;
//   SDMA_RING_FAULT_NO_PAD: a packet crossing the ring's end is not padded
//     (its dwords wrap to the ring's start);
//   SDMA_RING_FAULT_RACE: reservation by a load and a store instead of a
//     compare-and-swap, with the writers of a queue made to collide.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_AMD_RINGDEVICE_H
#define SDMA_RUNTIME_LIB_AMD_RINGDEVICE_H

namespace sdma::rt {

constexpr const char *kRingDeviceSource = R"SDMA(
// One engine queue as the ring writer sees it (RingQueue in Ring.h).
struct SdmaRingQueue {
  unsigned *ring;                // the ring's dwords
  unsigned long long bytes;      // its size, a power of two
  unsigned long long *rptr;      // the engine's read pointer (bytes)
  unsigned long long *wptr;      // the write pointer's write-back slot
  unsigned long long *doorbell;  // the queue's doorbell
  unsigned long long reserve;    // bytes reserved so far (writers' CAS)
  unsigned long long committed;  // bytes committed so far (in order)
  unsigned long long id;         // the queue's index in the plan
  unsigned long long fullWaits;  // submissions that waited for space
  unsigned long long arrive;     // SDMA_RING_FAULT_RACE only
};

struct SdmaRingArgs {
  const unsigned long long *buf;   // [rank x buffers + buffer] base address
  const unsigned long long *flags; // [rank] flag slot 0's address
  const unsigned long long *ts;    // [rank] timestamp slot 0's address
  unsigned long long chunkBytes;
  SdmaRingQueue *queues;           // [queue]
  unsigned long long *error;       // kind, queue, awaited, seen
  unsigned long long timeoutNs;
  int rank;                        // the rank whose queues to write; -1 all
};

enum { SDMA_RING_ERR_FULL = 1, SDMA_RING_ERR_COMMIT = 2 };

static __device__ __forceinline__ unsigned long long
sdma_ring_chunk(const SdmaRingArgs &a, unsigned index, unsigned long long c) {
  return a.buf[index] + c * a.chunkBytes;
}

// A count dword: the fixed bits of `word` and bytes - 1 in [29:0].
static __device__ __forceinline__ unsigned
sdma_ring_count(const SdmaRingArgs &a, unsigned word, unsigned long long n) {
  return (word & ~0x3fffffffu) | (unsigned)(n * a.chunkBytes - 1);
}

static __device__ bool sdma_ring_fail(const SdmaRingArgs &a, unsigned kind,
                                      const SdmaRingQueue *q,
                                      unsigned long long awaited,
                                      unsigned long long seen) {
  if (SDMA_ATOMIC_CAS_U64(a.error, 0ull, (unsigned long long)kind) == 0) {
    a.error[1] = q->id;
    a.error[2] = awaited;
    a.error[3] = seen;
  }
  return false;
}

// Waits until *p >= want (ring offsets only grow); false on an error raised
// elsewhere or once *p has not moved for the timeout (an engine that is
// slow but advancing, e.g. through a large copy, is waited for).
static __device__ bool sdma_ring_wait_ge(const SdmaRingArgs &a, unsigned kind,
                                         const SdmaRingQueue *q,
                                         unsigned long long *p,
                                         unsigned long long want) {
  unsigned long long start = SDMA_NOW_NS(), seen, last = SDMA_RING_LOAD(p);
  while ((seen = SDMA_RING_LOAD(p)) < want) {
    if (seen != last) {
      last = seen;
      start = SDMA_NOW_NS();
    }
    if (SDMA_RING_LOAD(a.error) || SDMA_NOW_NS() - start > a.timeoutNs)
      return sdma_ring_fail(a, kind, q, want, seen);
    SDMA_SPIN_PAUSE();
  }
  return true;
}

// Reserves `need` bytes (plus the ring's tail where they would cross its
// end); returns the reservation's first byte and sets `pad`.
static __device__ unsigned long long
sdma_ring_reserve(SdmaRingQueue *q, unsigned need, unsigned &pad) {
#ifdef SDMA_RING_FAULT_RACE
  unsigned long long cur = SDMA_RING_LOAD(&q->reserve);
  SDMA_ATOMIC_ADD_U64(&q->arrive, 1ull);
  // Every writer of the queue reads before any writes (bounded: 100 ms).
  for (unsigned long long t = SDMA_NOW_NS();
       SDMA_RING_LOAD(&q->arrive) < SDMA_NTID &&
       SDMA_NOW_NS() - t < 100000000;)
    SDMA_SPIN_PAUSE();
  unsigned long long pos = cur & (q->bytes - 1);
  pad = pos + need > q->bytes ? (unsigned)(q->bytes - pos) : 0;
  SDMA_RING_STORE_RELEASE(&q->reserve, cur + pad + need);
  return cur;
#else
  unsigned long long cur = SDMA_RING_LOAD(&q->reserve);
  for (;;) {
    unsigned long long pos = cur & (q->bytes - 1);
#ifdef SDMA_RING_FAULT_NO_PAD
    pad = 0;
#else
    pad = pos + need > q->bytes ? (unsigned)(q->bytes - pos) : 0;
#endif
    unsigned long long seen = SDMA_ATOMIC_CAS_U64(&q->reserve, cur,
                                                  cur + pad + need);
    if (seen == cur)
      return cur;
    cur = seen;
  }
#endif
}

// Puts one packet of `n` dwords into queue `q` and rings its doorbell.
static __device__ bool sdma_ring_submit(const SdmaRingArgs &a,
                                        SdmaRingQueue *q, const unsigned *d,
                                        unsigned n) {
  if (SDMA_RING_LOAD(a.error))
    return false;
  unsigned pad = 0;
  unsigned long long base = sdma_ring_reserve(q, 4 * n, pad);
  unsigned long long end = base + pad + 4 * n;
  // Room: the engine has read everything up to end - bytes.
  if (end > q->bytes && SDMA_RING_LOAD(q->rptr) < end - q->bytes) {
    SDMA_ATOMIC_ADD_U64(&q->fullWaits, 1ull);
    if (!sdma_ring_wait_ge(a, SDMA_RING_ERR_FULL, q, q->rptr, end - q->bytes))
      return false;
  }
  unsigned mask = (unsigned)(q->bytes / 4 - 1);
  unsigned at = (unsigned)(base / 4) & mask;
  if (pad) {
#if SDMA_RING_NOP_COUNT
    // One NOP whose count covers the tail (count[29:16]: extra dwords).
    SDMA_RING_STORE(q, at, (pad / 4 - 1) << 16);
#else
    // Single-dword NOPs: firmware without NOP counts (gfx9 default).
    for (unsigned i = 0; i < pad / 4; ++i)
      SDMA_RING_STORE(q, at + i, 0u);
#endif
    at = 0;
  }
#ifdef SDMA_RING_FAULT_EARLY_DOORBELL
  const unsigned early = n - 1;
#else
  const unsigned early = n;
#endif
  for (unsigned i = 0; i < early; ++i)
    SDMA_RING_STORE(q, (at + i) & mask, d[i]);
  // In order: every earlier reservation's packet is committed first.
  if (!sdma_ring_wait_ge(a, SDMA_RING_ERR_COMMIT, q, &q->committed, base))
    return false;
  SDMA_FENCE_SYSTEM(); // the packet before the write pointer and doorbell
  SDMA_RING_STORE_RELEASE(q->wptr, end);
  SDMA_RING_DOORBELL(q, end);
  for (unsigned i = early; i < n; ++i)
    SDMA_RING_STORE(q, (at + i) & mask, d[i]);
  SDMA_RING_STORE_RELEASE(&q->committed, end);
  return true;
}
)SDMA";

/// The communicator's entry (hip/HipRingKernel.cpp), appended after a ring
/// writer with SDMA_RING_TABLE_BUFS (ranks x buffers) and
/// SDMA_RING_TABLE_RANKS defined: the call's buffer and flag addresses
/// travel in the argument itself (nothing copied before the launch, so a
/// CUDA-style graph can capture it); nothing is written once the call has
/// failed (its record set: the entry barrier timed out, the ranks' calls
/// differ, an abort); a writer that gives up reports it in the call's
/// record as DmaProgram.h's kDmaRingWriterSlot (-14: value the queue, seen
/// 1 ring space or 2 commit).
constexpr const char *kRingTableEntry = R"SDMA(
struct SdmaRingTable {
  unsigned long long buf[SDMA_RING_TABLE_BUFS];
  unsigned long long flags[SDMA_RING_TABLE_RANKS];
  unsigned long long *callError;  // the call's record
  unsigned long long *callMirror; // its host copy (null: none)
  unsigned long long rank;
};

extern "C" __global__ void sdma_ring_write_table(SdmaRingArgs a,
                                                 SdmaRingTable t) {
  if (SDMA_RING_LOAD(t.callError))
    return;
  a.buf = t.buf;
  a.flags = t.flags;
  a.ts = t.flags; // the communicator's packets write no timestamps
  sdma_ring_run(a);
  SDMA_SYNC();
  unsigned long long kind = SDMA_RING_LOAD(a.error);
  if (SDMA_TID != 0 || (kind != SDMA_RING_ERR_FULL &&
                        kind != SDMA_RING_ERR_COMMIT) ||
      SDMA_ATOMIC_CAS_U64(t.callError, 0ull, 1ull) != 0ull)
    return;
  unsigned long long *records[2] = {t.callError, t.callMirror};
  for (int i = 0; i < 2; ++i) {
    unsigned long long *r = records[i];
    if (!r)
      continue;
    r[1] = t.rank;
    r[2] = (unsigned long long)-14ll;
    r[3] = a.error[1];
    r[4] = kind;
    SDMA_FENCE_SYSTEM();
    if (i == 1)
      *(volatile unsigned long long *)r = 1ull;
  }
  SDMA_FENCE_SYSTEM();
}
)SDMA";

/// The ring macros on AMD GPUs (after kHipPrelude or kHipClangPrelude).
constexpr const char *kRingHipPrelude = R"SDMA(
#define SDMA_RING_LOAD(p)                                                      \
  __hip_atomic_load((p), __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM)
#define SDMA_RING_STORE_RELEASE(p, v)                                          \
  __hip_atomic_store((p), (v), __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM)
#define SDMA_ATOMIC_ADD_U64(p, v)                                              \
  __hip_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define SDMA_RING_STORE(q, i, v) ((q)->ring[(i)] = (v))
#define SDMA_RING_DOORBELL(q, v) SDMA_RING_STORE_RELEASE((q)->doorbell, (v))
#define SDMA_SPIN_PAUSE() __builtin_amdgcn_s_sleep(1)
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
)SDMA";

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_AMD_RINGDEVICE_H
