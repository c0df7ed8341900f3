//===- LdstKernel.hip - the generic load/store kernel -----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The device code every file `sdma-translate --sdma-to-hip` writes ends
// with: this file, LdstReduce.hip, LdstCounts.hip, LdstLowLatency.hip and
// LdstPhases.hip, in that order, each after its banner (everything up to the
// first blank line), embedded at build time as string literals
// (runtime/EmbedKernel.cmake), so they are copied out
// byte for byte. This one: the table of addresses, errors, the rank sync,
// waits, signals and barriers. It compiles after what comes before it there:
//   - a prelude that defines the SDMA_* device macros (SDMA_TID, SDMA_SYNC,
//     SDMA_ATOMIC_*, ...; runtime/include/sdma/runtime/LdstPrelude.h has
//     one per compiler, runtime/lib/host/LdstCpuExecutor.cpp the CPU emulator's);
//   - the schedule: SDMA_RANKS, SDMA_BUFFERS, SDMA_FLAG_SLOTS and
//     SDMA_OP_STRIDE, and the tables sdma_ops, sdma_steps, sdma_rank_begin
//     and sdma_per_epoch (TranslateToHIP.cpp describes them).
// test/gpu/compile-*.test and test/ldst-cpu compile and run it that way.
//===----------------------------------------------------------------------===//

// SDMA_STAGED_OPS=1 (the runtime's stagedOps option) resolves each phase's
// ops into shared memory first; see sdma_phase.
#ifndef SDMA_STAGED_OPS
#define SDMA_STAGED_OPS 0
#endif
#ifndef SDMA_COUNT_OPS
#define SDMA_COUNT_OPS 0
#endif
#ifndef SDMA_REDUCE
#define SDMA_REDUCE 0
#endif
#ifndef SDMA_STAGE_CAP
#define SDMA_STAGE_CAP 64
#endif
// SDMA_SPECIALISED=1: the emitter wrote each rank's steps as code
// (sdma_run_rank, after this file) calling the sdma_seg_* routines below
// with their sizes and kinds as constants; else sdma_run_rank walks the
// step table.
#ifndef SDMA_SPECIALISED
#define SDMA_SPECIALISED 0
#endif
// SDMA_LL=1: the emitter planned the low-latency tables (sdma_ll_*).
#ifndef SDMA_LL
#define SDMA_LL 0
#endif
#ifndef SDMA_INLINE
#define SDMA_INLINE inline __attribute__((always_inline))
#endif
// A specialised kernel's segment routines: one copy per template instance
// (called from every phase; inlined into each, a ring's kernel takes
// NVRTC 20 s instead of 0.5 s), unless the emitter inlines them (a few
// calls per rank).
#ifndef SDMA_SEG_INLINE
#define SDMA_SEG_INLINE __attribute__((noinline))
#endif
// The fence that orders what one rank writes before what another reads:
// system scope (peers on other GPUs, or the host), or with SDMA_ONE_GPU=1
// (set by the runtime when every rank of the job runs on this GPU, e.g.
// processes or threads sharing one) device scope, which orders the same
// for threads of one GPU at a fraction of the cost (a call's fences were
// most of its fixed cost: bench/results/protocol-h100.md). Failure records
// copied to host memory keep SDMA_FENCE_SYSTEM.
#ifndef SDMA_ONE_GPU
#define SDMA_ONE_GPU 0
#endif
#if SDMA_ONE_GPU
#define SDMA_FENCE_JOB() SDMA_FENCE()
#else
#define SDMA_FENCE_JOB() SDMA_FENCE_SYSTEM()
#endif
// A prelude may give spinning threads a pause (the CPU emulator yields).
#ifndef SDMA_SPIN_PAUSE
#define SDMA_SPIN_PAUSE()
#endif
// Stops a kernel whose launch contradicts how it was built (a GPU error).
#ifndef SDMA_TRAP
#define SDMA_TRAP() __builtin_trap()
#endif

