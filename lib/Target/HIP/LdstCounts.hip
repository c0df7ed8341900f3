//===- LdstCounts.hip - sdma.copyv's run-time counts ------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The third part of the generated kernel (after LdstKernel.hip and
// LdstReduce.hip, before LdstPhases.hip), compiled where the schedule has
// sdma.copyv (SDMA_COUNT_OPS): reading the count tables, their offsets in
// rows (per op, or scanned once per phase into shared memory), the counts a
// call hands back with their offsets, checking a rank's own counts before
// they leave it, and resolving a copyv into the bytes it moves.
//===----------------------------------------------------------------------===//

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

// Entry i of a table as a copyv side or a scan row names it (its rank,
// buffer and form words). A forwarded row (form + 4: CountForwarding.h)
// is read where the count copies into it read it, from its sources in
// sdma_fwd ((rank * SDMA_BUFFERS + buffer) << 32 | entry), its first at
// `rank`; such a row is only read after every rank's counts are in (the
// entry job barrier, or SDMA_PEER_COUNTS_SLOT's barrier in one launch).
static __device__ inline long long sdma_table_entry(const SdmaTable *T,
                                                    long long rank,
                                                    long long table,
                                                    long long form,
                                                    long long i) {
#if SDMA_FORWARDED
  if (form >= 4) {
    const long long e = sdma_fwd[rank + i];
    return ((volatile const long long *)T->buf[e >> 32])[e & 0xffffffffll];
  }
#endif
  (void)form;
  return sdma_count(T, rank, table, i);
}

// One side's offset in rows, read from a count table (sdma_vops: table,
// rank, index j, form): 0 the exclusive prefix sum of entries [0, j); 1
// expert-major, the groups of SDMA_RANKS entries before j's each padded to
// a multiple of SDMA_MAJOR_ALIGN (at least SDMA_MAJOR_ALIGN) plus j's
// group's entries before j; 2 entry j itself; plus 4, forwarded (above).
// -1 if an entry is negative
// or implausibly large (over 2^35 rows: a table has at most 2^27 entries,
// so no sum, padding included, can overflow). No branch between the
// loads: they are all in flight at once.
static __device__ inline long long sdma_pad_rows(long long n) {
  const long long a = SDMA_MAJOR_ALIGN;
  const long long padded = (n + a - 1) / a * a;
  return padded < a ? a : padded;
}

static __device__ inline long long sdma_prefix(const SdmaTable *T,
                                               const long long *side) {
  if (side[3] == 2) {
    const long long n = sdma_count(T, side[1], side[0], side[2]);
    return (unsigned long long)n > (1ull << 35) ? -1 : n;
  }
  long long sum = 0, group = 0;
  bool bad = false;
  for (long long i = 0; i < side[2]; ++i) {
    long long n = sdma_table_entry(T, side[1], side[0], side[3], i);
    bad |= (unsigned long long)n > (1ull << 35); // negative too
    group += n;
    if ((side[3] & 3) == 1 && (i + 1) % SDMA_RANKS == 0) {
      sum += sdma_pad_rows(group);
      group = 0;
    }
  }
  return bad ? -1 : sum + group;
}

// The offsets sdma_prefix gives, for every index of a count table at once
// (forms 0 and 1): P[j] for j in [0, L], -1 where an entry before j is bad.
// A table's L entries sit in shared memory at P + 1 (sdma_scan_load, or the
// caller); the scan follows in three steps over segments of S entries
// (form 1: one group of SDMA_RANKS, padded as a whole; else 16), one
// thread per segment, then one per table, then one per entry: about S +
// L / S shared-memory steps, where one thread's sdma_prefix walked up to L
// loads of another rank's memory, each after the last, for every op (a
// rank's 256 expert-major segments: 256 of those walks per side). A
// table's row: rank, buffer, L, form, offset of P in the cache; its
// segment totals follow P (ceil(L / S) words). Every thread of the block
// calls these (each ends with a block sync).
#ifndef SDMA_SCAN_SEG
#define SDMA_SCAN_SEG 16
#endif
#define SDMA_SCAN_ROW 5
// The most shared memory sdma_counts_out's scan takes, in words (12 KiB:
// with a phase's tables, at most 32 KiB (the emitter's bound on
// SDMA_PREFIX_CACHE), and the staged ops, under CUDA's 48 KiB of static
// shared memory per block); past it, one thread sums.
#ifndef SDMA_SCAN_CAP
#define SDMA_SCAN_CAP 1536
#endif
#define SDMA_COUNTS_SEG (SDMA_COUNTS_OFFSETS == 2 ? SDMA_RANKS : SDMA_SCAN_SEG)
#define SDMA_COUNTS_WORDS                                                      \
  (SDMA_COUNTS_OUT + 1 +                                                       \
   (SDMA_COUNTS_OUT + SDMA_COUNTS_SEG - 1) / SDMA_COUNTS_SEG)
