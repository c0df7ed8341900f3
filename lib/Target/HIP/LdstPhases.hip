//===- LdstPhases.hip - phases, steps and the kernel entry ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The last part of the generated kernel (after LdstKernel.hip,
// LdstReduce.hip, LdstCounts.hip and LdstLowLatency.hip): the table
// kernel's phases and step walk, the specialised kernel's copy segments,
// and `sdma_ldst`.
//===----------------------------------------------------------------------===//

static __device__ inline sdma_desc sdma_resolve(const SdmaTable *T,
                                                const long long *op,
                                                unsigned long long chunk,
                                                const long long *cache) {
#if SDMA_COUNT_OPS
  if (op[0] == 3)
    return sdma_resolve_copyv(T, op, chunk, cache);
#else
  (void)cache;
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
// A thread issues the loads of up to four whole units before storing any
// (four loads in flight), and the four may belong to different ops: where
// a phase has many ops shorter than a round of the rank's threads (an MoE
// dispatch's 256 expert segments of a few rows each), a batch per op would
// leave each thread one load in flight, one after another. The batch's
// addresses shift through fixed slots (every index a constant once
// unrolled, so they stay in registers); the loads are issued only when the
// batch is full or at the end, never moved while in flight.
struct sdma_batch {
  char *src[4], *s0[4], *s1[4]; // load src (swap: and s0); store to s0, and
                                // to s1 (broadcast: va; swap: s0's value)
  int kind[4];
  int k;
};
static __device__ SDMA_INLINE void sdma_batch_run(sdma_batch &p) {
  sdma_v16 va[4], vb[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < p.k) {
      va[j] = *(const sdma_v16 *)p.src[j];
      if (p.kind[j] == 2)
        vb[j] = *(const sdma_v16 *)p.s0[j];
    }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < p.k) {
      *(sdma_v16 *)p.s0[j] = va[j];
      if (p.kind[j] == 1)
        *(sdma_v16 *)p.s1[j] = va[j];
      else if (p.kind[j] == 2)
        *(sdma_v16 *)p.s1[j] = vb[j];
    }
  p.k = 0;
}
static __device__ SDMA_INLINE void sdma_batch_add(sdma_batch &p, char *src,
                                                  char *s0, char *s1,
                                                  int kind) {
#pragma unroll
  for (int j = 3; j > 0; --j) {
    p.src[j] = p.src[j - 1];
    p.s0[j] = p.s0[j - 1];
    p.s1[j] = p.s1[j - 1];
    p.kind[j] = p.kind[j - 1];
  }
  p.src[0] = src;
  p.s0[0] = s0;
  p.s1[0] = s1;
  p.kind[0] = kind;
  if (++p.k == 4)
    sdma_batch_run(p);
}

