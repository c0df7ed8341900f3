//===- LdstLowLatency.hip - calls without a job barrier ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The low-latency call of a program the emitter planned for it (SDMA_LL,
// lib/Target/HIP/LowLatency.h: every rank one phase of copies and broadcasts
// out of its own memory and reductions into it), after LdstCounts.hip and
// before LdstPhases.hip, whose sdma_ldst_ll runs it (a launch that set
// SdmaTable::ll).
//===----------------------------------------------------------------------===//

#if SDMA_LL
// A call numbered `seq` (the rank's counter, llSeq[0], shared by all the
// communicator's programs; every rank makes the same calls, so the same
// number) uses slot seq % 2 of every inbox. Rank s's region in rank p's
// inbox holds a header packet, then its packets for p: each 8 bytes of the
// data become a 16-byte packet of two words, each word 4 of the bytes and
// the call's flag (seq mod 2^32 - 1, plus 1: never 0, never the previous
// call's). A word is written and read whole, so a receiver that sees the
// flag in both words of a packet has its 8 bytes: no fence, no barrier.
//   rank s:  header (its call tag) to every other rank's region s; the
//            slices of its memory other ranks copy or reduce, as packets
//            (sdma_ll_push); every thread polls every peer's header and
//            compares the tag (so a rank whose call differs is refused
//            before any buffer is written); then its copies within its own
//            memory (sdma_ll_local), the packets it receives moved into its
//            buffers (sdma_ll_recv), and its reductions (sdma_ll_red), each
//            operand read in place or from its sender's packets.
// Why the slot is free when s writes it: s's previous call (any program,
// low-latency or not) waited for every peer: a low-latency call for its
// header, a barrier call at its exit. So every peer p had started that call
// (seq - 1) when s started this one, so p's call seq - 2, the last to read
// this slot, had ended (p's stream runs one kernel after another). A call
// never writes another rank's buffers and reads only its own: the caller's
// stream order covers them. test/protocol/low_latency.mlir proves this for
// three consecutive calls (sdma-verify); dropping the header is refused.
// Different calls on two ranks: the header's tag differs (slot -4, as the
// entry barrier reports it), or a header (slot -2) or packet (slot -5)
// never comes (timed out).
#ifndef SDMA_LL_STORE
#define SDMA_LL_STORE(p, w0, w1)                                               \
  do {                                                                         \
    volatile unsigned long long *q_ = (volatile unsigned long long *)(p);      \
    q_[0] = (w0);                                                              \
    q_[1] = (w1);                                                              \
  } while (0)
#endif
#ifndef SDMA_LL_LOAD
#define SDMA_LL_LOAD(p, w0, w1)                                                \
  do {                                                                         \
    const volatile unsigned long long *q_ =                                    \
        (const volatile unsigned long long *)(p);                              \
    (w0) = q_[0];                                                              \
    (w1) = q_[1];                                                              \
  } while (0)
#endif
#define SDMA_LL_WAIT_SLOT (-5)

// Bytes [off, off + 8) of [p, p + n) as one value (zero past n).
static __device__ SDMA_INLINE unsigned long long
sdma_ll_get(const char *p, unsigned long long off, unsigned long long n) {
  if (off + 8 <= n && (((unsigned long long)(p + off)) & 7ull) == 0)
    return *(const unsigned long long *)(p + off);
  unsigned long long v = 0;
  for (unsigned long long j = 0; j < 8 && off + j < n; ++j)
    v |= (unsigned long long)(unsigned char)p[off + j] << (8 * j);
  return v;
}

// Writes the bytes of `v` that fall in [p, p + n) at `off`.
static __device__ SDMA_INLINE void sdma_ll_put(char *p, unsigned long long off,
                                               unsigned long long n,
                                               unsigned long long v) {
  if (off + 8 <= n && (((unsigned long long)(p + off)) & 7ull) == 0) {
    *(unsigned long long *)(p + off) = v;
    return;
  }
  for (unsigned long long j = 0; j < 8 && off + j < n; ++j)
    p[off + j] = (char)(v >> (8 * j));
}

static __device__ SDMA_INLINE void sdma_ll_write(char *packet, unsigned int flag,
                                                 unsigned long long v) {
  const unsigned long long f = (unsigned long long)flag << 32;
  SDMA_LL_STORE(packet, f | (v & 0xffffffffull), f | (v >> 32));
}

