//===- LdstReduce.hip - sdma.reduce in the load/store kernel ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The second part of the generated kernel (after LdstKernel.hip): element
// types, the combine operators, and the reduce rows of both kernels (the
// table kernel's sdma_reduce_ops, the specialised kernel's
// sdma_seg_reduce). Compiled only where the schedule reduces.
//===----------------------------------------------------------------------===//

#if SDMA_REDUCE
#ifndef SDMA_REDUCE_MAX_DSTS
#define SDMA_REDUCE_MAX_DSTS 1
#endif
// sdma.reduce arithmetic in SDMA_REDUCE_TYPE (0 f32, 1 f16, 2 bf16, 3 i32,
// 4 i64, 5 ui32, 6 ui64, 7 f64, 8 i8, 9 ui8) with SDMA_REDUCE_OP (0 sum,
// 1 max, 2 min, 3 prod; 4 avg and 5 premulsum: a sum finished once,
// below). 16-bit floats
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
static __device__ inline double sdma_f64_of(unsigned long long u) {
  union {
    double d;
    unsigned long long u;
  } b;
  b.u = u;
  return b.d;
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
#if SDMA_REDUCE_OP == 0 || SDMA_REDUCE_OP == 4 || SDMA_REDUCE_OP == 5
  return a + b;
#elif SDMA_REDUCE_OP == 1
  return SDMA_KEY(a) > SDMA_KEY(b) ? a : b;
#elif SDMA_REDUCE_OP == 2
  return SDMA_KEY(a) < SDMA_KEY(b) ? a : b;
#elif SDMA_REDUCE_OP == 3
  return a * b;
#else
#error "SDMA_REDUCE_OP: 0 sum, 1 max, 2 min, 3 prod, 4 avg, 5 premulsum"
#endif
}

// What a reduce row stores: the combined value, divided by the rank count
// for avg (NCCL's ncclAvg: the sum, then one division; integers truncate
// toward zero as their type does). Only for schedules whose reduce rows
// each produce their slice's final value once (the runtime checks).
#if SDMA_REDUCE_OP == 4
#ifndef SDMA_AVG_DIVISOR
#error "SDMA_REDUCE_OP 4 (avg) needs SDMA_AVG_DIVISOR (the rank count)"
#endif
#define SDMA_FINISH(v)                                                         \
  ((sdma_acc)(SDMA_KEY(v) / (long long)(SDMA_AVG_DIVISOR)))
#else
#define SDMA_FINISH(v) (v)
#endif

// An operand of a reduce row as it is combined, SDMA_OPERAND(p, k): its
// value; for premulsum (NCCL's ncclRedOpCreatePreMulSum) times the scalar
// of the rank it came from, sc[k] (every operand is a rank's input:
// premulsum, as avg, runs only where each element is reduced once). Each
// rank passes its own scalar (SdmaTable::rowBytes) and writes it beside
// its call tag into every rank's tag words at the entry barrier
// (sdma_job_barrier), so a row's scalars are read where it stores: the
// 16-bit floats multiply in fp32, integers wrap.
#if SDMA_REDUCE_OP == 5
// The product rounded on its own, as the CPU device rounds it: never
// contracted with the sum's add into one fused multiply-add (NVCC and
// clang would, rounding once for both).
#if defined(__CUDA_ARCH__)
static __device__ inline float sdma_mul(float a, float b) {
  return __fmul_rn(a, b);
}
static __device__ inline double sdma_mul(double a, double b) {
  return __dmul_rn(a, b);
}
#else
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
static __device__ inline float sdma_mul(float a, float b) { return a * b; }
static __device__ inline double sdma_mul(double a, double b) { return a * b; }
#endif
static __device__ inline unsigned int sdma_mul(unsigned int a,
                                               unsigned int b) {
  return a * b;
}
static __device__ inline unsigned long long sdma_mul(unsigned long long a,
                                                     unsigned long long b) {
  return a * b;
}
// Rank q's scalar as rank `at`'s tag words hold it (a value of the element
// type in the low bits); 1 where the entry barrier wrote none (in-process
// runs, which the runtime never gives a premulsum).
static __device__ inline sdma_acc sdma_scalar(const SdmaTable *T, long long at,
                                              long long q) {
  if (!T->tags[0] || !T->arrive[0])
    return (sdma_acc)1;
  const unsigned long long bits =
      ((volatile const unsigned long long *)T->tags[at])[SDMA_RANKS + q];
#if SDMA_REDUCE_TYPE == 0
  return sdma_f32_of((unsigned int)bits);
#elif SDMA_REDUCE_TYPE == 1
  return sdma_f16_to_f32((unsigned short)bits);
#elif SDMA_REDUCE_TYPE == 2
  return sdma_bf16_to_f32((unsigned short)bits);
#elif SDMA_REDUCE_TYPE == 7
  return sdma_f64_of(bits);
#else
  return (sdma_acc)bits;
#endif
}
#define SDMA_OPERAND(p, k) sdma_mul((sdma_acc)SDMA_LOAD(p), sc[k])
#else
#define SDMA_OPERAND(p, k) SDMA_LOAD(p)
#endif

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
  // The initial value's scale: the first source's, or the destination's.
  const int ik = first ? 0 : nsrc;
