//===- P2pKernel.hip - sends and receives between two ranks -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's point-to-point kernel (PointToPoint.h), embedded at
// build time (EmbedKernel.cmake) and compiled after a prelude that defines
// the SDMA_* device macros: NVRTC's (LdstPrelude.h), hipRTC's, or the CPU
// device's host threads (HostKernel.cpp). One block per operation of a
// launch; every operation of a launch runs at once, so a launch's sends
// and receives cannot wait on each other.
//
// A message from rank s to rank r moves in chunks through s's ring in r's
// point-to-point area, `depth` entries. Chunk number c (counted per ordered
// pair over the communicator's life) uses entry e = c % depth, and each
// entry carries its own handshake: `full[e]` (in the receiver's area,
// written by the sender) holds the number + 1 of the chunk in it, `size[e]`
// the bytes + 1 of its message, and `free[e]` (in the sender's area,
// written by the receiver) the number + 1 of the last chunk consumed from
// it. The sender of chunk c waits for free[e] >= c + 1 - depth (chunk
// c - depth is gone), writes the entry, its size, then full[e] = c + 1; the
// receiver waits for full[e] >= c + 1, checks the size against its own,
// copies the entry out, then sets free[e] = c + 1. Each entry's chunks
// follow one another, so its words only grow and a chunk never meets a
// stale entry, whatever order operations of one pair run in (one launch
// holds a whole group, every operation at once). A message of 0 bytes is
// one chunk (its size word alone), so a receive of the wrong size is seen
// even then.
//
//   sender s                           receiver r
//   wait free[e] >= c+1-depth
//   ring[e] <- chunk c; size[e];  ──>  wait full[e] >= c+1; size[e] ok?
//   full[e] = c+1                      ring[e] -> user buffer
//                                <──   free[e] (in s's area) = c+1
//
// Each wait is bounded by the communicator's timeout; a receiver that
// refuses a message of another size also poisons the pair's free words, so
// that its sender fails at its next wait there instead of timing out. A
// failure (a wait that timed out, a message of another size) is recorded
// once per
// communicator (error: status 1 timeout / 2 size, rank, peer, 1 if the
// waiter sends, value awaited or bytes expected, value seen or bytes sent;
// word 7 claims the record, the status is written last) and every block of
// every later launch stops at its first wait.

#ifndef SDMA_SPIN_PAUSE
#define SDMA_SPIN_PAUSE()
#endif
// Operations per launch (a group): the table is a kernel parameter.
#define SDMA_P2P_MAX_OPS 128

struct SdmaP2pOp {
  char *user;                 // the caller's buffer (this rank's memory)
  char *ring;                 // the receiver's ring for the sender
  unsigned long long *full;   // the ring's full words (receiver's area)
  unsigned long long *size;   // the ring's size words (receiver's area)
  unsigned long long *free;   // the ring's free words (sender's area)
  unsigned long long bytes;
  unsigned long long base;        // the pair's chunk number it starts at
  unsigned long long peerAndSend; // peer * 2 + 1 for a send
};

struct SdmaP2pTable {
  SdmaP2pOp op[SDMA_P2P_MAX_OPS];
  unsigned long long rank;
  unsigned long long chunkBytes; // a multiple of 16
  unsigned long long depth;
  unsigned long long timeoutNs;
  unsigned long long *error; // polled (device memory on a GPU)
  unsigned long long *errorMirror; // null, or host memory the host reads
};

struct __attribute__((aligned(16))) sdma_p2p_v16 {
  unsigned long long x, y;
};

static __device__ bool sdma_p2p_failed(const SdmaP2pTable *T) {
  return *(volatile unsigned long long *)T->error != 0;
}