// Polls `packet` (from rank `from`) until both its words carry `flag`; its
// 8 bytes into `v`. False on a timeout (recorded as `slot`: -2 for a header,
// a peer that did not start the call, as the entry barrier says) or a
// failure elsewhere. The record's value: the rank, the flag awaited, a
// low-latency wait (sdma::rt::PeerWait); its seen value: the flag found,
// and above it the flag of `other` where given (the peer's header in the
// other slot: a peer a call ahead or behind shows there).
static __device__ bool sdma_ll_poll(const SdmaTable *T, int rank, int from,
                                    const char *packet, unsigned int flag,
                                    int slot, unsigned long long &v,
                                    const char *other = 0) {
  unsigned long long w0, w1, start = 0;
  for (;;) {
    SDMA_LL_LOAD(packet, w0, w1);
    if ((unsigned int)(w0 >> 32) == flag && (unsigned int)(w1 >> 32) == flag) {
      v = (w0 & 0xffffffffull) | (w1 << 32);
      return true;
    }
    if (sdma_aborted(T))
      return false;
    SDMA_SPIN_PAUSE();
    const unsigned long long now = SDMA_NOW_NS();
    if (!start) {
      start = now;
    } else if (now - start > T->timeoutNs) {
      unsigned long long o0 = 0, o1 = 0;
      if (other)
        SDMA_LL_LOAD(other, o0, o1);
      sdma_report(T, rank, slot,
                  (unsigned long long)from |
                      (unsigned long long)flag << 16 | 1ull << 63,
                  ((w0 >> 32) == flag ? w1 >> 32 : w0 >> 32) |
                      (o0 >> 32) << 32);
      return false;
    }
  }
}

// Rank `from`'s region of rank `to`'s inbox in `slot`.
static __device__ SDMA_INLINE char *sdma_ll_region(const SdmaTable *T, int to,
                                                   int from,
                                                   unsigned long long slot) {
  return T->ll[to] +
         (slot * SDMA_RANKS + (unsigned long long)from) * T->llPairBytes;
}

// Packet `unit` of the slice at chunk offset `at` in rank `from`'s region
// of rank `to`'s inbox (after the header packet; a chunk's packets: its
// bytes rounded up to 8, 16 bytes per 8).
static __device__ SDMA_INLINE char *
sdma_ll_packet(const SdmaTable *T, int to, int from, unsigned long long slot,
               long long at, unsigned long long chunk,
               unsigned long long unit) {
  return sdma_ll_region(T, to, from, slot) + 16 +
         (unsigned long long)at * ((chunk + 7) / 8 * 16) + unit * 16;
}

// The call's pushes: the rank's rows of sdma_ll_push (a slice of its own
// memory into a peer's inbox), each 8-byte unit spread over all threads of
// the rank's blocks (`u`, `base` as in sdma_phase_ops).
static __device__ void sdma_ll_pushes(const SdmaTable *T, int rank,
                                      unsigned long long chunk,
                                      unsigned long long slot,
                                      unsigned int flag,
                                      unsigned long long nthreads,
                                      unsigned long long &u,
                                      unsigned long long &base) {
  for (int i = sdma_ll_push_begin[rank]; i < sdma_ll_push_begin[rank + 1];
       ++i) {
    const long long *row = sdma_ll_push + 5 * i;
    const char *src = T->buf[rank * SDMA_BUFFERS + row[0]] + row[1] * chunk;
    const unsigned long long n = (unsigned long long)row[2] * chunk;
    const unsigned long long units = (n + 7) / 8;
    for (; u < base + units; u += nthreads)
      sdma_ll_write(
          sdma_ll_packet(T, (int)row[3], rank, slot, row[4], chunk, u - base),
          flag, sdma_ll_get(src, (u - base) * 8, n));
    base += units;
  }
}

// The rank's copies within its own memory (sdma_ll_local).
static __device__ void sdma_ll_locals(const SdmaTable *T, int rank,
                                      unsigned long long chunk,
                                      unsigned long long nthreads,
                                      unsigned long long &u,
                                      unsigned long long &base) {
  for (int i = sdma_ll_local_begin[rank]; i < sdma_ll_local_begin[rank + 1];
       ++i) {
    const long long *row = sdma_ll_local + 5 * i;
    const char *src = T->buf[rank * SDMA_BUFFERS + row[0]] + row[1] * chunk;
    char *to = T->buf[rank * SDMA_BUFFERS + row[3]] + row[4] * chunk;
    const unsigned long long n = (unsigned long long)row[2] * chunk;
    const unsigned long long units = (n + 7) / 8;
    for (; u < base + units; u += nthreads)
      sdma_ll_put(to, (u - base) * 8, n, sdma_ll_get(src, (u - base) * 8, n));
    base += units;
  }
}

