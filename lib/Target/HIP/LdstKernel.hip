//===- LdstKernel.hip - the generic load/store kernel -----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The device code every file `sdma-translate --sdma-to-hip` writes ends
// with: this file after its banner (everything up to the first blank line),
// embedded at build time as a string literal (EmbedKernel.cmake), so it is
// copied out byte for byte. It compiles after what comes before it there:
//   - a prelude that defines the SDMA_* device macros (SDMA_TID, SDMA_SYNC,
//     SDMA_ATOMIC_*, ...; runtime/include/sdma/runtime/LdstPrelude.h has
//     one per compiler, runtime/lib/LdstCpuExecutor.cpp the CPU emulator's);
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
// A prelude may give spinning threads a pause (the CPU emulator yields).
#ifndef SDMA_SPIN_PAUSE
#define SDMA_SPIN_PAUSE()
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
  // offsets; 0: a row is a chunk.
  unsigned long long rowBytes;
  // sdmaAlltoAllv's counts, moved by the kernel itself (no copies around
  // the launch, which would be two more stream operations per call): before
  // the run SDMA_RANKS counts from countsIn[0] (the caller's, device
  // memory) into countsIn[1] (this rank's send table); after every write
  // into this rank is done, from countsOut[0] (its receive table) to
  // countsOut[1] (the caller's). Null: none.
  long long *countsIn[2];
  long long *countsOut[2];
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
    SDMA_FENCE_SYSTEM();
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
    SDMA_FENCE_SYSTEM();
  }
  SDMA_SYNC();
  return !sdma_aborted(T);
}

// One data op resolved to addresses: source a, destinations b (and c for
// a broadcast; a and b swap for a swap), n bytes.
// One job barrier (see SdmaTable::arrive): block 0 tells every rank, every
// block waits for every rank; a rank that does not come in time is
// reported as flag slot -2 - phase with the rank awaited as the value.
static __device__ bool sdma_job_barrier(const SdmaTable *T, int rank,
                                        int phase, unsigned long long epoch) {
  if (SDMA_BID == 0 && SDMA_TID == 0) {
    SDMA_FENCE_SYSTEM();
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
          sdma_report(T, rank, -2 - phase, (unsigned long long)r, seen);
          break;
        }
      }
    }
    SDMA_FENCE_SYSTEM();
  }
  SDMA_SYNC();
  return !sdma_aborted(T);
}

// SIGNAL: block 0's thread 0, after a system-scope fence, adds 1 to flag
// `slot` of `to` (the rank's blocks met before: a SYNC precedes it).
static __device__ SDMA_INLINE void sdma_signal(const SdmaTable *T, int to,
                                               int slot) {
  if (SDMA_BID == 0 && SDMA_TID == 0) {
    SDMA_FENCE_SYSTEM();
    SDMA_ATOMIC_ADD_SYSTEM_U64(T->flags[to] + slot, 1ull);
  }
}