static __device__ void sdma_p2p_report(const SdmaP2pTable *T,
                                       unsigned long long status, int peer,
                                       int send, unsigned long long awaited,
                                       unsigned long long seen) {
  // Claim the record (word 7), fill it, then publish the status: a reader
  // that sees a status sees its words.
  if (SDMA_ATOMIC_CAS_U64(T->error + 7, 0ull, 1ull) != 0ull)
    return;
  unsigned long long words[5] = {T->rank, (unsigned long long)peer,
                                 (unsigned long long)send, awaited, seen};
  for (int i = 0; i < 5; ++i)
    T->error[1 + i] = words[i];
  if (T->errorMirror) {
    for (int i = 0; i < 5; ++i)
      T->errorMirror[1 + i] = words[i];
    SDMA_FENCE_SYSTEM();
    *(volatile unsigned long long *)T->errorMirror = status;
  }
  SDMA_FENCE_SYSTEM();
  *(volatile unsigned long long *)T->error = status;
  SDMA_FENCE_SYSTEM();
}

// Thread 0: waits until *counter >= value. False if the communicator has
// failed or the wait timed out (then recorded).
// A free word a receiver poisoned: it refused the pair's message (another
// size); the low bits hold the bytes + 1 its receive expected.
#define SDMA_P2P_REFUSED (1ull << 63)

static __device__ bool sdma_p2p_wait(const SdmaP2pTable *T,
                                     unsigned long long *counter,
                                     unsigned long long value, int peer,
                                     int send) {
  volatile unsigned long long *c = counter;
  unsigned long long start = SDMA_NOW_NS(), seen;
  while ((seen = *c) < value) {
    SDMA_SPIN_PAUSE();
    if (sdma_p2p_failed(T))
      return false;
    if (SDMA_NOW_NS() - start > T->timeoutNs) {
      sdma_p2p_report(T, 1, peer, send, value, seen);
      return false;
    }
  }
  SDMA_FENCE_SYSTEM();
  if (send && (seen & SDMA_P2P_REFUSED)) {
    sdma_p2p_report(T, 2, peer, 1, 0, (seen & ~SDMA_P2P_REFUSED) - 1);
    return false;
  }
  return !sdma_p2p_failed(T);
}

// A ring entry written by another rank is read past the SM's L1 (which
// may hold the entry's previous chunk).
#if defined(__CUDACC__) && !defined(__HIP__)
#define SDMA_P2P_LOAD(p) __ldcg(reinterpret_cast<const ulonglong2 *>(p))
#define SDMA_P2P_UNIT ulonglong2
#else
#define SDMA_P2P_LOAD(p) (*(p))
#define SDMA_P2P_UNIT sdma_p2p_v16
#endif

// The block copies bytes [from, to) one at a time (a ring entry's bytes
// read past the L1 as volatile loads).
static __device__ void sdma_p2p_bytes(char *dst, const char *src,
                                      unsigned long long from,
                                      unsigned long long to) {
  for (unsigned long long b = from + SDMA_TID; b < to; b += SDMA_NTID)
    dst[b] = *(volatile const char *)(src + b);
}