// Every peer's header for this call, polled by every thread before it
// writes any of the rank's memory: the same call (the tag) on every rank,
// or nothing is written (slot -4, as the entry barrier reports it).
static __device__ bool sdma_ll_headers(const SdmaTable *T, int rank,
                                       unsigned long long slot,
                                       unsigned int flag) {
  for (int q = 0; q < SDMA_RANKS; ++q) {
    unsigned long long theirs;
    if (q == rank)
      continue;
    if (!sdma_ll_poll(T, rank, q, sdma_ll_region(T, rank, q, slot), flag, -2,
                      theirs, sdma_ll_region(T, rank, q, slot ^ 1ull)))
      return false;
    if (theirs != T->callTag) {
      sdma_report(T, rank, -4, (unsigned long long)q, theirs);
      return false;
    }
  }
  return true;
}

// The call's receives: every row of the rank's receive table. False once a
// poll failed.
static __device__ bool sdma_ll_receives(const SdmaTable *T, int rank,
                                        unsigned long long chunk,
                                        unsigned long long slot,
                                        unsigned int flag,
                                        unsigned long long nthreads,
                                        unsigned long long &u,
                                        unsigned long long &base) {
  for (int i = sdma_ll_recv_begin[rank]; i < sdma_ll_recv_begin[rank + 1];
       ++i) {
    const long long *row = sdma_ll_recv + 5 * i;
    const int from = (int)row[0];
    char *to = T->buf[rank * SDMA_BUFFERS + row[1]] + row[2] * chunk;
    const unsigned long long n = (unsigned long long)row[3] * chunk;
    const unsigned long long units = (n + 7) / 8;
    for (; u < base + units; u += nthreads) {
      unsigned long long v;
      if (!sdma_ll_poll(T, rank, from,
                        sdma_ll_packet(T, rank, from, slot, row[4], chunk,
                                       u - base),
                        flag, SDMA_LL_WAIT_SLOT, v))
        return false;
      sdma_ll_put(to, (u - base) * 8, n, v);
    }
    base += units;
  }
  return true;
}

#if SDMA_REDUCE
// The rank's reduce rows (sdma_ll_red): each 8-byte unit of the destination
// is its operands combined in the barrier kernel's order (the destination
// or the first source, then every source), a source read in place or from
// its rank's packets. Premulsum (scalars exchanged at the entry barrier) is
// never run here: the runtime keeps it on the barrier protocol.
static __device__ bool sdma_ll_reduces(const SdmaTable *T, int rank,
                                       unsigned long long chunk,
                                       unsigned long long slot,
                                       unsigned int flag,
                                       unsigned long long nthreads,
                                       unsigned long long &u,
                                       unsigned long long &base) {
#if SDMA_REDUCE_OP == 5
  SDMA_TRAP();
#endif
  union word {
    unsigned long long w;
    unsigned char b[8];
  };
  for (int i = sdma_ll_red_begin[rank]; i < sdma_ll_red_begin[rank + 1];
       ++i) {
    const long long *row = sdma_ll_red + 6 * i;
    char *to = T->buf[rank * SDMA_BUFFERS + row[0]] + row[1] * chunk;
    const unsigned long long n = (unsigned long long)row[2] * chunk;
    const unsigned long long units = (n + 7) / 8;
    const int first = (int)row[3], nsrc = (int)row[4];
    const long long *srcs = sdma_ll_rsrc + 4 * row[5];
    for (; u < base + units; u += nthreads) {
      const unsigned long long off = (u - base) * 8;
      const int m = (int)((n - off < 8 ? n - off : 8) / SDMA_ESIZE);
      sdma_acc acc[8 / SDMA_ESIZE];
      for (int s = first ? 0 : -1; s < nsrc; ++s) {
        word x;
        const long long *src = srcs + 4 * (s < 0 ? 0 : s);
        if (s < 0) {
          x.w = sdma_ll_get(to, off, n);
        } else if (src[3] < 0) {
          x.w = sdma_ll_get(T->buf[src[0] * SDMA_BUFFERS + src[1]] +
                                src[2] * chunk,
                            off, n);
        } else if (!sdma_ll_poll(T, rank, (int)src[0],
                                 sdma_ll_packet(T, rank, (int)src[0], slot,
                                                src[3], chunk, u - base),
                                 flag, SDMA_LL_WAIT_SLOT, x.w)) {
          return false;
        }
        for (int e = 0; e < m; ++e) {
          const sdma_acc v = (sdma_acc)SDMA_LOAD(x.b + e * SDMA_ESIZE);
          acc[e] = s == (first ? 0 : -1) ? v : sdma_combine(acc[e], v);
        }
      }
      word y;
      y.w = 0;
      for (int e = 0; e < m; ++e)
        SDMA_STORE(y.b + e * SDMA_ESIZE, SDMA_FINISH(acc[e]));
      sdma_ll_put(to, off, n, y.w);
    }
    base += units;
  }
  return true;
}
#endif