// BARRIER: every rank's slot `slot` += 1, then wait for `value`.
static __device__ SDMA_INLINE bool sdma_barrier_step(const SdmaTable *T, int rank,
                                                int slot,
                                                unsigned long long value) {
  if (SDMA_BID == 0 && SDMA_TID == 0) {
    SDMA_FENCE_SYSTEM();
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

struct sdma_desc {
  char *a, *b, *c;
  unsigned long long n;
  int kind; // 0 copy, 1 bcast, 2 swap, 4 reduce (b: destination)
  const long long *row; // reduce: the op row (its sources)
};

#if SDMA_REDUCE
#ifndef SDMA_REDUCE_MAX_DSTS
#define SDMA_REDUCE_MAX_DSTS 1
#endif
// sdma.reduce arithmetic in SDMA_REDUCE_TYPE (0 f32, 1 f16, 2 bf16, 3 i32,
// 4 i64, 5 ui32, 6 ui64, 7 f64, 8 i8, 9 ui8) with SDMA_REDUCE_OP (0 sum,
// 1 max, 2 min, 3 prod). 16-bit floats
// are widened to fp32, combined there and rounded once (to nearest even)
// when stored; integers wrap (two's complement). The conversions are
// written out so the CPU emulator, hipRTC and NVRTC compute the same bits.
union sdma_bits {
  float f;
  unsigned int u;
};
static __device__ inline float sdma_f32_of(unsigned int u) {
  sdma_bits b;
  b.u = u;
  return b.f;
}
static __device__ inline unsigned int sdma_u32_of(float f) {
  sdma_bits b;
  b.f = f;
  return b.u;
}
static __device__ inline float sdma_f16_to_f32(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  unsigned int exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1fu)
    return sdma_f32_of(sign | 0x7f800000u | (man << 13));
  if (exp != 0)
    return sdma_f32_of(sign | ((exp + 112u) << 23) | (man << 13));
  if (man == 0)
    return sdma_f32_of(sign);
  unsigned int e = 0; // a subnormal: normalise
  while (!(man & 0x400u)) {
    man <<= 1;
    ++e;
  }
  return sdma_f32_of(sign | ((113u - e) << 23) | ((man & 0x3ffu) << 13));
}
static __device__ inline unsigned short sdma_f32_to_f16(float f) {
  const unsigned int x = sdma_u32_of(f);
  const unsigned int sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) // inf, nan (quiet)
    return (unsigned short)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) // rounds past 65504
    return (unsigned short)(sign | 0x7c00u);
  if (ax <= 0x33000000u) // at most 2^-25: rounds to zero
    return (unsigned short)sign;
  if (ax < 0x38800000u) { // below 2^-14: an f16 subnormal
    const unsigned int e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    const unsigned int shift = 126u - e;
    unsigned int h = m >> shift;
    const unsigned int rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u)))
      ++h;
    return (unsigned short)(sign | h);
  }
  const unsigned int r = ax - 0x38000000u; // rebias 127 -> 15
  unsigned int h = r >> 13;
  const unsigned int rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h;
  return (unsigned short)(sign | h);
}
static __device__ inline float sdma_bf16_to_f32(unsigned short h) {
  return sdma_f32_of((unsigned int)h << 16);
}
static __device__ inline unsigned short sdma_f32_to_bf16(float f) {
  const unsigned int x = sdma_u32_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // nan stays nan (quiet)
    return (unsigned short)((x >> 16) | 0x40u);
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// SDMA_KEY orders two accumulators as the element type does (integers:
// signed or unsigned at their width); integer accumulators wrap.
#if SDMA_REDUCE_TYPE == 0
typedef float sdma_acc;
#define SDMA_ESIZE 4
#define SDMA_LOAD(p) (*(const float *)(p))
#define SDMA_STORE(p, v) (*(float *)(p) = (v))
#elif SDMA_REDUCE_TYPE == 1
typedef float sdma_acc;
#define SDMA_ESIZE 2
#define SDMA_LOAD(p) sdma_f16_to_f32(*(const unsigned short *)(p))
#define SDMA_STORE(p, v) (*(unsigned short *)(p) = sdma_f32_to_f16(v))
#elif SDMA_REDUCE_TYPE == 2
typedef float sdma_acc;
#define SDMA_ESIZE 2
#define SDMA_LOAD(p) sdma_bf16_to_f32(*(const unsigned short *)(p))
#define SDMA_STORE(p, v) (*(unsigned short *)(p) = sdma_f32_to_bf16(v))
#elif SDMA_REDUCE_TYPE == 7
typedef double sdma_acc;
#define SDMA_ESIZE 8
#define SDMA_LOAD(p) (*(const double *)(p))
#define SDMA_STORE(p, v) (*(double *)(p) = (v))
#elif SDMA_REDUCE_TYPE == 3 || SDMA_REDUCE_TYPE == 5
typedef unsigned int sdma_acc;
#define SDMA_ESIZE 4
#define SDMA_LOAD(p) (*(const unsigned int *)(p))
#define SDMA_STORE(p, v) (*(unsigned int *)(p) = (v))
#if SDMA_REDUCE_TYPE == 3
#define SDMA_KEY(v) ((long long)(int)(v))
#else
#define SDMA_KEY(v) (v)
#endif
#elif SDMA_REDUCE_TYPE == 4 || SDMA_REDUCE_TYPE == 6
typedef unsigned long long sdma_acc;
#define SDMA_ESIZE 8
#define SDMA_LOAD(p) (*(const unsigned long long *)(p))
#define SDMA_STORE(p, v) (*(unsigned long long *)(p) = (v))
#if SDMA_REDUCE_TYPE == 4
#define SDMA_KEY(v) ((long long)(v))
#else
#define SDMA_KEY(v) (v)
#endif
#elif SDMA_REDUCE_TYPE == 8 || SDMA_REDUCE_TYPE == 9
typedef unsigned int sdma_acc;
#define SDMA_ESIZE 1
#define SDMA_LOAD(p) ((unsigned int)*(const unsigned char *)(p))
#define SDMA_STORE(p, v) (*(unsigned char *)(p) = (unsigned char)(v))
#if SDMA_REDUCE_TYPE == 8
#define SDMA_KEY(v) ((int)(signed char)(unsigned char)(v))
#else
#define SDMA_KEY(v) ((unsigned char)(v))
#endif
#else
#error "SDMA_REDUCE_TYPE: 0 f32, 1 f16, 2 bf16, 3 i32, 4 i64, 5 ui32, 6 ui64, 7 f64, 8 i8, 9 ui8"
#endif
#ifndef SDMA_KEY
#define SDMA_KEY(v) (v)
#endif
#define SDMA_LANES (16 / SDMA_ESIZE)

static __device__ inline sdma_acc sdma_combine(sdma_acc a, sdma_acc b) {
#if SDMA_REDUCE_OP == 0
  return a + b;
#elif SDMA_REDUCE_OP == 1
  return SDMA_KEY(a) > SDMA_KEY(b) ? a : b;
#elif SDMA_REDUCE_OP == 2
  return SDMA_KEY(a) < SDMA_KEY(b) ? a : b;
#elif SDMA_REDUCE_OP == 3
  return a * b;
#else
#error "SDMA_REDUCE_OP: 0 sum, 1 max, 2 min, 3 prod"
#endif
}

// One reduce row over the thread's 16-byte units: the destination's value,
// then every source in order, stored once.
static __device__ void sdma_reduce_ops(const SdmaTable *T, const sdma_desc &d,
                                       unsigned long long chunk,
                                       unsigned long long nthreads,
                                       unsigned long long &u,
                                       unsigned long long &base) {
  const long long *row = d.row;
  // row[9]: the first source is the initial value (the destination is not
  // read); row[10]: destinations after the sources that also get the
  // result (FuseReductions.h).
  const int nsrc = (int)row[8], first = (int)row[9], ndst = (int)row[10];
  const char *src[SDMA_REDUCE_MAX_SRCS];
  char *dsts[SDMA_REDUCE_MAX_DSTS + 1];
  dsts[0] = d.b;
  bool aligned = (((unsigned long long)d.b) & 15ull) == 0;
  for (int s = 0; s < nsrc + ndst; ++s) {
    const long long *rs = sdma_rsrc + 3 * (row[7] + s);
    char *p = T->buf[rs[0] * SDMA_BUFFERS + rs[1]] + rs[2] * chunk;
    if (s < nsrc)
      src[s] = p;
    else
      dsts[1 + s - nsrc] = p;
    aligned = aligned && (((unsigned long long)p) & 15ull) == 0;
  }
  const char *init = first ? src[0] : d.b;
  const unsigned long long n = d.n, units = (n + 15) / 16;
  const unsigned long long full = aligned ? n / 16 : 0;
  union lanes {
    sdma_v16 v;
    unsigned char b[16];
  };
  for (; u < base + full; u += nthreads) {
    const unsigned long long off = (u - base) * 16;
    sdma_acc acc[SDMA_LANES];
    lanes x;
    x.v = *(const sdma_v16 *)(init + off);
    for (int i = 0; i < SDMA_LANES; ++i)
      acc[i] = SDMA_LOAD(x.b + i * SDMA_ESIZE);
    for (int s = first; s < nsrc; ++s) {
      x.v = *(const sdma_v16 *)(src[s] + off);
      for (int i = 0; i < SDMA_LANES; ++i)
        acc[i] = sdma_combine(acc[i], SDMA_LOAD(x.b + i * SDMA_ESIZE));
    }
    for (int i = 0; i < SDMA_LANES; ++i)
      SDMA_STORE(x.b + i * SDMA_ESIZE, acc[i]);
    for (int k = 0; k <= ndst; ++k)
      *(sdma_v16 *)(dsts[k] + off) = x.v;
  }
  // The tail (and unaligned slices): element by element.
  for (; u < base + units; u += nthreads) {
    const unsigned long long off = (u - base) * 16;
    const unsigned long long end = off + 16 < n ? off + 16 : n;
    for (unsigned long long j = off; j + SDMA_ESIZE <= end; j += SDMA_ESIZE) {
      sdma_acc acc = SDMA_LOAD(init + j);
      for (int s = first; s < nsrc; ++s)
        acc = sdma_combine(acc, SDMA_LOAD(src[s] + j));
      for (int k = 0; k <= ndst; ++k)
        SDMA_STORE(dsts[k] + j, acc);
    }
  }
  base += units;
}

#if SDMA_SPECIALISED
// A specialised kernel's run of `nrows` reduce rows of one phase that all
// add NSRC sources of `n` bytes into one destination and store the result
// to NDST more (FIRST: the first source is the initial value). A thread
// takes one 16-byte unit at a time and has all its loads in flight before
// it adds; the row's pointers are resolved once per row it enters.
template <int NSRC, int NDST, int FIRST>
static __device__ SDMA_SEG_INLINE void
sdma_seg_reduce(const SdmaTable *T, const long long *rows,
                unsigned long long nrows, unsigned long long chunk,
                unsigned long long n, unsigned long long nthreads,
                unsigned long long &u, unsigned long long &base) {
  const unsigned long long upo = (n + 15) / 16, total = upo * nrows;
  const char *src[NSRC];
  char *dst[NDST + 1];
  bool aligned = false;
  // The units [begin, end) of the row whose pointers are resolved.
  unsigned long long begin = 1, end = 0;
  union lanes {
    sdma_v16 v;
    unsigned char b[16];
  };
  for (; u < base + total; u += nthreads) {
    const unsigned long long v = u - base;
    if (v < begin || v >= end) {
      const unsigned long long i = nrows == 1 ? 0 : sdma_div(v, upo);
      begin = i * upo;
      end = begin + upo;
      const long long *row = rows + i * SDMA_OP_STRIDE;
      dst[0] = T->buf[row[1] * SDMA_BUFFERS + row[2]] + row[3] * chunk;
      unsigned long long bits = (unsigned long long)dst[0];
      const long long *rs = sdma_rsrc + 3 * row[7];
      for (int s = 0; s < NSRC + NDST; ++s) {
        char *p = T->buf[rs[3 * s] * SDMA_BUFFERS + rs[3 * s + 1]] +
                  rs[3 * s + 2] * chunk;
        if (s < NSRC)
          src[s] = p;
        else
          dst[1 + s - NSRC] = p;
        bits |= (unsigned long long)p;
      }
      aligned = (bits & 15ull) == 0;
    }
    const unsigned long long off = (v - begin) * 16;
    const char *init = FIRST ? src[0] : dst[0];
    if (aligned && off + 16 <= n) {
      lanes x[NSRC + 1 - FIRST];
      x[0].v = *(const sdma_v16 *)(init + off);
      for (int s = FIRST; s < NSRC; ++s)
        x[1 + s - FIRST].v = *(const sdma_v16 *)(src[s] + off);
      sdma_acc acc[SDMA_LANES];
      for (int l = 0; l < SDMA_LANES; ++l)
        acc[l] = SDMA_LOAD(x[0].b + l * SDMA_ESIZE);
      for (int s = 1; s < NSRC + 1 - FIRST; ++s)
        for (int l = 0; l < SDMA_LANES; ++l)
          acc[l] = sdma_combine(acc[l], SDMA_LOAD(x[s].b + l * SDMA_ESIZE));
      for (int l = 0; l < SDMA_LANES; ++l)
        SDMA_STORE(x[0].b + l * SDMA_ESIZE, acc[l]);
      for (int k = 0; k <= NDST; ++k)
        *(sdma_v16 *)(dst[k] + off) = x[0].v;
      continue;
    }
    const unsigned long long end = off + 16 < n ? off + 16 : n;
    for (unsigned long long j = off; j + SDMA_ESIZE <= end; j += SDMA_ESIZE) {
      sdma_acc acc = SDMA_LOAD(init + j);
      for (int s = FIRST; s < NSRC; ++s)
        acc = sdma_combine(acc, SDMA_LOAD(src[s] + j));
      for (int k = 0; k <= NDST; ++k)
        SDMA_STORE(dst[k] + j, acc);
    }
  }
  base += total;
}
#endif
#endif

#if SDMA_COUNT_OPS
// A count error of sdma.copyv (kind 1: above its capacity, 2: a packed
// segment past its buffer's end, 3: negative; plus 4 when the rank's
// packed counts were all zeroed, see sdma_check_counts): the first is
// recorded (and mirrored to the host); the copy is skipped, the run goes on.
static __device__ void sdma_report_count(const SdmaTable *T, int kind,
                                         long long rank, long long peer,
                                         long long count) {
  if (SDMA_ATOMIC_CAS_U64(T->error + 5, 0ull, (unsigned long long)kind) ==
      0ull) {
    T->error[6] = (unsigned long long)(rank * 65536 + peer);
    T->error[7] = (unsigned long long)count;
    if (T->errorMirror) {
      T->errorMirror[6] = T->error[6];
      T->errorMirror[7] = T->error[7];
      SDMA_FENCE_SYSTEM();
      *(volatile unsigned long long *)(T->errorMirror + 5) =
          (unsigned long long)kind;
    }
    SDMA_FENCE_SYSTEM();
  }
}

// Entry `index` of count table `table` on `rank`.
static __device__ inline long long sdma_count(const SdmaTable *T, long long rank,
                                              long long table, long long index) {
  return ((volatile const long long *)T->buf[rank * SDMA_BUFFERS + table])[index];
}

// The exclusive prefix sum of a count-table row, in rows; -1 if an entry
// is negative or implausibly large (over 2^40 rows, so the sum cannot
// overflow). No branch between the loads: they are all in flight at once.
static __device__ inline long long sdma_prefix(const SdmaTable *T,
                                               const long long *side) {
  long long sum = 0;
  bool bad = false;
  for (long long i = 0; i < side[2]; ++i) {
    long long n = sdma_count(T, side[1], side[0], i);
    bad |= (unsigned long long)n > (1ull << 40); // negative too
    sum += n;
  }
  return bad ? -1 : sum;
}

// sdma.copyv: row[4] is the capacity in chunks, row[8..10] the count's
// table entry, row[11] its prefix tables in sdma_vops. Every bound is
// checked in rows before anything is multiplied into bytes.
static __device__ inline sdma_desc sdma_resolve_copyv(const SdmaTable *T,
                                                      const long long *op,
                                                      unsigned long long chunk) {
  const long long *v = sdma_vops + op[11] * SDMA_VOP_STRIDE;
  const unsigned long long row = T->rowBytes ? T->rowBytes : chunk;
  const long long n = sdma_count(T, op[8], op[9], op[10]);
  // Offsets in rows for packed sides; a fixed slot is in chunks.
  const long long srcRows = v[0] < 0 ? 0 : sdma_prefix(T, v);
  const long long dstRows = v[3] < 0 ? 0 : sdma_prefix(T, v + 3);
  const unsigned long long srcEnd = sdma_buffer_units[op[2]] * chunk;
  const unsigned long long dstEnd = sdma_buffer_units[op[6]] * chunk;
  sdma_desc d;
  d.kind = 0;
  d.n = 0;
  d.a = T->buf[op[1] * SDMA_BUFFERS + op[2]];
  d.b = d.c = T->buf[op[5] * SDMA_BUFFERS + op[6]];
  if (n < 0 || srcRows < 0 || dstRows < 0) {
    sdma_report_count(T, 3, op[1], op[5], n);
    return d;
  }
  if ((unsigned long long)n > (unsigned long long)op[4] * chunk / row) {
    sdma_report_count(T, 1, op[1], op[5], n);
    return d;
  }
  if ((unsigned long long)srcRows > srcEnd / row ||
      (unsigned long long)dstRows > dstEnd / row) {
    sdma_report_count(T, 2, op[1], op[5], n);
    return d;
  }
  const unsigned long long bytes = (unsigned long long)n * row;
  const unsigned long long src =
      v[0] < 0 ? op[3] * chunk : (unsigned long long)srcRows * row;
  const unsigned long long dst =
      v[3] < 0 ? op[7] * chunk : (unsigned long long)dstRows * row;
  if (src + bytes > srcEnd || dst + bytes > dstEnd) {
    sdma_report_count(T, 2, op[1], op[5], n);
    return d;
  }
  d.a += src;
  d.b = d.c = d.b + dst;
  d.n = bytes;
  return d;
}

// Before any count leaves this rank: a count one of its copyv ops will
// read from its own table that is negative or above the op's capacity is
// reported and set to 0 there, so the count exchange hands the receiver 0
// (its receive count says nothing came) and no prefix sum on either side
// sees the bad value. Where the op's source is packed (its rows' offsets
// are prefix sums of that table), the rows after the bad run are no longer
// where the counts say, so every count of the rank's packed copyvs becomes
// 0: the rank sends nothing in this call rather than wrong rows. Block 0
// only; the job barrier (or a rank sync) after it publishes the zeros.
static __device__ void sdma_check_counts(const SdmaTable *T, int rank,
                                         unsigned long long chunk) {
  const unsigned long long row = T->rowBytes ? T->rowBytes : chunk;
  SDMA_BLOCK_SHARED(int, packedBad, 1);
  if (SDMA_TID == 0)
    packedBad[0] = 0;
  SDMA_SYNC();
  for (int pass = 0; pass < 2; ++pass) {
    for (int s = sdma_rank_begin[rank]; s < sdma_rank_begin[rank + 1]; ++s) {
      const int *st = sdma_steps + 3 * s;
      if (st[0] != 0)
        continue;
      for (int i = (int)SDMA_TID; i < st[2]; i += (int)SDMA_NTID) {
        const long long *op =
            sdma_ops + (long long)(st[1] + i) * SDMA_OP_STRIDE;
        if (op[0] != 3 || op[8] != rank)
          continue;
        const bool packed = sdma_vops[op[11] * SDMA_VOP_STRIDE] >= 0;
        volatile long long *c =
            (volatile long long *)T->buf[op[8] * SDMA_BUFFERS + op[9]] + op[10];
        if (pass == 1) {
          if (packed)
            *c = 0;
          continue;
        }
        const long long n = *c;
        if (n < 0 ||
            (unsigned long long)n > (unsigned long long)op[4] * chunk / row) {
          sdma_report_count(T, (n < 0 ? 3 : 1) + (packed ? 4 : 0), op[1],
                            op[5], n);
          *c = 0;
          if (packed)
            packedBad[0] = 1;
        }
      }
    }
    SDMA_SYNC();
    if (!packedBad[0])
      break;
  }
}
#endif

static __device__ inline sdma_desc sdma_resolve(const SdmaTable *T,
                                                const long long *op,
                                                unsigned long long chunk) {
#if SDMA_COUNT_OPS
  if (op[0] == 3)
    return sdma_resolve_copyv(T, op, chunk);
#endif
  // Offsets and counts in chunks, or in op[11] bytes (count tables).
  const unsigned long long unit = op[11] ? (unsigned long long)op[11] : chunk;
  sdma_desc d;
  d.kind = (int)op[0];
  d.row = op;
  d.a = T->buf[op[1] * SDMA_BUFFERS + op[2]] + op[3] * unit;
  d.n = (unsigned long long)op[4] * unit;
  if (d.kind == 4) { // reduce: row[5..8] are its operator and sources
    d.b = d.c = d.a;
    return d;
  }
  d.b = T->buf[op[5] * SDMA_BUFFERS + op[6]] + op[7] * unit;
  d.c =
      d.kind == 1 ? T->buf[op[8] * SDMA_BUFFERS + op[9]] + op[10] * unit : d.b;
  return d;
}

// Ops [0, nops) of a phase (from the op table, or already resolved into
// `staged`), spread over all threads of the rank's blocks in 16-byte units;
// tails and unaligned slices go byte by byte. `u` is the thread's next
// unit and `base` the first unit of op 0, both carried across calls.
static __device__ void sdma_phase_ops(const SdmaTable *T, const long long *ops,
                                      const sdma_desc *staged, int nops,
                                      unsigned long long chunk,
                                      unsigned long long nthreads,
                                      unsigned long long &u,
                                      unsigned long long &base) {
  for (int i = 0; i < nops; ++i) {
    const sdma_desc d =
        staged ? staged[i] : sdma_resolve(T, ops + i * SDMA_OP_STRIDE, chunk);
    const int kind = (int)d.kind;
#if SDMA_REDUCE
    if (kind == 4) {
      sdma_reduce_ops(T, d, chunk, nthreads, u, base);
      continue;
    }
#endif
    char *a = d.a, *b = d.b, *c = d.c;
    const unsigned long long n = d.n;
    const unsigned long long units = (n + 15) / 16;
    const bool aligned = ((((unsigned long long)a) | ((unsigned long long)b) |
                           ((unsigned long long)c)) &
                          15ull) == 0;
    // Whole 16-byte units, four per thread per round: the four loads are
    // issued before any store, so each thread keeps four in flight.
    const unsigned long long full = aligned ? n / 16 : 0;
    while (u < base + full) {
      sdma_v16 va[4], vb[4];
      unsigned long long offs[4];
      int k = 0;
      for (; k < 4 && u + k * nthreads < base + full; ++k) {
        offs[k] = (u + k * nthreads - base) * 16;
        va[k] = *(const sdma_v16 *)(a + offs[k]);
        if (kind == 2)
          vb[k] = *(const sdma_v16 *)(b + offs[k]);
      }
      for (int i = 0; i < k; ++i) {
        if (kind == 2) {
          *(sdma_v16 *)(a + offs[i]) = vb[i];
          *(sdma_v16 *)(b + offs[i]) = va[i];
        } else {
          *(sdma_v16 *)(b + offs[i]) = va[i];
          if (kind == 1)
            *(sdma_v16 *)(c + offs[i]) = va[i];
        }
      }
      // Only the units this round took: the rest of the thread's share
      // continues into the next op's units.
      u += k * nthreads;
    }
    // The tail (and unaligned slices): byte by byte, 16 bytes per unit.
    for (; u < base + units; u += nthreads) {
      const unsigned long long off = (u - base) * 16;
      const unsigned long long end = off + 16 < n ? off + 16 : n;
      for (unsigned long long j = off; j < end; ++j) {
        char va = a[j];
        if (kind == 2) {
          char vb = b[j];
          a[j] = vb;
          b[j] = va;
        } else {
          b[j] = va;
          if (kind == 1)
            c[j] = va;
        }
      }
    }
    base += units;
  }
}

// One phase. With SDMA_STAGED_OPS, the block first resolves up to
// SDMA_STAGE_CAP ops at once into shared memory (one thread per op: the
// op-table and buffer-table loads of all ops in flight together), then
// copies from there; otherwise every thread resolves each op in turn.
static __device__ void sdma_phase(const SdmaTable *T, const long long *ops,
                                  int nops, unsigned long long chunk) {
  const unsigned long long nthreads = (unsigned long long)SDMA_NBID * SDMA_NTID;
  unsigned long long u = (unsigned long long)SDMA_BID * SDMA_NTID + SDMA_TID;
  unsigned long long base = 0;
#if SDMA_STAGED_OPS
  SDMA_BLOCK_SHARED(sdma_desc, staged, SDMA_STAGE_CAP);
  for (int w = 0; w < nops; w += SDMA_STAGE_CAP) {
    const int m = nops - w < SDMA_STAGE_CAP ? nops - w : SDMA_STAGE_CAP;
    for (int i = (int)SDMA_TID; i < m; i += (int)SDMA_NTID)
      staged[i] = sdma_resolve(T, ops + (w + i) * SDMA_OP_STRIDE, chunk);
    SDMA_SYNC();
    sdma_phase_ops(T, ops, staged, m, chunk, nthreads, u, base);
    SDMA_SYNC(); // the next window overwrites `staged`
  }
#else
  sdma_phase_ops(T, ops, nullptr, nops, chunk, nthreads, u, base);
#endif
}

#if SDMA_SPECIALISED
// The bytes of one unit of a copy, broadcast or swap, one at a time (a
// tail, or a slice not 16-byte aligned).
template <int KIND>
static __device__ SDMA_INLINE void sdma_move_bytes(char *a, char *b, char *c,
                                                   unsigned long long n) {
  for (unsigned long long j = 0; j < n; ++j) {
    const char va = a[j];
    if (KIND == 2) {
      a[j] = b[j];
      b[j] = va;
    } else {
      b[j] = va;
      if (KIND == 1)
        c[j] = va;
    }
  }
}

// A specialised kernel's run of `nops` ops of one phase that are all
// copies (KIND 0), broadcasts (1) or swaps (2) of `n` bytes, with offsets
// in `unit` bytes. The units of all the ops are spread over the rank's
// threads; a thread finds its op by one division, takes up to four units
// and issues all their loads before any store.
template <int KIND>
static __device__ SDMA_SEG_INLINE void
sdma_seg_move(const SdmaTable *T, const long long *ops,
              unsigned long long nops, unsigned long long unit,
              unsigned long long n, unsigned long long nthreads,
              unsigned long long &u, unsigned long long &base) {
  const unsigned long long upo = (n + 15) / 16, total = upo * nops;
  // The units [begin, end) of the op whose addresses a, b, c are resolved:
  // a thread's next units are mostly in the same op.
  unsigned long long begin = 1, end = 0;
  char *a = nullptr, *b = nullptr, *c = nullptr;
  bool aligned = false;
  while (u < base + total) {
    sdma_v16 va[4], vb[4];
    char *pa[4], *pb[4], *pc[4];
    bool vec[4];
    int k = 0;
    for (; k < 4 && u + k * nthreads < base + total; ++k) {
      const unsigned long long v = u + k * nthreads - base;
      if (v < begin || v >= end) {
        const unsigned long long i = nops == 1 ? 0 : sdma_div(v, upo);
        begin = i * upo;
        end = begin + upo;
        const long long *op = ops + i * SDMA_OP_STRIDE;
        a = T->buf[op[1] * SDMA_BUFFERS + op[2]] + op[3] * unit;
        b = T->buf[op[5] * SDMA_BUFFERS + op[6]] + op[7] * unit;
        c = KIND == 1 ? T->buf[op[8] * SDMA_BUFFERS + op[9]] + op[10] * unit
                      : b;
        aligned = ((((unsigned long long)a) | ((unsigned long long)b) |
                    ((unsigned long long)c)) &
                   15ull) == 0;
      }
      const unsigned long long off = (v - begin) * 16;
      pa[k] = a + off;
      pb[k] = b + off;
      pc[k] = c + off;
      vec[k] = aligned && off + 16 <= n;
      if (!vec[k]) {
        sdma_move_bytes<KIND>(pa[k], pb[k], pc[k], off + 16 <= n ? 16 : n - off);
        continue;
      }
      va[k] = *(const sdma_v16 *)pa[k];
      if (KIND == 2)
        vb[k] = *(const sdma_v16 *)pb[k];
    }
    for (int j = 0; j < k; ++j) {
      if (!vec[j])
        continue;
      if (KIND == 2) {
        *(sdma_v16 *)pa[j] = vb[j];
        *(sdma_v16 *)pb[j] = va[j];
      } else {
        *(sdma_v16 *)pb[j] = va[j];
        if (KIND == 1)
          *(sdma_v16 *)pc[j] = va[j];
      }
    }
    u += k * nthreads;
  }
  base += total;
}

// Emitted after this file: rank `rank`'s steps as code.
static __device__ bool sdma_run_rank(const SdmaTable *T, int rank,
                                     unsigned long long chunk,
                                     unsigned long long epoch);
#else
// The rank's steps from the step table; false when a wait failed.
static __device__ bool sdma_run_rank(const SdmaTable *T, int rank,
                                     unsigned long long chunk,
                                     unsigned long long epoch) {
  for (int s = sdma_rank_begin[rank]; s < sdma_rank_begin[rank + 1]; ++s) {
    const int *st = sdma_steps + 3 * s;
    // Waits and barriers: flags only grow, run n waits for n * (the
    // slot's signals per run) + k.
    const bool waits = st[0] == 3 || st[0] == 4;
    const unsigned long long value =
        waits ? epoch * sdma_per_epoch[rank * SDMA_FLAG_SLOTS + st[1]] +
                    (unsigned long long)st[2]
              : 0;
    switch (st[0]) {
    case 0:
      sdma_phase(T, sdma_ops + (long long)st[1] * SDMA_OP_STRIDE, st[2], chunk);
      break;
    case 1:
      sdma_rank_sync(T, rank);
      break;
    case 2:
      sdma_signal(T, st[1], st[2]);
      break;
    case 3:
      if (!sdma_wait(T, rank, st[1], value))
        return false;
      break;
    case 4:
      if (!sdma_barrier_step(T, rank, st[1], value))
        return false;
      break;
    }
  }
  return true;
}
#endif

// The table comes by value (kernel parameter space: no dependent global
// load before the first data access).
// SDMA_MIN_BLOCKS (CUDA/HIP compilers only): resident blocks per SM the
// compiler must allow (it caps registers to fit).
#ifdef SDMA_MIN_BLOCKS
#define SDMA_BOUNDS __launch_bounds__(SDMA_MAX_THREADS, SDMA_MIN_BLOCKS)
#else
#define SDMA_BOUNDS __launch_bounds__(SDMA_MAX_THREADS)
#endif
extern "C" __global__ void SDMA_BOUNDS
    sdma_ldst(const SDMA_GRID_CONSTANT SdmaTable table,
              unsigned long long chunk, unsigned long long epoch,
              int rankBase) {
  const SdmaTable *T = &table;
  const int rank = rankBase + (int)SDMA_BID_Y;
  unsigned long long *runs = T->epochs ? T->epochs + 2 * SDMA_BID_Y : nullptr;
  if (runs)
    epoch = *(volatile unsigned long long *)runs;
#if SDMA_COUNT_OPS
  if (SDMA_BID == 0) {
    if (T->countsIn[0])
      for (int i = (int)SDMA_TID; i < SDMA_RANKS; i += (int)SDMA_NTID)
        ((volatile long long *)T->countsIn[1])[i] =
            ((volatile const long long *)T->countsIn[0])[i];
    sdma_check_counts(T, rank, chunk);
  }
  if (!T->arrive[0])
    sdma_rank_sync(T, rank);
#endif
  if (T->arrive[0] && !sdma_job_barrier(T, rank, 0, epoch))
    return;
  if (!sdma_run_rank(T, rank, chunk, epoch))
    return;
  if (T->arrive[0]) {
    sdma_rank_sync(T, rank);
    if (!sdma_job_barrier(T, rank, 1, epoch))
      return;
  }
#if SDMA_COUNT_OPS
  // Every peer's count arrived before its phase-1 arrival (job barrier 1).
  if (SDMA_BID == 0 && T->countsOut[0])
    for (int i = (int)SDMA_TID; i < SDMA_RANKS; i += (int)SDMA_NTID)
      T->countsOut[1][i] = ((volatile const long long *)T->countsOut[0])[i];
#endif
  if (runs) {
    // Every block read the run number before it arrives here.
    SDMA_SYNC();
    if (SDMA_TID == 0 &&
        SDMA_ATOMIC_ADD_SYSTEM_U64(runs + 1, 1ull) == SDMA_NBID - 1) {
      runs[1] = 0;
      *(volatile unsigned long long *)runs = epoch + 1;
      SDMA_FENCE_SYSTEM();
    }
  }
}
