//===- DmaSyncKernel.h - the GPU DMA path's waits ---------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A GPU's DMA path moves bytes with copy-engine copies; what it cannot do
// without a kernel is wait with a bound, or signal only while the call is
// still good. This one-thread kernel is every wait and notify of the
// protocol in
// DmaProgram.h, with the load/store kernel's timeout and error record (and
// its host mirror): op 0 the entry barrier, op 1 the exit barrier and the
// rank's flag reset and run-counter advance, op 2 a poll of one DMA flag,
// op 3 a notify (a peer's flag written). A rank whose call has failed (its
// record set: a wait timed out, the ranks' calls differ, an abort) neither
// arrives at a barrier nor notifies any more, so its peers fail too rather
// than finish on its stale bytes.
// It reads the run number on the device, so a launch replayed from a CUDA
// graph is the next call. Written over the SDMA_* prelude macros
// (LdstPrelude.h): NVRTC and hipRTC compile it alike.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_DMASYNCKERNEL_H
#define SDMA_RUNTIME_LIB_COMM_DMASYNCKERNEL_H

namespace sdma::rt {

/// Ranks a DMA sync launch supports (its argument block holds a pointer
/// per rank).
constexpr int kDmaSyncMaxRanks = 64;

/// SdmaDmaSync as the host fills it: the kernel's argument (by value).
struct DmaSyncArgs {
  unsigned long long *arrive[kDmaSyncMaxRanks]; // [rank]: 2 * ranks words
  unsigned long long *flags;                    // this rank's DMA flags
  unsigned long long *epochs;                   // the run counter
  unsigned long long *error, *errorMirror;
  unsigned long long timeoutNs;
  int rank, ranks, flagCount, pad;
  unsigned long long callTag;                      // LdstKernel.hip's SdmaTable
  unsigned long long *tags[kDmaSyncMaxRanks];      // callTag / tags
  unsigned long long *peerFlags[kDmaSyncMaxRanks]; // every rank's DMA flags
};

static_assert(kDmaSyncMaxRanks == 64,
              "kDmaSyncKernelSource's arrays hold 64 ranks");

/// The sync kernel's operations (its `op` argument).
/// Notify's `flag` argument is (rank << 16) | flag.
enum class DmaSyncOp : int { Enter = 0, Exit = 1, Poll = 2, Notify = 3 };

/// The kernel's source (after a prelude); entry "sdma_dma_sync".
constexpr const char *kDmaSyncKernelSource = R"SDMA(
#ifndef SDMA_SPIN_PAUSE
#define SDMA_SPIN_PAUSE()
#endif
struct SdmaDmaSync {
  unsigned long long *arrive[64]; // [rank]: 2 * ranks words
  unsigned long long *flags;      // this rank's DMA flags
  unsigned long long *epochs;     // this program's run counter (word 0)
  unsigned long long *error;      // the record the kernel polls
  unsigned long long *errorMirror; // its host copy (null: none)
  unsigned long long timeoutNs;
  int rank, ranks, flagCount, pad;
  unsigned long long callTag;
  unsigned long long *tags[64]; // null: unchecked
  unsigned long long *peerFlags[64];
};

static __device__ void sdma_dma_report(const SdmaDmaSync *S, long long slot,
                                       unsigned long long value,
                                       unsigned long long seen) {
  if (SDMA_ATOMIC_CAS_U64(S->error, 0ull, 1ull) != 0ull)
    return;
  unsigned long long *records[2] = {S->error, S->errorMirror};
  for (int i = 0; i < 2; ++i) {
    unsigned long long *r = records[i];
    if (!r)
      continue;
    r[1] = (unsigned long long)S->rank;
    r[2] = (unsigned long long)slot;
    r[3] = value;
    r[4] = seen;
    SDMA_FENCE_SYSTEM();
    if (i == 1)
      *(volatile unsigned long long *)r = 1ull;
  }
  SDMA_FENCE_SYSTEM();
}

// Waits until *word >= value; false (reported) at the timeout or an abort.
static __device__ bool sdma_dma_wait(const SdmaDmaSync *S,
                                     unsigned long long *word,
                                     unsigned long long value, long long slot,
                                     unsigned long long awaited) {
  volatile unsigned long long *w = word;
  unsigned long long start = SDMA_NOW_NS(), seen;
  while ((seen = *w) < value) {
    SDMA_SPIN_PAUSE();
    if (*(volatile unsigned long long *)S->error)
      return false;
    if (SDMA_NOW_NS() - start > S->timeoutNs) {
      sdma_dma_report(S, slot, awaited, seen);
      return false;
    }
  }
  SDMA_FENCE_SYSTEM();
  return true;
}

// Phase 0 also checks the call's tag (LdstKernel.hip's sdma_job_barrier).
static __device__ bool sdma_dma_barrier(const SdmaDmaSync *S, int phase,
                                        unsigned long long epoch) {
  const bool tagged = phase == 0 && S->tags[0];
  if (tagged)
    for (int r = 0; r < S->ranks; ++r)
      ((volatile unsigned long long *)S->tags[r])[S->rank] = S->callTag;
  SDMA_FENCE_SYSTEM();
  for (int r = 0; r < S->ranks; ++r)
    SDMA_ATOMIC_ADD_SYSTEM_U64(S->arrive[r] + phase * S->ranks + S->rank, 1ull);
  for (int r = 0; r < S->ranks; ++r)
    if (!sdma_dma_wait(S, S->arrive[S->rank] + phase * S->ranks + r, epoch + 1,
                       -2 - phase, (unsigned long long)r | (epoch + 1) << 16))
      return false;
  for (int r = 0; tagged && r < S->ranks; ++r) {
    unsigned long long theirs =
        ((volatile const unsigned long long *)S->tags[S->rank])[r];
    if (theirs != S->callTag) {
      sdma_dma_report(S, -4, (unsigned long long)r, theirs);
      return false;
    }
  }
  return true;
}

extern "C" __global__ void sdma_dma_sync(const SDMA_GRID_CONSTANT SdmaDmaSync sync,
                                         int op, int flag,
                                         unsigned long long value) {
  const SdmaDmaSync *S = &sync;
  if (SDMA_TID != 0 || SDMA_BID != 0)
    return;
  if (*(volatile unsigned long long *)S->error)
    return; // the call failed here: no arrival, no notify
  unsigned long long epoch = *(volatile unsigned long long *)S->epochs;
  if (op == 0) {
    sdma_dma_barrier(S, 0, epoch);
  } else if (op == 3) {
    SDMA_FENCE_SYSTEM();
    ((volatile unsigned long long *)S->peerFlags[flag >> 16])[flag & 0xffff] =
        value;
    SDMA_FENCE_SYSTEM();
  } else if (op == 1) {
    if (!sdma_dma_barrier(S, 1, epoch))
      return;
    for (int f = 0; f < S->flagCount; ++f)
      ((volatile unsigned long long *)S->flags)[f] = 0ull;
    SDMA_FENCE_SYSTEM();
    *(volatile unsigned long long *)S->epochs = epoch + 1;
    SDMA_FENCE_SYSTEM();
  } else {
    sdma_dma_wait(S, S->flags + flag, value, -16 - flag, value);
  }
}
)SDMA";

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_DMASYNCKERNEL_H