struct SdmaTable {
  char *buf[SDMA_RANKS * SDMA_BUFFERS];  // buf[r * SDMA_BUFFERS + b]
  unsigned long long *flags[SDMA_RANKS]; // SDMA_FLAG_SLOTS per rank
  unsigned int *sync[SDMA_RANKS];        // per rank: arrivals, generation
  unsigned long long *error; // status (0 ok, 1 wait timed out), rank, slot,
                             // value awaited, value seen; then a count
                             // error of sdma.copyv (it does not stop the
                             // run): kind (0 none), rank * 65536 + peer,
                             // the count
  unsigned long long timeoutNs;
  // Null: the `epoch` argument numbers the run. Else two counters per
  // launched rank (blockIdx.y): the run number, kept on the device, and the
  // blocks that finished the run; the last block to finish advances the run
  // number. A launch replayed from a CUDA graph is then the next epoch
  // without the host (the communicator's launches).
  unsigned long long *epochs;
  // Null in-process. A communicator's launch (one process per rank, each
  // rank's kernel started by its own stream) brackets the schedule with two
  // job barriers: rank r's words arrive[r][phase * SDMA_RANKS + s] count
  // rank s's arrivals (phase 0: its stream reached the launch, so its
  // buffers may be written; phase 1: all its writes are done).
  unsigned long long *arrive[SDMA_RANKS];
  // Null in-process. Else host memory the device can write (a
  // communicator's): a failure's record is copied there too, so the host
  // reads it without synchronising while every wait polls `error` in device
  // memory (polling host memory from many blocks serialises them).
  unsigned long long *errorMirror;
  // The bytes of one row, the unit of sdma.copyv's counts and packed
  // offsets; 0: a row is a chunk. A premulsum reduction (which has no
  // copyv): this rank's scalar (the bits of a value of the element type;
  // with SDMA_PREMUL_DEVICE its address in device memory).
  unsigned long long rowBytes;
  // sdmaAlltoAllv's counts, moved by the kernel itself (no copies around
  // the launch, which would be two more stream operations per call): before
  // the run SDMA_COUNTS_IN counts from countsIn[0] (the caller's, device
  // memory) into countsIn[1] (this rank's send table); after every write
  // into this rank is done, SDMA_COUNTS_OUT from countsOut[0] (its receive
  // table) to countsOut[1] (the caller's), followed there by the offsets of
  // the segments they count where SDMA_COUNTS_OFFSETS asks. Null: none.
  long long *countsIn[2];
  long long *countsOut[2];
  // A communicator's launch: the call's tag (a hash of what every rank
  // must pass alike: the call, where its shared buffers are, the path),
  // and every rank's tag words, tags[r][s] rank s's tag as rank r sees it.
  // Written before the entry barrier's arrival and compared after it, so a
  // rank whose call differs from a peer's (the host compares a signature
  // only the first time it is seen) fails every rank before any byte
  // moves. Null tags: not checked (in-process runs). Then, for a
  // premulsum, every rank's scalar: tags[r][SDMA_RANKS + s] rank s's.
  unsigned long long callTag;
  unsigned long long *tags[SDMA_RANKS];
#if SDMA_LL
  // A low-latency program (the emitter's SDMA_LL; LdstLowLatency.hip): the
  // call runs without job barriers where ll[0] is set: ll[r] is rank r's
  // inbox (two slots of SDMA_RANKS regions of llPairBytes), llSeq this
  // rank's call counter and its blocks' count (the communicator's, shared
  // by all its programs).
  char *ll[SDMA_RANKS];
  unsigned long long *llSeq;
  unsigned long long llPairBytes;
#endif
};

struct __attribute__((aligned(16))) sdma_v16 {
  unsigned long long x, y;
};

static __device__ bool sdma_aborted(const SdmaTable *T) {
  return *(volatile unsigned long long *)T->error != 0;
}