static __device__ void sdma_phase_ops(const SdmaTable *T, const long long *ops,
                                      const sdma_desc *staged,
                                      const long long *cache, int nops,
                                      unsigned long long chunk,
                                      unsigned long long nthreads,
                                      unsigned long long &u,
                                      unsigned long long &base) {
  sdma_batch p;
  p.k = 0;
  for (int i = 0; i < nops; ++i) {
    const sdma_desc d =
        staged ? staged[i]
               : sdma_resolve(T, ops + i * SDMA_OP_STRIDE, chunk, cache);
    const int kind = (int)d.kind;
#if SDMA_REDUCE
    if (kind == 4) {
      sdma_batch_run(p);
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
    // Whole 16-byte units into the batch.
    const unsigned long long full = aligned ? n / 16 : 0;
    for (; u < base + full; u += nthreads) {
      const unsigned long long off = (u - base) * 16;
      sdma_batch_add(p, a + off, b + off, (kind == 2 ? a : c) + off, kind);
    }
    // The tail (and unaligned slices): 16 bytes per unit, in 8-byte words
    // where a copy's both sides allow (a count exchange's 8-byte puts: one
    // load instead of eight dependent byte loads), else byte by byte.
    for (; u < base + units; u += nthreads) {
      const unsigned long long off = (u - base) * 16;
      const unsigned long long end = off + 16 < n ? off + 16 : n;
      unsigned long long j = off;
      if (kind == 0 &&
          ((((unsigned long long)(a + j)) | ((unsigned long long)(b + j))) &
           7ull) == 0)
        for (; j + 8 <= end; j += 8)
          *(unsigned long long *)(b + j) = *(const unsigned long long *)(a + j);
      for (; j < end; ++j) {
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
  sdma_batch_run(p);
}

// One phase (step `step` of the step table). Where the emitter listed the
// count tables its sdma.copyv ops take offsets from (sdma_vtabs, rows
// [sdma_vtab_begin[step], sdma_vtab_begin[step + 1])), each block first
// scans them into shared memory (sdma_scan). With SDMA_STAGED_OPS, the
// block then resolves up to SDMA_STAGE_CAP ops at once into shared memory
// (one thread per op: the op-table and buffer-table loads of all ops in
// flight together), then copies from there; otherwise every thread
// resolves each op in turn. One shared array holds both (the CPU device
// gives a block one scratch area, whatever the declarations).
#if SDMA_STAGED_OPS
#define SDMA_STAGE_WORDS                                                       \
  (SDMA_STAGE_CAP * ((sizeof(sdma_desc) + 7) / 8))
#else
#define SDMA_STAGE_WORDS 0
#endif
// SDMA_WARP_SPAN=1 (staged phases only): a window of plain copies (kind 0,
// as every sdma.copyv and count copy is) is split into tiles of 32 units,
// and each warp of the rank copies one contiguous run of tiles, a lane one
// unit of each tile (coalesced), four tiles' loads in flight. A thread then
// looks at the few ops its run overlaps (a binary search, then a step per
// op boundary) instead of walking every op of the window as
// sdma_phase_ops does (an MoE dispatch: 256 ops per phase, each a few
// rows, shorter than a round of the rank's threads, every thread walking
// all 256). The units before each op come from a scan of the staged ops
// in shared memory (log2 of the window's ops rounds). A window with
// another kind, or threads per block not a multiple of 32, takes
// sdma_phase_ops.
#ifndef SDMA_WARP_SPAN
#define SDMA_WARP_SPAN 1
#endif
// The most units (16 bytes) per thread of the rank a window may have for
// its copies to go in warp runs.
#ifndef SDMA_SPAN_UNITS
#define SDMA_SPAN_UNITS 512
#endif
// Lanes of a run's tile (a warp; the CPU tests take fewer).
#ifndef SDMA_SPAN_LANES
#define SDMA_SPAN_LANES 32
#endif
#if SDMA_STAGED_OPS && SDMA_WARP_SPAN
#define SDMA_SPAN_WORDS (4 * (SDMA_STAGE_CAP + 1))
// The inclusive sums of the staged ops' units in the returned array, and
// whether all of them are kind 0 (every thread calls it; ends synced).
static __device__ const long long *sdma_span_scan(const sdma_desc *staged,
                                                  int m, long long *span,
                                                  bool &plain) {
  long long *src = span, *dst = span + (SDMA_STAGE_CAP + 1);
  long long *bs = span + 2 * (SDMA_STAGE_CAP + 1),
            *bd = span + 3 * (SDMA_STAGE_CAP + 1);
  for (int i = (int)SDMA_TID; i < m; i += (int)SDMA_NTID) {
    src[i] = (long long)((staged[i].n + 15) / 16);
    bs[i] = staged[i].kind != 0;
  }
  SDMA_SYNC();
  for (int off = 1; off < m; off *= 2) {
    for (int i = (int)SDMA_TID; i < m; i += (int)SDMA_NTID) {
      dst[i] = src[i] + (i >= off ? src[i - off] : 0);
      bd[i] = bs[i] | (i >= off ? bs[i - off] : 0);
    }
    SDMA_SYNC();
    long long *t = src;
    src = dst;
    dst = t;
    t = bs;
    bs = bd;
    bd = t;
  }
  plain = m == 0 || bs[m - 1] == 0;
  return src;
}

// The window's units, warp by warp (see SDMA_WARP_SPAN); `inc` from
// sdma_span_scan.
static __device__ void sdma_span_copy(const sdma_desc *staged,
                                      const long long *inc, int m,
                                      unsigned long long nthreads) {
  const unsigned long long total = m ? (unsigned long long)inc[m - 1] : 0;
  const unsigned long long L = SDMA_SPAN_LANES;
  const unsigned long long warps = nthreads / L;
  const unsigned long long g =
      (unsigned long long)SDMA_BID * SDMA_NTID + SDMA_TID;
  const unsigned long long lane = g % L, tiles = (total + L - 1) / L;
  const unsigned long long t0 = g / L * tiles / warps,
                           t1 = (g / L + 1) * tiles / warps;
  if (t0 >= t1)
    return;
  // The op holding unit t0 * L: the first with inc > that.
  int lo = 0, hi = m;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if ((unsigned long long)inc[mid] > t0 * L)
      hi = mid;
    else
      lo = mid + 1;
  }
  int i = lo;
  unsigned long long first = i ? (unsigned long long)inc[i - 1] : 0,
                     end = (unsigned long long)inc[i];
  char *a = staged[i].a, *b = staged[i].b;
  unsigned long long n = staged[i].n;
  bool aligned = ((((unsigned long long)a) | ((unsigned long long)b)) & 15ull) == 0;
  sdma_batch p;
  p.k = 0;
  for (unsigned long long t = t0; t < t1; ++t) {
    const unsigned long long x = t * L + lane;
    if (x >= total)
      break;
    if (x >= end) {
      while ((unsigned long long)inc[i] <= x)
        ++i;
      first = i ? (unsigned long long)inc[i - 1] : 0;
      end = (unsigned long long)inc[i];
      a = staged[i].a;
      b = staged[i].b;
      n = staged[i].n;
      aligned = ((((unsigned long long)a) | ((unsigned long long)b)) & 15ull) == 0;
    }
    const unsigned long long off = (x - first) * 16;
    if (aligned && off + 16 <= n) {
      sdma_batch_add(p, a + off, b + off, b + off, 0);
      continue;
    }
    // A tail or an unaligned slice: 8-byte words where both sides allow.
    const unsigned long long stop = off + 16 < n ? off + 16 : n;
    unsigned long long j = off;
    if (((((unsigned long long)(a + j)) | ((unsigned long long)(b + j))) & 7ull) == 0)
      for (; j + 8 <= stop; j += 8)
        *(unsigned long long *)(b + j) = *(const unsigned long long *)(a + j);
    for (; j < stop; ++j)
      b[j] = a[j];
  }
  sdma_batch_run(p);
}
#else
#define SDMA_SPAN_WORDS 0
#endif
#ifndef SDMA_PREFIX_CACHE
#define SDMA_PREFIX_CACHE 0
#endif
static __device__ void sdma_phase(const SdmaTable *T, const long long *ops,
                                  int nops, unsigned long long chunk,
                                  int step) {
  const unsigned long long nthreads = (unsigned long long)SDMA_NBID * SDMA_NTID;
  unsigned long long u = (unsigned long long)SDMA_BID * SDMA_NTID + SDMA_TID;
  unsigned long long base = 0;
  (void)step;
#if SDMA_STAGED_OPS || SDMA_PREFIX_CACHE
  SDMA_BLOCK_SHARED(long long, words,
                    SDMA_PREFIX_CACHE + SDMA_STAGE_WORDS + SDMA_SPAN_WORDS);
#endif
  const long long *cache = nullptr;
#if SDMA_PREFIX_CACHE
  const int ntabs = sdma_vtab_begin[step + 1] - sdma_vtab_begin[step];
  if (ntabs > 0) {
    const long long *rows = sdma_vtabs + sdma_vtab_begin[step] * SDMA_SCAN_ROW;
    sdma_scan_load(T, rows, ntabs, words);
    sdma_scan(rows, ntabs, words);
    cache = words;
  }
#endif
#if SDMA_STAGED_OPS
  sdma_desc *staged = (sdma_desc *)(words + SDMA_PREFIX_CACHE);
  for (int w = 0; w < nops; w += SDMA_STAGE_CAP) {
    const int m = nops - w < SDMA_STAGE_CAP ? nops - w : SDMA_STAGE_CAP;
    for (int i = (int)SDMA_TID; i < m; i += (int)SDMA_NTID)
      staged[i] =
          sdma_resolve(T, ops + (w + i) * SDMA_OP_STRIDE, chunk, cache);
    SDMA_SYNC();
#if SDMA_WARP_SPAN
    // Warp runs for a window of plain copies small enough for the rank's
    // threads (at most SDMA_SPAN_UNITS units each): a window of large
    // segments keeps every thread striding over every op, which measured
    // faster for them (one H100: an MoE combine at 4096 tokens took 1.4x
    // in warp runs).
    bool plain = false;
    const long long *inc = sdma_span_scan(
        staged, m, words + SDMA_PREFIX_CACHE + SDMA_STAGE_WORDS, plain);
    const unsigned long long total = m ? (unsigned long long)inc[m - 1] : 0;
    if (plain && SDMA_NTID % SDMA_SPAN_LANES == 0 &&
        total <= SDMA_SPAN_UNITS * nthreads) {
      sdma_span_copy(staged, inc, m, nthreads);
      // Where sdma_phase_ops would have left this thread's next unit.
      base += total;
      if (u < base)
        u += (base - u + nthreads - 1) / nthreads * nthreads;
    } else
#endif
      sdma_phase_ops(T, ops, staged, cache, m, chunk, nthreads, u, base);
    SDMA_SYNC(); // the next window overwrites `staged`
  }
#else
  sdma_phase_ops(T, ops, nullptr, cache, nops, chunk, nthreads, u, base);
  if (cache)
    SDMA_SYNC(); // the next phase's scan overwrites `words`
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
// in `unit` bytes. With SDMA_SEG_SPREAD threads per op or more, the ops
// are spread over the rank's threads (sdma_seg_spread, below); otherwise
// the units of all the ops are: a thread finds its op by one division,
// takes SDMA_SEG_ROUND units and issues all their loads before any store.
// Ops that all read one
// source (SHARED: an all-gather's copies of a rank's input, as the emitter
// found) and are longer than a tile (SDMA_SEG_TILE units, 0: never) are
// interleaved tile by tile: tile t is tile t / nops of op t % nops, so the
// threads sweep the same stretch of every op at once and read the source
// from L2 once instead of from DRAM once per op (all-gather at 4 MiB on an
// H200: 215 -> 35 MB read, 128 -> 99 us); within a tile consecutive
// threads take consecutive units. The last tile of each op is cut at its
// end (the padding units do nothing).
#ifndef SDMA_SEG_TILE
#define SDMA_SEG_TILE 512
#endif
// Units a thread takes per round of sdma_seg_move (all their loads issued
// before any store). One: 40 registers and three 512-thread blocks per SM
// instead of 64 and two (NVCC 13, sm_90); on one H200, 8 ranks, all-gather
// 16 MiB 396 -> 335 us (the fused kernel 363), 4 MiB 97 -> 91 (88)
// (bench/results/round-h200.csv).
#ifndef SDMA_SEG_ROUND
#define SDMA_SEG_ROUND 1
#endif
// OPS resolves op i of the segment to its addresses: a, b and (KIND 1) c,
// with offsets in `unit` bytes. sdma_table_ops reads the op's row from
// sdma_ops (constant memory); where every field of the segment's rows is
// affine in i, the emitter passes a lambda instead whose coefficients are
// constants (Specialise.cpp): no dependent table load before the first
// data load.
template <int KIND> struct sdma_table_ops {
  const long long *rows;
  __device__ SDMA_INLINE void operator()(const SdmaTable *T,
                                         unsigned long long i,
                                         unsigned long long unit, char *&a,
                                         char *&b, char *&c) const {
    const long long *op = rows + i * SDMA_OP_STRIDE;
    a = T->buf[op[1] * SDMA_BUFFERS + op[2]] + op[3] * unit;
    b = T->buf[op[5] * SDMA_BUFFERS + op[6]] + op[7] * unit;
    c = KIND == 1 ? T->buf[op[8] * SDMA_BUFFERS + op[9]] + op[10] * unit : b;
  }
};
// Threads per op from which an untiled segment spreads its ops, not its
// units, over the rank's threads (sdma_seg_spread; 0: never).
#ifndef SDMA_SEG_SPREAD
#define SDMA_SEG_SPREAD 32
#endif
// sdma_seg_move's path for a segment with at least SDMA_SEG_SPREAD threads
// per op: op i takes the rank's threads [i * N / nops, (i + 1) * N / nops)
// (N = nthreads; thread r = u - base, the thread's place in this segment's
// order), and a thread strides through its op alone: three divisions and
// one address resolution per segment, then a plain copy loop, the shape of
// a hand-written copy kernel. Spreading units instead made every unit of a
// thread land in another op when a thread had several (the op's units are
// a multiple of the stride apart), each paying a division and an address
// resolution before its load: 4.75x the fused kernel's instructions at the
// same grid (ncu, 4 ranks, all-to-all 1 MiB; bench/results/spread-h200.md).
// Returns with u where the unit-spread path would have left it.
template <int KIND, class OPS>
static __device__ SDMA_INLINE void
sdma_seg_spread(const SdmaTable *T, OPS ops, unsigned long long nops,
                unsigned long long unit, unsigned long long n,
                unsigned long long upo, unsigned long long nthreads,
                unsigned long long &u, unsigned long long base) {
  const unsigned long long r = u - base; // < nthreads
  const unsigned long long i = sdma_div((r + 1) * nops - 1, nthreads);
  const unsigned long long first = sdma_div(i * nthreads, nops);
  const unsigned long long count =
      sdma_div((i + 1) * nthreads, nops) - first;
  char *a, *b, *c;
  ops(T, i, unit, a, b, c);
  const bool aligned = ((((unsigned long long)a) | ((unsigned long long)b) |
                         ((unsigned long long)c)) &
                        15ull) == 0;
  for (unsigned long long w = r - first; w < upo;
       w += SDMA_SEG_ROUND * count) {
    sdma_v16 va[SDMA_SEG_ROUND], vb[SDMA_SEG_ROUND];
    int k = 0;
    for (; k < SDMA_SEG_ROUND && w + k * count < upo; ++k) {
      const unsigned long long off = (w + k * count) * 16;
      if (!aligned || off + 16 > n) {
        sdma_move_bytes<KIND>(a + off, b + off, c + off,
                              off + 16 <= n ? 16 : n - off);
        continue;
      }
      va[k] = *(const sdma_v16 *)(a + off);
      if (KIND == 2)
        vb[k] = *(const sdma_v16 *)(b + off);
    }
    for (int j = 0; j < k; ++j) {
      const unsigned long long off = (w + j * count) * 16;
      if (!aligned || off + 16 > n)
        continue;
      if (KIND == 2) {
        *(sdma_v16 *)(a + off) = vb[j];
        *(sdma_v16 *)(b + off) = va[j];
      } else {
        *(sdma_v16 *)(b + off) = va[j];
        if (KIND == 1)
          *(sdma_v16 *)(c + off) = va[j];
      }
    }
  }
  const unsigned long long end = base + upo * nops;
  if (u < end)
    u += sdma_div(end - u + nthreads - 1, nthreads) * nthreads;
}
template <int KIND, bool SHARED = false, class OPS>
static __device__ SDMA_SEG_INLINE void
sdma_seg_move(const SdmaTable *T, OPS ops,
              unsigned long long nops, unsigned long long unit,
              unsigned long long n, unsigned long long nthreads,
              unsigned long long &u, unsigned long long &base) {
  const unsigned long long upo = (n + 15) / 16;
  const bool tiled =
      SHARED && SDMA_SEG_TILE > 0 && nops > 1 && upo > SDMA_SEG_TILE;
  const unsigned long long tile = SDMA_SEG_TILE > 0 ? SDMA_SEG_TILE : 1;
  const unsigned long long total =
      tiled ? (upo + tile - 1) / tile * tile * nops : upo * nops;
  if (!tiled && SDMA_SEG_SPREAD > 0 && nops > 1 &&
      nthreads >= (unsigned long long)SDMA_SEG_SPREAD * nops) {
    sdma_seg_spread<KIND>(T, ops, nops, unit, n, upo, nthreads, u, base);
    base += total;
    return;
  }
  // The op whose addresses a, b, c are resolved, and (untiled) its units
  // [begin, end): a thread's next units are mostly in the same op.
  unsigned long long begin = 1, end = 0, current = ~0ull;
  char *a = nullptr, *b = nullptr, *c = nullptr;
  bool aligned = false;
  while (u < base + total) {
    sdma_v16 va[SDMA_SEG_ROUND], vb[SDMA_SEG_ROUND];
    char *pa[SDMA_SEG_ROUND], *pb[SDMA_SEG_ROUND], *pc[SDMA_SEG_ROUND];
    bool vec[SDMA_SEG_ROUND];
    int k = 0;
    for (; k < SDMA_SEG_ROUND && u + k * nthreads < base + total; ++k) {
      const unsigned long long v = u + k * nthreads - base;
      unsigned long long i, w; // op, unit within the op
      if (tiled) {
        const unsigned long long t = v / tile, round = sdma_div(t, nops);
        i = t - round * nops;
        w = round * tile + (v - t * tile);
        if (w >= upo) { // padding of the op's last tile
          vec[k] = false;
          continue;
        }
      } else if (v >= begin && v < end) {
        i = current;
        w = v - begin;
      } else {
        i = nops == 1 ? 0 : sdma_div(v, upo);
        begin = i * upo;
        end = begin + upo;
        w = v - begin;
      }
      if (i != current) {
        current = i;
        ops(T, i, unit, a, b, c);
        aligned = ((((unsigned long long)a) | ((unsigned long long)b) |
                    ((unsigned long long)c)) &
                   15ull) == 0;
      }
      const unsigned long long off = w * 16;
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
      sdma_phase(T, sdma_ops + (long long)st[1] * SDMA_OP_STRIDE, st[2], chunk,
                 s);
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

// The call's end for a rank's block: each counts itself in runs[1] after a job
// fence (SDMA_FENCE_JOB: its writes published first). The last to count fences
// again (every block's writes acquired), so it alone closes the call for the
// rank: the exit job barrier's arrival (published by that fence: no grid-wide
// rank sync before it, no third fence, and the other blocks end at once), the
// counts handed back, the next run number (the rank's next launch reads it
// after this kernel ends: no fence). A rank of one block (small calls) counts
// nothing: one fence publishes its writes. Every block read the run number
// before it counts itself. A block whose wait failed returns before counting:
// its rank never arrives at the exit, its peers time out there (as before),
// and the runtime refuses further calls on the failed communicator, so the
// count left part-done is never read. System-scope fences are what a call's
// fixed cost is made of (about 0.6 us each on an H100:
// bench/results/protocol-h100.md).
static __device__ SDMA_INLINE void
sdma_call_exit(const SdmaTable *T, int rank, unsigned long long *runs,
               unsigned long long epoch) {
  SDMA_BLOCK_SHARED(unsigned int, last, 1);
  SDMA_SYNC();
  if (SDMA_TID == 0) {
    SDMA_FENCE_JOB();
    last[0] = SDMA_NBID == 1 ||
              SDMA_ATOMIC_ADD_SYSTEM_U64(runs + 1, 1ull) == SDMA_NBID - 1;
    if (last[0] && SDMA_NBID > 1)
      SDMA_FENCE_JOB();
  }
  SDMA_SYNC();
  // Read before anything else uses the block's shared memory (the CPU
  // emulator gives a block one scratch area, which sdma_counts_out reuses).
  const bool isLast = last[0];
  if (!isLast)
    return;
  if (T->arrive[0] && !sdma_job_barrier(T, rank, 1, epoch, true, true))
    return;
#if SDMA_COUNT_OPS
  // Every peer's counts were written before its exit arrival.
  if (T->countsOut[0])
    sdma_counts_out(T);
#endif
  if (SDMA_TID == 0) {
    runs[1] = 0;
    *(volatile unsigned long long *)runs = epoch + 1;
  }
}

// SDMA_MIN_BLOCKS (CUDA/HIP compilers only): resident blocks per SM the
// compiler must allow (it caps registers to fit).
#ifdef SDMA_MIN_BLOCKS
#define SDMA_BOUNDS __launch_bounds__(SDMA_MAX_THREADS, SDMA_MIN_BLOCKS)
#else
#define SDMA_BOUNDS __launch_bounds__(SDMA_MAX_THREADS)
#endif

// One rank's run of the kernel (a launched rank: the entries below): `runs`
// its two run counters (SdmaTable::epochs; null: `epoch` numbers the run).
static __device__ SDMA_INLINE void sdma_ldst_rank(const SdmaTable *T, int rank,
                                                  unsigned long long *runs,
                                                  unsigned long long chunk,
                                                  unsigned long long epoch) {
#ifdef SDMA_CHUNK_BYTES
  // A size class (the runtime's build for one small chunk size,
  // runtime/lib/cuda/CudaSizeClasses.h): the chunk compiled in, so that every
  // offset and count is a constant. Launched with another chunk it stops
  // (a GPU error) rather than move other bytes.
  if (chunk != SDMA_CHUNK_BYTES)
    SDMA_TRAP();
  chunk = SDMA_CHUNK_BYTES;
#endif
  if (runs)
    epoch = *(volatile unsigned long long *)runs;
  // A communicator's launch (job barriers) numbers its runs on the device.
  if (T->arrive[0] && !runs)
    SDMA_TRAP();
#if SDMA_COUNT_OPS
  if (SDMA_BID == 0) {
    if (T->countsIn[0])
      for (int i = (int)SDMA_TID; i < SDMA_COUNTS_IN; i += (int)SDMA_NTID)
        ((volatile long long *)T->countsIn[1])[i] =
            ((volatile const long long *)T->countsIn[0])[i];
    sdma_check_counts(T, rank, chunk);
  }
  if (!T->arrive[0])
    sdma_rank_sync(T, rank);
#ifdef SDMA_PEER_COUNTS_SLOT
  // Forwarded offsets and pulls read the peers' count tables, which their
  // block 0 just copied in and checked: where no job barrier orders that
  // (one launch runs every rank), a barrier of its own.
  if (!T->arrive[0] && !sdma_barrier_step(T, rank, SDMA_PEER_COUNTS_SLOT,
                                          (epoch + 1) * SDMA_RANKS))
    return;
#endif
#endif
  if (T->arrive[0] &&
      !sdma_job_barrier(T, rank, 0, epoch, SDMA_BID == 0, false))
    return;
  if (!sdma_run_rank(T, rank, chunk, epoch))
    return;
  if (!runs) {
#if SDMA_COUNT_OPS
    if (SDMA_BID == 0 && T->countsOut[0])
      sdma_counts_out(T);
#endif
    return;
  }
  sdma_call_exit(T, rank, runs, epoch);
}

// The table comes by value (kernel parameter space: no dependent global
// load before the first data access). Ranks rankBase + blockIdx.y: one
// table for all of them (in-process: SdmaTable::epochs, where set, holds
// two counters per launched rank).
extern "C" __global__ void SDMA_BOUNDS
    sdma_ldst(const SDMA_GRID_CONSTANT SdmaTable table,
              unsigned long long chunk, unsigned long long epoch,
              int rankBase) {
  sdma_ldst_rank(&table, rankBase + (int)SDMA_BID_Y,
                 table.epochs ? table.epochs + 2 * SDMA_BID_Y : nullptr, chunk,
                 epoch);
}

#if SDMA_LL
// A communicator's small call of a low-latency program (the launch set
// SdmaTable::ll): no job barrier (LdstLowLatency.hip). An entry of its own,
// so that its registers do not count against sdma_ldst's bound, and with no
// bound of blocks per SM (a small call has few blocks; the runtime sizes
// its grid by this entry's own occupancy).
extern "C" __global__ void __launch_bounds__(SDMA_MAX_THREADS)
    sdma_ldst_ll(const SDMA_GRID_CONSTANT SdmaTable table,
                 unsigned long long chunk, unsigned long long epoch,
                 int rankBase) {
  (void)epoch;
  if (!table.ll[0])
    SDMA_TRAP();
  sdma_ll_call(&table, rankBase + (int)SDMA_BID_Y, chunk);
}
#endif

// SDMA_GROUP=G (the runtime's build where ranks share a GPU): one launch
// runs up to G ranks of a job, each with its own communicator's table (its
// error record, run counters, counts and tag): the calls of a group over
// several communicators of one process (sdmaGroupEnd), launched once for
// the ranks of one GPU instead of once per rank. Block (x, y) runs rank
// rank[y] with t[y]; a launch passes `count` tables (the rest unused).
#ifdef SDMA_GROUP
struct SdmaGroupTables {
  SdmaTable t[SDMA_GROUP];
  int rank[SDMA_GROUP];
};
extern "C" __global__ void SDMA_BOUNDS
    sdma_ldst_group(const SDMA_GRID_CONSTANT SdmaGroupTables group,
                    unsigned long long chunk, unsigned long long epoch) {
  const SdmaTable *T = &group.t[SDMA_BID_Y];
  sdma_ldst_rank(T, group.rank[SDMA_BID_Y], T->epochs, chunk, epoch);
}
#if SDMA_LL
extern "C" __global__ void __launch_bounds__(SDMA_MAX_THREADS)
    sdma_ldst_ll_group(const SDMA_GRID_CONSTANT SdmaGroupTables group,
                       unsigned long long chunk, unsigned long long epoch) {
  (void)epoch;
  const SdmaTable *T = &group.t[SDMA_BID_Y];
  if (!T->ll[0])
    SDMA_TRAP();
  sdma_ll_call(T, group.rank[SDMA_BID_Y], chunk);
}
#endif
#endif
