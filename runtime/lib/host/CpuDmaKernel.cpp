//===- CpuDmaKernel.cpp - the CPU device's DMA engines --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/CpuDmaKernel.h"

#include "exec/DmaQueueWalk.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <sched.h>
#include <system_error>
#include <thread>

using namespace sdma::rt;

namespace {

uint64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t load(const unsigned long long *word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// One launch of one rank: the table, the waits and the error record.
class Run {
public:
  // The per-run counts are made here, before the engine threads start:
  // made lazily by the first queue() they were a race between engines (one
  // thread reallocating them under another's walk).
  Run(const DmaProgram &program, const LaunchTable &table, size_t chunk)
      : P(program), T(table), chunk_(chunk), B(program.plan.buffers.size()),
        perRun_(size_t(program.plan.ranks),
                std::vector<int64_t>(size_t(program.plan.flags), 0)) {}

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
    T.error[1] = uint64_t(P.rank);
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
    int R = P.plan.ranks;
    bool tagged = phase == 0 && !T.tags.empty() && T.tags[0];
    if (tagged)
      for (int r = 0; r < R; ++r)
        __atomic_store_n(T.tags[r] + P.rank, T.callTag, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int r = 0; r < R; ++r)
      __atomic_fetch_add(T.arrive[r] + phase * R + P.rank, 1ull,
                         __ATOMIC_SEQ_CST);
    for (int r = 0; r < R; ++r)
      if (!wait(T.arrive[P.rank] + phase * R + r, epoch + 1, -2 - phase,
                uint64_t(r)))
        return false;
    for (int r = 0; tagged && r < R; ++r)
      if (uint64_t theirs = load(T.tags[P.rank] + r); theirs != T.callTag) {
        report(-4, uint64_t(r), theirs);
        return false;
      }
    return true;
  }

  /// A slice's bytes, or null (an internal error: the table lacks it).
  char *address(const Slice &s) const {
    char *base = T.buffers[size_t(s.rank) * B + s.buffer];
    return base ? base + uint64_t(s.offset) * chunk_ : nullptr;
  }

  /// "" if every slice of this rank's queues has an address, else what
  /// lacks one (an internal error: DmaProgram::create checked the plan
  /// touches only what the table holds).
  std::string missing() const {
    for (size_t q : P.queues)
      for (const Command &c : P.plan.streams[q].commands) {
        int n = c.sliceCount();
        for (int i = 0; i < n; ++i)
          if (!address(c.slices[i]))
            return "internal: the launch table has no address for buffer '" +
                   P.plan.buffers[c.slices[i].buffer].name + "' of rank " +
                   std::to_string(c.slices[i].rank);
      }
    return "";
  }

  // The sink of walkCommands: one engine's operations (addresses checked
  // by missing()).
  bool copy(const Slice &dst, const Slice &src) {
    std::memmove(address(dst), address(src), uint64_t(src.count) * chunk_);
    return !aborted();
  }
  bool swap(const Slice &a, const Slice &b) {
    char *x = address(a), *y = address(b);
    char staged[4096];
    for (uint64_t n = uint64_t(a.count) * chunk_, at = 0; at < n;) {
      size_t step = std::min<uint64_t>(sizeof(staged), n - at);
      std::memcpy(staged, x + at, step);
      std::memcpy(x + at, y + at, step);
      std::memcpy(y + at, staged, step);
      at += step;
    }
    return !aborted();
  }
  /// Not once the call has failed: peers then fail too rather than finish.
  bool notify(int rank, int flag, uint64_t value) {
    if (aborted())
      return false;
    __atomic_store_n(T.flags[rank] + flag, value, __ATOMIC_RELEASE);
    return true;
  }
  bool poll(int flag, uint64_t value) {
    return wait(T.flags[P.rank] + flag, value, dmaFlagSlot(flag));
  }

  /// Runs queue `q` (plan.streams[q]) to its end.
  void queue(size_t q) {
    walkCommands(P.plan, P.schedule, q, 0, P.plan.streams[q].commands.size(), 0,
                 perRun(), *this);
  }

private:
  /// Epoch 0 always (flags are reset per call): the counts are unused.
  const std::vector<std::vector<int64_t>> &perRun() const { return perRun_; }

  const DmaProgram &P;
  const LaunchTable &T;
  size_t chunk_, B;
  const std::vector<std::vector<int64_t>> perRun_;
};

class CpuDmaKernel : public CommKernel {
public:
  explicit CpuDmaKernel(std::shared_ptr<const DmaProgram> program)
      : program_(std::move(program)) {}

  bool launch(const KernelLaunch &launch, std::string &error) override {
    const DmaProgram &P = *program_;
    LaunchTable T;
    if (!P.decode(launch, T, error))
      return false;
    Run run(P, T, launch.chunkBytes);
    if (std::string why = run.missing(); !why.empty()) {
      error = why;
      return false;
    }
    uint64_t epoch = load(T.epochs);
    if (!run.barrier(0, epoch))
      return failed(run, error);
    if (!engines(run, error))
      return false;
    if (run.aborted() || !run.barrier(1, epoch))
      return failed(run, error);
    // Every notify into this rank's flags was made before its notifier
    // arrived at the exit barrier (DmaProgram.h, step 4).
    for (int f = 0; f < P.plan.flags; ++f)
      __atomic_store_n(T.flags[P.rank] + f, 0ull, __ATOMIC_RELAXED);
    __atomic_store_n(T.epochs, epoch + 1, __ATOMIC_SEQ_CST);
    return true;
  }

private:
  /// The rank's queues side by side, a thread each (one in this thread).
  bool engines(Run &run, std::string &error) {
    const std::vector<size_t> &queues = program_->queues;
    std::vector<std::thread> threads;
    std::string cannot;
    for (size_t i = 1; i < queues.size(); ++i) {
      try {
        threads.emplace_back([&run, q = queues[i]] { run.queue(q); });
      } catch (const std::system_error &e) {
        cannot = e.what();
        run.report(kDmaStoppedSlot, 0, 0);
        break;
      }
    }
    if (cannot.empty() && !queues.empty())
      run.queue(queues[0]);
    for (std::thread &t : threads)
      t.join();
    if (!cannot.empty()) {
      error = "cannot start the DMA engines' host threads: " + cannot;
      return false;
    }
    return run.aborted() ? failed(run, error) : true;
  }

  /// The record names the failure (Launcher::kernelError decodes it).
  static bool failed(const Run &run, std::string &error) {
    (void)run;
    error = "a wait of the DMA path failed (its error record says which)";
    return false;
  }

  std::shared_ptr<const DmaProgram> program_;
};

} // namespace

std::unique_ptr<CommKernel>
sdma::rt::createCpuDmaKernel(std::shared_ptr<const DmaProgram> program) {
  return std::make_unique<CpuDmaKernel>(std::move(program));
}