static __device__ inline unsigned sdma_scan_seg(long long form) {
  return (form & 3) == 1 ? SDMA_RANKS : SDMA_SCAN_SEG;
}
// A table's entries, its segment length and its segments. Index
// arithmetic is 32-bit (a phase's tables hold at most SDMA_PREFIX_CACHE
// words): a 64-bit division is a long call on GPUs, and step 3 used to make
// one per entry, step 2 one per segment (one H100: the scan of a rank's
// 2239 expert-major entries took 9 us, its loads 4).
struct sdma_scan_tab {
  unsigned L, S, n;
  long long *P;
};
static __device__ inline sdma_scan_tab sdma_scan_table(const long long *row,
                                                       long long *cache) {
  sdma_scan_tab t;
  t.L = (unsigned)row[2];
  t.S = sdma_scan_seg(row[3]);
  t.n = (t.L + t.S - 1) / t.S;
  t.P = cache + row[4];
  return t;
}

// Every table's entries from their ranks' memory into shared memory, four
// loads in flight per thread: flat index g over all tables' entries, the
// table found by walking on from the last one (g only grows).
static __device__ inline unsigned sdma_scan_total(const long long *rows,
                                                  int ntabs) {
  unsigned total = 0;
  for (int t = 0; t < ntabs; ++t)
    total += (unsigned)rows[t * SDMA_SCAN_ROW + 2];
  return total;
}

static __device__ void sdma_scan_load(const SdmaTable *T, const long long *rows,
                                      int ntabs, long long *cache) {
  const unsigned total = sdma_scan_total(rows, ntabs);
  int t = 0;
  unsigned first = 0; // table t's first flat index
  for (unsigned g0 = SDMA_TID; g0 < total; g0 += 4 * SDMA_NTID) {
    long long v[4];
    long long *at[4];
    int k = 0;
    for (; k < 4 && g0 + k * SDMA_NTID < total; ++k) {
      const unsigned g = g0 + k * SDMA_NTID;
      while (g - first >= (unsigned)rows[t * SDMA_SCAN_ROW + 2])
        first += (unsigned)rows[t++ * SDMA_SCAN_ROW + 2];
      const long long *row = rows + t * SDMA_SCAN_ROW;
      at[k] = cache + row[4] + 1 + (g - first);
      v[k] = sdma_table_entry(T, row[0], row[1], row[3], g - first);
    }
    for (int j = 0; j < k; ++j)
      *at[j] = v[j];
  }
  SDMA_SYNC();
}

static __device__ void sdma_scan(const long long *rows, int ntabs,
                                 long long *cache) {
  // 1. Per segment: the running sum in place (from the bad entry on, -1),
  // its total (form 1, a whole group: padded, and so is its last P) after
  // P, or -1 if it holds a bad entry. A thread takes the segments whose
  // flat index over all tables is tid + m * ntid.
  unsigned segs = 0;
  for (int t = 0; t < ntabs; ++t) {
    const long long *row = rows + t * SDMA_SCAN_ROW;
    const sdma_scan_tab tab = sdma_scan_table(row, cache);
    for (unsigned k = (SDMA_TID + SDMA_NTID - segs % SDMA_NTID) % SDMA_NTID;
         k < tab.n; k += SDMA_NTID) {
      const unsigned end = (k + 1) * tab.S < tab.L ? (k + 1) * tab.S : tab.L;
      long long sum = 0;
      bool bad = false;
      for (unsigned i = k * tab.S; i < end; ++i) {
        const long long v = tab.P[1 + i];
        bad |= (unsigned long long)v > (1ull << 35); // negative too
        sum += v;
        tab.P[1 + i] = bad ? -1 : sum;
      }
      if ((row[3] & 3) == 1 && end - k * tab.S == tab.S && !bad) {
        sum = sdma_pad_rows(sum);
        tab.P[end] = sum;
      }
      tab.P[tab.L + 1 + k] = bad ? -1 : sum;
    }
    segs += tab.n;
  }
  SDMA_SYNC();
  // 2. Per table: each segment's total becomes its base (-1 after a bad
  // segment).
  for (int t = (int)SDMA_TID; t < ntabs; t += (int)SDMA_NTID) {
    const sdma_scan_tab tab = sdma_scan_table(rows + t * SDMA_SCAN_ROW, cache);
    long long base = 0;
    for (unsigned k = 0; k < tab.n; ++k) {
      const long long total = tab.P[tab.L + 1 + k];
      tab.P[tab.L + 1 + k] = base;
      base = base < 0 || total < 0 ? -1 : base + total;
    }
    tab.P[0] = 0;
  }
  SDMA_SYNC();
  // 3. Per entry: its segment's base added. Flat over all tables' entries
  // (a phase of many short tables keeps every thread busy), the table
  // found by walking on from the last one (g only grows).
  const unsigned total = sdma_scan_total(rows, ntabs);
  unsigned first = 0; // table t's first flat index
  for (unsigned g = SDMA_TID, t = 0; g < total; g += SDMA_NTID) {
    while (g - first >= (unsigned)rows[t * SDMA_SCAN_ROW + 2])
      first += (unsigned)rows[t++ * SDMA_SCAN_ROW + 2];
    const long long *row = rows + t * SDMA_SCAN_ROW;
    long long *P = cache + row[4];
    const unsigned L = (unsigned)row[2], i = g - first;
    const long long base = P[L + 1 + i / sdma_scan_seg(row[3])];
    P[1 + i] = base < 0 || P[1 + i] < 0 ? -1 : base + P[1 + i];
  }
  SDMA_SYNC();
}