static __device__ void sdma_report(const SdmaTable *T, int rank, int slot,
                                   unsigned long long value,
                                   unsigned long long seen) {
  if (SDMA_ATOMIC_CAS_U64(T->error, 0ull, 1ull) == 0ull) {
    T->error[1] = rank;
    T->error[2] = slot;
    T->error[3] = value;
    T->error[4] = seen;
    if (T->errorMirror) {
      T->errorMirror[1] = rank;
      T->errorMirror[2] = slot;
      T->errorMirror[3] = value;
      T->errorMirror[4] = seen;
      SDMA_FENCE_SYSTEM();
      *(volatile unsigned long long *)T->errorMirror = 1ull;
    }
    SDMA_FENCE_SYSTEM();
  }
}

// The blocks of one rank meet; everything they wrote before is visible to
// every rank after.
static __device__ void sdma_rank_sync(const SdmaTable *T, int rank) {
  SDMA_SYNC();
  if (SDMA_TID == 0) {
    unsigned int *c = T->sync[rank];
    volatile unsigned int *gen = c + 1;
    unsigned int g = *gen;
    SDMA_FENCE_JOB();
    if (SDMA_ATOMIC_ADD_U32(c, 1u) == SDMA_NBID - 1) {
      *(volatile unsigned int *)c = 0;
      SDMA_FENCE();
      SDMA_ATOMIC_ADD_U32(c + 1, 1u);
    } else {
      unsigned long long start = SDMA_NOW_NS();
      while (*gen == g) {
        SDMA_SPIN_PAUSE();
        if (sdma_aborted(T))
          break;
        if (SDMA_NOW_NS() - start > T->timeoutNs) {
          sdma_report(T, rank, -1, SDMA_NBID, 0);
          break;
        }
      }
    }
    SDMA_FENCE();
  }
  SDMA_SYNC();
}

// Every block waits until flag `slot` of `rank` reaches `value`.
static __device__ bool sdma_wait(const SdmaTable *T, int rank, int slot,
                                 unsigned long long value) {
  if (SDMA_TID == 0) {
    volatile unsigned long long *f = T->flags[rank] + slot;
    unsigned long long start = SDMA_NOW_NS();
    unsigned long long seen;
    while ((seen = *f) < value) {
      SDMA_SPIN_PAUSE();
      if (sdma_aborted(T))
        break;
      if (SDMA_NOW_NS() - start > T->timeoutNs) {
        sdma_report(T, rank, slot, value, seen);
        break;
      }
    }
    SDMA_FENCE_JOB();
  }
  SDMA_SYNC();
  return !sdma_aborted(T);
}

#if defined(SDMA_REDUCE_OP) && SDMA_REDUCE_OP == 5
// This rank's premulsum scalar: SdmaTable::rowBytes, or with
// SDMA_PREMUL_DEVICE the value of the element type at that address in
// device memory, read now (byte by byte: any alignment; little-endian).
static __device__ unsigned long long sdma_premul_own(const SdmaTable *T) {
#if defined(SDMA_PREMUL_DEVICE) && SDMA_PREMUL_DEVICE
  const int size = SDMA_REDUCE_TYPE == 1 || SDMA_REDUCE_TYPE == 2   ? 2
                   : SDMA_REDUCE_TYPE == 8 || SDMA_REDUCE_TYPE == 9 ? 1
                   : SDMA_REDUCE_TYPE == 4 || SDMA_REDUCE_TYPE == 6 ||
                           SDMA_REDUCE_TYPE == 7
                       ? 8
                       : 4;
  const volatile unsigned char *p = (const volatile unsigned char *)T->rowBytes;
  unsigned long long bits = 0;
  for (int i = 0; i < size; ++i)
    bits |= (unsigned long long)p[i] << (8 * i);
  return bits;
#else
  return T->rowBytes;
#endif
}
#endif

