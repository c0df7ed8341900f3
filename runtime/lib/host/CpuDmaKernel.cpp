//===- CpuDmaKernel.cpp - the CPU device's DMA engines --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/CpuDmaKernel.h"

#include "exec/DmaQueueWalk.h"
#include "host/CpuCallSync.h"

#include <cstring>
#include <system_error>
#include <thread>

using namespace sdma::rt;

namespace {

/// One launch of one rank: the table, the waits and the error record.
class Run : public CpuCallSync {
public:
  // The per-run counts are made here, before the engine threads start:
  // made lazily by the first queue() they were a race between engines (one
  // thread reallocating them under another's walk).
  Run(const DmaProgram &program, const LaunchTable &table, size_t chunk)
      : CpuCallSync(program.rank, program.plan.ranks, table), P(program),
        chunk_(chunk), B(program.plan.buffers.size()),
        perRun_(size_t(program.plan.ranks),
                std::vector<int64_t>(size_t(program.plan.flags), 0)) {}

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
  size_t chunk_, B;
  const std::vector<std::vector<int64_t>> perRun_;
};

class CpuDmaKernel : public CommKernel {
public:
  /// A CPU launch runs before it returns: no stream queues it.
  bool queuesOnStream() const override { return false; }
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
    uint64_t epoch = CpuCallSync::load(T.epochs);
    if (!run.barrier(0, epoch))
      return failed(run, error);
    if (!engines(run, error))
      return false;
    if (run.aborted() || !run.barrier(1, epoch))
      return failed(run, error);
    // Every notify into this rank's flags was made before its notifier
    // arrived at the exit barrier (DmaProgram.h, step 4).
    run.finish(P.plan.flags, epoch);
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