// The block copies n bytes in the widest units both ends allow: when they
// share their alignment modulo 16, a byte head up to the boundary, 16-byte
// units, a byte tail; else 8- or 4-byte units where the ends agree modulo
// 8 or 4 (a torch split of 12-byte rows), else bytes.
static __device__ void sdma_p2p_copy(char *dst, const char *src,
                                     unsigned long long n) {
  const unsigned long long d = reinterpret_cast<unsigned long long>(dst);
  const unsigned long long s = reinterpret_cast<unsigned long long>(src);
  const unsigned long long skew = d ^ s;
  const unsigned long long unit = (skew & 15) == 0  ? 16
                                  : (skew & 7) == 0 ? 8
                                  : (skew & 3) == 0 ? 4
                                                    : 1;
  unsigned long long head = (unit - (d & (unit - 1))) & (unit - 1);
  if (head > n)
    head = n;
  sdma_p2p_bytes(dst, src, 0, head);
  const unsigned long long units = (n - head) / unit;
  char *db = dst + head;
  const char *sb = src + head;
  if (unit == 16) {
    SDMA_P2P_UNIT *du = reinterpret_cast<SDMA_P2P_UNIT *>(db);
    const SDMA_P2P_UNIT *su = reinterpret_cast<const SDMA_P2P_UNIT *>(sb);
    for (unsigned long long u = SDMA_TID; u < units; u += SDMA_NTID)
      du[u] = SDMA_P2P_LOAD(su + u);
  } else if (unit == 8) {
    unsigned long long *du = reinterpret_cast<unsigned long long *>(db);
    const volatile unsigned long long *su =
        reinterpret_cast<const volatile unsigned long long *>(sb);
    for (unsigned long long u = SDMA_TID; u < units; u += SDMA_NTID)
      du[u] = su[u];
  } else if (unit == 4) {
    unsigned int *du = reinterpret_cast<unsigned int *>(db);
    const volatile unsigned int *su =
        reinterpret_cast<const volatile unsigned int *>(sb);
    for (unsigned long long u = SDMA_TID; u < units; u += SDMA_NTID)
      du[u] = su[u];
  }
  // Bytes alone when the ends agree on nothing (unit 1): units is n here.
  const unsigned long long done = unit == 1 ? head : head + units * unit;
  sdma_p2p_bytes(dst, src, done, n);
}

extern "C" __global__ void __launch_bounds__(SDMA_MAX_THREADS)
    sdma_p2p(const SDMA_GRID_CONSTANT SdmaP2pTable table) {
  const SdmaP2pTable *T = &table;
  const SdmaP2pOp *op = &T->op[SDMA_BID];
  const int send = (int)(op->peerAndSend & 1);
  const int peer = (int)(op->peerAndSend >> 1);
  const unsigned long long chunk = T->chunkBytes, depth = T->depth;
  const unsigned long long bytes = op->bytes;
  const unsigned long long chunks = bytes ? (bytes + chunk - 1) / chunk : 1;
  SDMA_BLOCK_SHARED(int, go, 1);
  for (unsigned long long i = 0; i < chunks; ++i) {
    const unsigned long long c = op->base + i;
    const unsigned long long e = c % depth;
    char *slot = op->ring + e * chunk;
    const unsigned long long at = i * chunk;
    const unsigned long long n = bytes - at < chunk ? bytes - at : chunk;
    if (SDMA_TID == 0) {
      bool ok;
      if (send) {
        ok = c + 1 <= depth
                 ? !sdma_p2p_failed(T)
                 : sdma_p2p_wait(T, op->free + e, c + 1 - depth, peer, 1);
      } else {
        ok = sdma_p2p_wait(T, op->full + e, c + 1, peer, 0);
        unsigned long long size =
            ok ? *(volatile unsigned long long *)(op->size + e) : 0;
        if (ok && size != bytes + 1) {
          sdma_p2p_report(T, 2, peer, 0, bytes, size - 1);
          // The sender learns of it at its next wait on this pair.
          for (unsigned long long k = 0; k < depth; ++k)
            *(volatile unsigned long long *)(op->free + k) =
                SDMA_P2P_REFUSED | (bytes + 1);
          SDMA_FENCE_SYSTEM();
          ok = false;
        }
      }
      go[0] = ok;
    }
    SDMA_SYNC();
    if (!go[0])
      return; // the whole block, together
    if (n) {
      if (send)
        sdma_p2p_copy(slot, op->user + at, n);
      else
        sdma_p2p_copy(op->user + at, slot, n);
    }
    SDMA_SYNC();
    if (SDMA_TID == 0) {
      SDMA_FENCE_SYSTEM();
      if (send) {
        *(volatile unsigned long long *)(op->size + e) = bytes + 1;
        SDMA_FENCE_SYSTEM();
        *(volatile unsigned long long *)(op->full + e) = c + 1;
      } else {
        *(volatile unsigned long long *)(op->free + e) = c + 1;
      }
      SDMA_FENCE_SYSTEM();
    }
  }
}