#if SDMA_REDUCE_OP == 5
  sdma_acc sc[SDMA_REDUCE_MAX_SRCS + 1];
  for (int s = 0; s < nsrc; ++s)
    sc[s] = sdma_scalar(T, row[1], sdma_rsrc[3 * (row[7] + s)]);
  sc[nsrc] = sdma_scalar(T, row[1], row[1]);
#endif
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
      acc[i] = SDMA_OPERAND(x.b + i * SDMA_ESIZE, ik);
    for (int s = first; s < nsrc; ++s) {
      x.v = *(const sdma_v16 *)(src[s] + off);
      for (int i = 0; i < SDMA_LANES; ++i)
        acc[i] = sdma_combine(acc[i], SDMA_OPERAND(x.b + i * SDMA_ESIZE, s));
    }
    for (int i = 0; i < SDMA_LANES; ++i)
      SDMA_STORE(x.b + i * SDMA_ESIZE, SDMA_FINISH(acc[i]));
    for (int k = 0; k <= ndst; ++k)
      *(sdma_v16 *)(dsts[k] + off) = x.v;
  }
  // The tail (and unaligned slices): element by element.
  for (; u < base + units; u += nthreads) {
    const unsigned long long off = (u - base) * 16;
    const unsigned long long end = off + 16 < n ? off + 16 : n;
    for (unsigned long long j = off; j + SDMA_ESIZE <= end; j += SDMA_ESIZE) {
      sdma_acc acc = SDMA_OPERAND(init + j, ik);
      for (int s = first; s < nsrc; ++s)
        acc = sdma_combine(acc, SDMA_OPERAND(src[s] + j, s));
      acc = SDMA_FINISH(acc);
      for (int k = 0; k <= ndst; ++k)
        SDMA_STORE(dsts[k] + j, acc);
    }
  }
  base += units;
}

#if SDMA_SPECIALISED
// The reduce arithmetic of one aligned 16-byte unit at `off`: NSRC + 1 -
// FIRST loads all in flight, combined in order, the result stored to every
// destination. SRC(s) and DST(k) give the pointers (a register or a shared
// memory read).
#define SDMA_REDUCE_UNIT(SRC, DST, init)                                       \
  do {                                                                         \
    lanes x[NSRC + 1 - FIRST];                                                 \
    x[0].v = *(const sdma_v16 *)((init) + off);                                \
    for (int s = FIRST; s < NSRC; ++s)                                         \
      x[1 + s - FIRST].v = *(const sdma_v16 *)(SRC(s) + off);                  \
    sdma_acc acc[SDMA_LANES];                                                  \
    for (int l = 0; l < SDMA_LANES; ++l)                                       \
      acc[l] = SDMA_OPERAND(x[0].b + l * SDMA_ESIZE, FIRST ? 0 : NSRC);        \
    for (int s = 1; s < NSRC + 1 - FIRST; ++s)                                 \
      for (int l = 0; l < SDMA_LANES; ++l)                                     \
        acc[l] = sdma_combine(                                                 \
            acc[l], SDMA_OPERAND(x[s].b + l * SDMA_ESIZE, s - 1 + FIRST));     \
    for (int l = 0; l < SDMA_LANES; ++l)                                       \
      SDMA_STORE(x[0].b + l * SDMA_ESIZE, SDMA_FINISH(acc[l]));                \
    for (int k = 0; k <= NDST; ++k)                                            \
      *(sdma_v16 *)(DST(k) + off) = x[0].v;                                    \
  } while (0)