// After the call, this rank's receive counts to the caller (countsOut[1]),
// then (SDMA_COUNTS_OFFSETS) where each counted segment starts: 1 packed in
// table order, 2 expert-major (groups of SDMA_RANKS, padded). Block 0; the
// offsets by sdma_scan (by thread 0 where the table passes SDMA_SCAN_CAP).
static __device__ void sdma_counts_out(const SdmaTable *T) {
  const volatile long long *recv = (const volatile long long *)T->countsOut[0];
#if SDMA_COUNTS_OFFSETS && SDMA_COUNTS_WORDS <= SDMA_SCAN_CAP
  // The offsets by sdma_scan: the table's counts are its receive counts.
  SDMA_BLOCK_SHARED(long long, P, SDMA_COUNTS_WORDS);
  for (int i = (int)SDMA_TID; i < SDMA_COUNTS_OUT; i += (int)SDMA_NTID) {
    const long long n = recv[i];
    T->countsOut[1][i] = n;
    P[1 + i] = n;
  }
  SDMA_SYNC();
  const long long row[SDMA_SCAN_ROW] = {0, 0, SDMA_COUNTS_OUT,
                                        SDMA_COUNTS_OFFSETS == 2 ? 1 : 0, 0};
  sdma_scan(row, 1, P);
  for (int i = (int)SDMA_TID; i < SDMA_COUNTS_OUT; i += (int)SDMA_NTID)
    T->countsOut[1][SDMA_COUNTS_OUT + i] = P[i];
#else
  for (int i = (int)SDMA_TID; i < SDMA_COUNTS_OUT; i += (int)SDMA_NTID)
    T->countsOut[1][i] = recv[i];
#endif
#if SDMA_COUNTS_OFFSETS && SDMA_COUNTS_WORDS > SDMA_SCAN_CAP
  if (SDMA_TID == 0) {
    long long at = 0, group = 0;
    for (int i = 0; i < SDMA_COUNTS_OUT; ++i) {
      const long long n = recv[i];
      T->countsOut[1][SDMA_COUNTS_OUT + i] = at;
      at += n;
#if SDMA_COUNTS_OFFSETS == 2
      group += n;
      if ((i + 1) % SDMA_RANKS == 0) {
        at += sdma_pad_rows(group) - group;
        group = 0;
      }
#endif
    }
  }
#endif
}

// sdma.copyv: row[4] is the capacity in chunks, row[8..10] the count's
// table entry, row[11] its prefix tables in sdma_vops (a side's word 4:
// where its table's offsets are in the phase's `cache`, sdma_phase's scan;
// -1: summed here). Every bound is checked in rows before anything is
// multiplied into bytes.
static __device__ inline long long sdma_side_rows(const SdmaTable *T,
                                                  const long long *side,
                                                  const long long *cache) {
  if (side[0] < 0)
    return 0;
  if (cache && side[4] >= 0)
    return cache[side[4] + side[2]];
  return sdma_prefix(T, side);
}

