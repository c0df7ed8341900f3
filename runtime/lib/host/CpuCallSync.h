//===- CpuCallSync.h - a CPU-device DMA call's waits and barriers -*- C++ -*-=//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the CPU device's two DMA paths (CpuDmaKernel: the plan's commands on
// host-thread engines; CpuRingKernel: its SDMA packets through rings) share
// of one launch of one rank: the bounded waits, the error record (written
// as the kernel's sdma_report writes it: the first failure only) and the
// job barriers of DmaProgram.h's protocol, with the call check at the entry.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_CPUCALLSYNC_H
#define SDMA_RUNTIME_LIB_HOST_CPUCALLSYNC_H

#include "comm/DmaProgram.h"

#include <chrono>
#include <optional>
#include <sched.h>

namespace sdma::rt {

class CpuCallSync {
public:
  CpuCallSync(int rank, int ranks, const LaunchTable &table)
      : rank_(rank), ranks_(ranks), T(table) {}

  static uint64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static uint64_t load(const unsigned long long *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
  }

  uint64_t timeoutNs() const { return T.timeoutNs; }

  /// Nonzero once any wait of this communicator's program failed, or the
  /// communicator was aborted (the kernel's sdma_aborted).
  bool aborted() const { return load(T.error) != 0; }

  /// The record, as the kernel's sdma_report writes it: the first failure
  /// only.
  void report(int64_t slot, uint64_t value, uint64_t seen) {
    unsigned long long zero = 0;
    if (!__atomic_compare_exchange_n(T.error, &zero, 1ull, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      return;
    T.error[1] = uint64_t(rank_);
    T.error[2] = uint64_t(slot);
    T.error[3] = value;
    T.error[4] = seen;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
  }

  /// Spins until *word >= value; false (reported as `slot`, awaiting
  /// `value`, or `awaited` where given) at the timeout or an abort.
  bool wait(const unsigned long long *word, uint64_t value, int64_t slot,
            std::optional<uint64_t> awaited = std::nullopt) {
    uint64_t start = nowNs(), seen;
    for (unsigned spins = 0; (seen = load(word)) < value; ++spins) {
      if (aborted())
        return false;
      if (spins % 64 == 63 && nowNs() - start > T.timeoutNs) {
        report(slot, awaited ? *awaited : value, seen);
        return false;
      }
      sched_yield();
    }
    return true;
  }

  /// Job barrier `phase` of run `epoch` (LdstKernel.hip's sdma_job_barrier).
  /// With phase 0, the call's tag is written to every rank before the
  /// arrival and every rank's compared after it (slot -4 on a difference).
  bool barrier(int phase, uint64_t epoch) {
    const int R = ranks_;
    bool tagged = phase == 0 && !T.tags.empty() && T.tags[0];
    if (tagged)
      for (int r = 0; r < R; ++r)
        __atomic_store_n(T.tags[r] + rank_, T.callTag, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int r = 0; r < R; ++r)
      __atomic_fetch_add(T.arrive[r] + phase * R + rank_, 1ull,
                         __ATOMIC_SEQ_CST);
    for (int r = 0; r < R; ++r)
      if (!wait(T.arrive[rank_] + phase * R + r, epoch + 1, -2 - phase,
                PeerWait::encode(uint64_t(r), epoch + 1)))
        return false;
    for (int r = 0; tagged && r < R; ++r)
      if (uint64_t theirs = load(T.tags[rank_] + r); theirs != T.callTag) {
        report(-4, uint64_t(r), theirs);
        return false;
      }
    return true;
  }

  /// After the exit barrier: zeroes the rank's `slots` DMA flags (every
  /// notify into them was made before its notifier arrived there) and
  /// advances the run counter from `epoch`.
  void finish(int slots, uint64_t epoch) {
    for (int f = 0; f < slots; ++f)
      __atomic_store_n(T.flags[rank_] + f, 0ull, __ATOMIC_RELAXED);
    __atomic_store_n(T.epochs, epoch + 1, __ATOMIC_SEQ_CST);
  }

protected:
  const int rank_, ranks_;
  const LaunchTable &T;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_CPUCALLSYNC_H