// The bytes of one unit (a tail, or a row not 16-byte aligned), element by
// element.
#define SDMA_REDUCE_ELEMENTS(SRC, DST, init)                                   \
  do {                                                                         \
    const unsigned long long stop = off + 16 < n ? off + 16 : n;               \
    for (unsigned long long j = off; j + SDMA_ESIZE <= stop;                   \
         j += SDMA_ESIZE) {                                                    \
      sdma_acc acc = SDMA_OPERAND((init) + j, FIRST ? 0 : NSRC);               \
      for (int s = FIRST; s < NSRC; ++s)                                       \
        acc = sdma_combine(acc, SDMA_OPERAND(SRC(s) + j, s));                  \
      acc = SDMA_FINISH(acc);                                                  \
      for (int k = 0; k <= NDST; ++k)                                          \
        SDMA_STORE(DST(k) + j, acc);                                           \
    }                                                                          \
  } while (0)

// The pointers of a segment's rows staged in shared memory (up to
// SDMA_SEG_PTR_CAP words; 0: never): each row is NSRC + NDST + 1 pointers
// (sources, then the destination and the extra destinations) and a word
// that is 1 where all of them are 16-byte aligned. Read back per unit
// (the unit's stores may alias shared memory for all the compiler knows,
// so it reloads them rather than keeping them live), they free the
// registers that held them: a two-shot all-reduce of 8 ranks held 16
// pointers, 32 registers, for the whole segment (90 registers, one
// 512-thread block per SM; 40 and three blocks with them staged, NVCC 13
// for sm_90). A volatile read instead made NVCC spill.
#ifndef SDMA_SEG_PTR_CAP
#define SDMA_SEG_PTR_CAP 256
#endif

// Pointer `s` of a reduce row with NSRC sources: the sources (s < NSRC),
// the destination (s == NSRC), then the extra destinations; the sources
// and extra destinations are consecutive entries of sdma_rsrc from row[7].
template <int NSRC>
static __device__ SDMA_INLINE char *sdma_row_ptr(const SdmaTable *T,
                                                 const long long *row, int s,
                                                 unsigned long long chunk) {
  if (s == NSRC)
    return T->buf[row[1] * SDMA_BUFFERS + row[2]] + row[3] * chunk;
  const long long *rs = sdma_rsrc + 3 * (row[7] + s - (s > NSRC));
  return T->buf[rs[0] * SDMA_BUFFERS + rs[1]] + rs[2] * chunk;
}