static __device__ inline sdma_desc
sdma_resolve_copyv(const SdmaTable *T, const long long *op,
                   unsigned long long chunk, const long long *cache) {
  const long long *v = sdma_vops + op[11] * SDMA_VOP_STRIDE;
  const unsigned long long row = T->rowBytes ? T->rowBytes : chunk;
  const long long n = sdma_count(T, op[8], op[9], op[10]);
  // Offsets in rows for packed sides; a fixed slot is in chunks.
  const long long *w = v + SDMA_VOP_STRIDE / 2; // the destination's side
  const long long srcRows = sdma_side_rows(T, v, cache);
  const long long dstRows = sdma_side_rows(T, w, cache);
  const unsigned long long srcEnd = sdma_buffer_units[op[2]] * chunk;
  const unsigned long long dstEnd = sdma_buffer_units[op[6]] * chunk;
  sdma_desc d;
  d.kind = 0;
  d.n = 0;
  d.a = T->buf[op[1] * SDMA_BUFFERS + op[2]];
  d.b = d.c = T->buf[op[5] * SDMA_BUFFERS + op[6]];
  if (n < 0) {
    sdma_report_count(T, 3, op[1], op[5], n);
    return d;
  }
  if ((unsigned long long)n > (unsigned long long)op[4] * chunk / row) {
    sdma_report_count(T, 1, op[1], op[5], n);
    return d;
  }
  // An empty segment moves nothing: its offsets are not used (torch's
  // all_to_all_vdev_2d_offset ignores an empty split's offset too).
  if (n == 0)
    return d;
  if (srcRows < 0 || dstRows < 0 ||
      (unsigned long long)srcRows > srcEnd / row ||
      (unsigned long long)dstRows > dstEnd / row) {
    sdma_report_count(T, 2, op[1], op[5], n);
    return d;
  }
  const unsigned long long bytes = (unsigned long long)n * row;
  const unsigned long long src =
      v[0] < 0 ? op[3] * chunk : (unsigned long long)srcRows * row;
  const unsigned long long dst =
      w[0] < 0 ? op[7] * chunk : (unsigned long long)dstRows * row;
  if (src + bytes > srcEnd || dst + bytes > dstEnd) {
    sdma_report_count(T, 2, op[1], op[5], n);
    return d;
  }
  d.a += src;
  d.b = d.c = d.b + dst;
  d.n = bytes;
  return d;
}

// One copyv's count, held by `rank` (sdma_check_counts): pass 0 checks it,
// pass 1 zeroes it where the rank's packed rows moved (packed sources).
static __device__ void sdma_check_count(const SdmaTable *T, const long long *op,
                                        int pass, unsigned long long chunk,
                                        unsigned long long row,
                                        int *packedBad) {
  // A source at prefix-sum offsets (not `at`, whose offsets the caller
  // gave): its later rows move with a bad count.
  const long long *v = sdma_vops + op[11] * SDMA_VOP_STRIDE;
  const bool packed = v[0] >= 0 && (v[3] & 3) != 2;
  volatile long long *c =
      (volatile long long *)T->buf[op[8] * SDMA_BUFFERS + op[9]] + op[10];
  if (pass == 1) {
    if (packed)
      *c = 0;
    return;
  }
  const long long n = *c;
  if (n < 0 || (unsigned long long)n > (unsigned long long)op[4] * chunk / row) {
    sdma_report_count(T, (n < 0 ? 3 : 1) + (packed ? 4 : 0), op[1], op[5], n);
    *c = 0;
    if (packed)
      packedBad[0] = 1;
  }
}

// Before any count leaves this rank: a count in its own tables that a
// copyv will read (its own copyv's, or with SDMA_PEER_COUNT_CHECKS a
// peer's pull's) that is negative or above the op's capacity is reported
// and set to 0 there, so the count exchange hands the receiver 0 (its
// receive count says nothing came) and no prefix sum on either side sees
// the bad value. Where the op's source is packed (its rows' offsets
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
#if SDMA_PEER_COUNT_CHECKS
    // Some copyv's count lives with another rank than the one issuing it
    // (a pull): the emitter lists the copyvs each rank holds the count of.
    for (int j = sdma_count_check_begin[rank] + (int)SDMA_TID;
         j < sdma_count_check_begin[rank + 1]; j += (int)SDMA_NTID)
      sdma_check_count(T,
                       sdma_ops + (long long)sdma_count_checks[j] *
                                      SDMA_OP_STRIDE,
                       pass, chunk, row, packedBad);
#else
    // Every copyv counts in its issuer's tables: the rank's own steps.
    for (int s = sdma_rank_begin[rank]; s < sdma_rank_begin[rank + 1]; ++s) {
      const int *st = sdma_steps + 3 * s;
      if (st[0] != 0)
        continue;
      for (int i = (int)SDMA_TID; i < st[2]; i += (int)SDMA_NTID) {
        const long long *op =
            sdma_ops + (long long)(st[1] + i) * SDMA_OP_STRIDE;
        if (op[0] == 3 && op[8] == rank)
          sdma_check_count(T, op, pass, chunk, row, packedBad);
      }
    }
#endif
    SDMA_SYNC();
    if (!packedBad[0])
      break;
  }
}
#endif