// One job barrier (see SdmaTable::arrive): one block (`arrives`) tells
// every rank, every block that calls it waits for every rank; a rank that
// does not come in time is reported as flag slot -2 - phase with the rank
// awaited and the count awaited as the value (r | (epoch + 1) << 16,
// sdma::rt::PeerWait). `released`: the arriving thread has just fenced
// after everything its arrival must publish (its block's and, through
// the fence's cumulativity, what it acquired), so it arrives without
// another fence.
static __device__ bool sdma_job_barrier(const SdmaTable *T, int rank,
                                        int phase, unsigned long long epoch,
                                        bool arrives, bool released) {
  const bool tagged = phase == 0 && T->tags[0];
  if (arrives && SDMA_TID == 0) {
#if defined(SDMA_REDUCE_OP) && SDMA_REDUCE_OP == 5
    const unsigned long long scalar = tagged ? sdma_premul_own(T) : 0;
#endif
    if (tagged)
      for (int r = 0; r < SDMA_RANKS; ++r) {
        ((volatile unsigned long long *)T->tags[r])[rank] = T->callTag;
#if defined(SDMA_REDUCE_OP) && SDMA_REDUCE_OP == 5
        // premulsum: this rank's scalar beside its tag (sdma_scalar).
        ((volatile unsigned long long *)T->tags[r])[SDMA_RANKS + rank] =
            scalar;
#endif
      }
    if (!released)
      SDMA_FENCE_JOB();
    for (int r = 0; r < SDMA_RANKS; ++r)
      SDMA_ATOMIC_ADD_SYSTEM_U64(T->arrive[r] + phase * SDMA_RANKS + rank,
                                 1ull);
  }
  if (SDMA_TID == 0) {
    unsigned long long start = SDMA_NOW_NS();
    for (int r = 0; r < SDMA_RANKS && !sdma_aborted(T); ++r) {
      volatile unsigned long long *f =
          T->arrive[rank] + phase * SDMA_RANKS + r;
      unsigned long long seen;
      while ((seen = *f) < epoch + 1) {
        SDMA_SPIN_PAUSE();
        if (sdma_aborted(T))
          break;
        if (SDMA_NOW_NS() - start > T->timeoutNs) {
          sdma_report(T, rank, -2 - phase,
                      (unsigned long long)r | (epoch + 1) << 16, seen);
          break;
        }
      }
    }
    SDMA_FENCE_JOB();
    // Every rank arrived, its tag written before: the same call, or every
    // rank stops here (slot -4, the first differing rank as the value).
    for (int r = 0; tagged && r < SDMA_RANKS && !sdma_aborted(T); ++r) {
      unsigned long long theirs =
          ((volatile const unsigned long long *)T->tags[rank])[r];
      if (theirs != T->callTag)
        sdma_report(T, rank, -4, (unsigned long long)r, theirs);
    }
  }
  SDMA_SYNC();
  return !sdma_aborted(T);
}

// SIGNAL: block 0's thread 0, after a job fence (SDMA_FENCE_JOB), adds 1
// to flag `slot` of `to` (the rank's blocks met before: a SYNC precedes
// it).
static __device__ SDMA_INLINE void sdma_signal(const SdmaTable *T, int to,
                                               int slot) {
  if (SDMA_BID == 0 && SDMA_TID == 0) {
    SDMA_FENCE_JOB();
    SDMA_ATOMIC_ADD_SYSTEM_U64(T->flags[to] + slot, 1ull);
  }
}

// BARRIER: every rank's slot `slot` += 1, then wait for `value`.
static __device__ SDMA_INLINE bool sdma_barrier_step(const SdmaTable *T, int rank,
                                                int slot,
                                                unsigned long long value) {
  if (SDMA_BID == 0 && SDMA_TID == 0) {
    SDMA_FENCE_JOB();
    for (int r = 0; r < SDMA_RANKS; ++r)
      SDMA_ATOMIC_ADD_SYSTEM_U64(T->flags[r] + slot, 1ull);
  }
  return sdma_wait(T, rank, slot, value);
}

// v / d in 32 bits where both fit (a 64-bit division is a long routine).
static __device__ SDMA_INLINE unsigned long long
sdma_div(unsigned long long v, unsigned long long d) {
  return ((v | d) >> 32) ? v / d : (unsigned)v / (unsigned)d;
}

// One data op resolved to addresses: source a, destinations b (and c for
// a broadcast; a and b swap for a swap), n bytes.
struct sdma_desc {
  char *a, *b, *c;
  unsigned long long n;
  int kind; // 0 copy, 1 bcast, 2 swap, 4 reduce (b: destination)
  const long long *row; // reduce: the op row (its sources)
};