// One low-latency call of rank `rank`. False where a poll failed (recorded:
// the communicator has failed, the counter stays).
static __device__ bool sdma_ll_call(const SdmaTable *T, int rank,
                                    unsigned long long chunk) {
  unsigned long long *seqWords = T->llSeq;
  const unsigned long long seq = *(volatile unsigned long long *)seqWords;
  const unsigned int flag = (unsigned int)(seq % 0xffffffffull) + 1u;
  const unsigned long long slot = seq & 1ull;
  const unsigned long long nthreads = (unsigned long long)SDMA_NBID * SDMA_NTID;
  unsigned long long u = (unsigned long long)SDMA_BID * SDMA_NTID + SDMA_TID;
  unsigned long long base = 0;
  // Headers first: a peer whose data is all here still waits for them.
  if (SDMA_BID == 0)
    for (int q = (int)SDMA_TID; q < SDMA_RANKS; q += (int)SDMA_NTID)
      if (q != rank)
        sdma_ll_write(sdma_ll_region(T, q, rank, slot), flag, T->callTag);
  sdma_ll_pushes(T, rank, chunk, slot, flag, nthreads, u, base);
  bool ok = sdma_ll_headers(T, rank, slot, flag);
  if (ok) {
    sdma_ll_locals(T, rank, chunk, nthreads, u, base);
    ok = sdma_ll_receives(T, rank, chunk, slot, flag, nthreads, u, base);
  }
#if SDMA_REDUCE
  // The ops of one phase are independent (a copy and a reduction of a rank
  // never touch the same bytes), so they share the threads' units.
  if (ok)
    ok = sdma_ll_reduces(T, rank, chunk, slot, flag, nthreads, u, base);
#endif
  // The counter moves once every block of the rank is done with this
  // call's number: the last block to count itself out advances it (a
  // device-scope fence first, so no block's read of it can come later).
  SDMA_BLOCK_SHARED(unsigned int, state, 2);
  if (SDMA_TID == 0)
    state[0] = 0, state[1] = 0;
  SDMA_SYNC();
  if (!ok)
    state[0] = 1;
  SDMA_SYNC();
  if (state[0])
    return false;
  if (SDMA_TID == 0) {
    if (SDMA_NBID > 1)
      SDMA_FENCE();
    state[1] = SDMA_NBID == 1 ||
               SDMA_ATOMIC_ADD_SYSTEM_U64(seqWords + 1, 1ull) == SDMA_NBID - 1;
  }
  SDMA_SYNC();
  if (!state[1])
    return true;
  // The flag wraps after 2^32 - 1 calls: a slot's last call before it
  // (flags 0xfffffffe and 0xffffffff) zeroes the slot once every block has
  // read it (the last block), so no packet of this period can carry a flag
  // of the next. A peer writes this slot again only after this rank's next
  // header (the kernel's end orders the zeros before it).
  if (flag >= 0xfffffffeu) {
    unsigned long long *words = (unsigned long long *)sdma_ll_region(
        T, rank, 0, slot);
    const unsigned long long n = SDMA_RANKS * T->llPairBytes / 8;
    for (unsigned long long i = SDMA_TID; i < n; i += SDMA_NTID)
      words[i] = 0;
    SDMA_SYNC();
  }
  if (SDMA_TID == 0) {
    seqWords[1] = 0;
    *(volatile unsigned long long *)seqWords = seq + 1;
  }
  return true;
}
#endif