// A specialised kernel's run of `nrows` reduce rows of one phase that all
// add NSRC sources of `n` bytes into one destination and store the result
// to NDST more (FIRST: the first source is the initial value). A thread
// takes one 16-byte unit at a time and has all its loads in flight before
// it adds.
template <int NSRC, int NDST, int FIRST>
static __device__ SDMA_SEG_INLINE void
sdma_seg_reduce(const SdmaTable *T, const long long *rows,
                unsigned long long nrows, unsigned long long chunk,
                unsigned long long n, unsigned long long nthreads,
                unsigned long long &u, unsigned long long &base) {
  const unsigned long long upo = (n + 15) / 16, total = upo * nrows;
  union lanes {
    sdma_v16 v;
    unsigned char b[16];
  };
  // A row's pointers: sources, then the destination, then the extra
  // destinations (sdma_row_ptr).
  constexpr int NP = NSRC + NDST + 1, WORDS = NP + 1;
#if SDMA_REDUCE_OP == 5
  // The scales of the row a thread is in (SDMA_OPERAND): the sources',
  // then the destination's.
  sdma_acc sc[NSRC + 1];
#define SDMA_ROW_SCALES(row)                                                   \
  do {                                                                         \
    for (int s = 0; s < NSRC; ++s)                                             \
      sc[s] = sdma_scalar(T, (row)[1], sdma_rsrc[3 * ((row)[7] + s)]);         \
    sc[NSRC] = sdma_scalar(T, (row)[1], (row)[1]);                             \
  } while (0)
#else
#define SDMA_ROW_SCALES(row)                                                   \
  do {                                                                         \
  } while (0)
#endif
  if (SDMA_SEG_PTR_CAP > 0 && nrows * WORDS <= SDMA_SEG_PTR_CAP) {
    SDMA_BLOCK_SHARED(unsigned long long, words,
                      SDMA_SEG_PTR_CAP > 0 ? SDMA_SEG_PTR_CAP : 1);
    SDMA_SYNC(); // the scratch's last users are done with it
    for (unsigned long long j = SDMA_TID; j < nrows; j += SDMA_NTID) {
      const long long *row = rows + j * SDMA_OP_STRIDE;
      unsigned long long bits = 0;
      for (int s = 0; s < NP; ++s) {
        const char *p = sdma_row_ptr<NSRC>(T, row, s, chunk);
        words[j * WORDS + s] = (unsigned long long)p;
        bits |= (unsigned long long)p;
      }
      words[j * WORDS + NP] = (bits & 15ull) == 0;
    }
    SDMA_SYNC();
    const unsigned long long *P = words;
    unsigned long long begin = 1, end = 0;
    for (; u < base + total; u += nthreads) {
      const unsigned long long v = u - base;
      if (v < begin || v >= end) {
        const unsigned long long i = nrows == 1 ? 0 : sdma_div(v, upo);
        begin = i * upo;
        end = begin + upo;
        P = words + i * WORDS;
        SDMA_ROW_SCALES(rows + i * SDMA_OP_STRIDE);
      }
      const unsigned long long off = (v - begin) * 16;
#define SDMA_SRC_SHARED(s) ((const char *)P[s])
#define SDMA_DST_SHARED(k) ((char *)P[NSRC + (k)])
      const char *init = FIRST ? SDMA_SRC_SHARED(0) : SDMA_DST_SHARED(0);
      if (P[NP] && off + 16 <= n)
        SDMA_REDUCE_UNIT(SDMA_SRC_SHARED, SDMA_DST_SHARED, init);
      else
        SDMA_REDUCE_ELEMENTS(SDMA_SRC_SHARED, SDMA_DST_SHARED, init);
#undef SDMA_SRC_SHARED
#undef SDMA_DST_SHARED
    }
    base += total;
    return;
  }
  // Too many rows to stage: the pointers of the row a thread is in stay in
  // registers, resolved once per row it enters.
  const char *src[NSRC];
  char *dst[NDST + 1];
  bool aligned = false;
  unsigned long long begin = 1, end = 0;
  for (; u < base + total; u += nthreads) {
    const unsigned long long v = u - base;
    if (v < begin || v >= end) {
      const unsigned long long i = nrows == 1 ? 0 : sdma_div(v, upo);
      begin = i * upo;
      end = begin + upo;
      const long long *row = rows + i * SDMA_OP_STRIDE;
      SDMA_ROW_SCALES(row);
      unsigned long long bits = 0;
      for (int s = 0; s < NP; ++s) {
        char *p = sdma_row_ptr<NSRC>(T, row, s, chunk);
        if (s < NSRC)
          src[s] = p;
        else
          dst[s - NSRC] = p;
        bits |= (unsigned long long)p;
      }
      aligned = (bits & 15ull) == 0;
    }
    const unsigned long long off = (v - begin) * 16;
#define SDMA_SRC_REG(s) (src[s])
#define SDMA_DST_REG(k) (dst[k])
    const char *init = FIRST ? src[0] : dst[0];
    if (aligned && off + 16 <= n)
      SDMA_REDUCE_UNIT(SDMA_SRC_REG, SDMA_DST_REG, init);
    else
      SDMA_REDUCE_ELEMENTS(SDMA_SRC_REG, SDMA_DST_REG, init);
#undef SDMA_SRC_REG
#undef SDMA_DST_REG
  }
  base += total;
}
#endif
#endif
