//===- HostExecutors.cpp - the CPU backends as Executors ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/HostExecutors.h"

#include "sdma/runtime/DmaTimingModel.h"

#include <chrono>
#include <cstring>

using namespace sdma::rt;

namespace {

/// Host microseconds since `start`.
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// An executor whose "device memory" is a HostMemory of its own and whose
/// runs happen at launch(). Subclasses say what one run is.
class HostExecutor : public Executor {
public:
  HostExecutor(Plan layout, MemoryBudget budget)
      : layout_(std::move(layout)), budget_(budget) {}

  bool prepare(size_t chunkBytes, std::string &error) override {
    if (chunkBytes == 0) {
      error = name() + ": a chunk of 0 bytes";
      return false;
    }
    if (memory_ && memory_->chunkBytes() != chunkBytes)
      memory_.reset();
    chunk_ = chunkBytes;
    return true;
  }
  bool upload(const HostMemory &memory, std::string &error) override {
    if (!prepared(memory, error) || !ensureMemory(error))
      return false;
    copyBuffers(memory, *memory_);
    return true;
  }
  bool download(HostMemory &memory, std::string &error) override {
    if (!prepared(memory, error) || !ensureMemory(error))
      return false;
    copyBuffers(*memory_, memory);
    return true;
  }
  bool launch(std::string &error) override {
    if (!chunk_) {
      error = name() + ": launch before prepare";
      return false;
    }
    return ensureMemory(error) && runOnce(*memory_, error);
  }
  bool wait(std::string &) override { return true; }
  bool runsInPlace() const override { return true; }
  bool runInPlace(HostMemory &memory, std::string &error) override {
    return prepared(memory, error) && runOnce(memory, error);
  }
  /// Host time of each run.
  bool time(int runs, std::vector<double> &microseconds,
            std::string &error) override {
    microseconds.clear();
    for (int i = 0; i < runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (!run(error))
        return false;
      microseconds.push_back(since(start));
    }
    return true;
  }

protected:
  /// One run over the executor's memory.
  virtual bool runOnce(HostMemory &memory, std::string &error) = 0;

  Plan layout_;
  MemoryBudget budget_;
  size_t chunk_ = 0;
  /// The executor's own buffers, made at the first upload, download or
  /// launch (runs in place need none).
  std::optional<HostMemory> memory_;

private:
  bool ensureMemory(std::string &error) {
    if (!memory_)
      memory_ = HostMemory::create(layout_, chunk_, error, budget_);
    return memory_.has_value();
  }
  /// Whether prepare() ran and `memory` has the executor's buffer layout.
  bool prepared(const HostMemory &memory, std::string &error) const {
    if (!chunk_) {
      error = name() + ": upload or download before prepare";
      return false;
    }
    if (memory.chunkBytes() != chunk_) {
      error = name() + ": host memory of " +
              std::to_string(memory.chunkBytes()) +
              "-byte chunks, prepared for " + std::to_string(chunk_);
      return false;
    }
    return memory.matches(layout_, error, /*withFlags=*/false);
  }
  void copyBuffers(const HostMemory &from, HostMemory &to) const {
    for (int r = 0; r < layout_.ranks; ++r)
      for (size_t b = 0; b < layout_.buffers.size(); ++b)
        if (size_t bytes = from.bufferBytes(r, b))
          std::memcpy(to.buffer(r, b), from.buffer(r, b), bytes);
  }
};

/// sim: the reference simulator; host times.
class SimExecutor : public HostExecutor {
public:
  SimExecutor(const Plan &plan, const SimulatorOptions &options)
      : HostExecutor(plan, options.budget), options_(options) {}
  std::string name() const override { return "sim"; }
  std::string description() const override {
    return "CPU reference simulator; times are host times, not GPU "
           "predictions";
  }

protected:
  bool runOnce(HostMemory &memory, std::string &error) override {
    return simulate(layout_, memory, options_, error);
  }
  SimulatorOptions options_;
};

/// sdma-sim: the simulator's bytes, the DMA model's time.
class DmaModelExecutor : public SimExecutor {
public:
  DmaModelExecutor(const Plan &plan, const SimulatorOptions &options,
                   DmaTimingProfile profile, std::string profilePath)
      : SimExecutor(plan, options), profile_(std::move(profile)),
        profilePath_(std::move(profilePath)) {}
  std::string name() const override { return "sdma-sim"; }
  bool modelTimed() const override { return true; }
  std::string description() const override {
    return "CPU simulator checks the bytes; time predicted by the DMA "
           "timing model for " +
           profile_.target + " (" + profilePath_ + ")";
  }
  bool time(int, std::vector<double> &microseconds,
            std::string &error) override {
    microseconds.clear();
    std::optional<double> us =
        predictDmaTime(layout_, chunk_ ? chunk_ : 1, profile_, error);
    if (!us)
      return false;
    microseconds.push_back(*us);
    return true;
  }

private:
  DmaTimingProfile profile_;
  std::string profilePath_;
};

/// sdma-packets: the packets patched and run on the packet simulator (round
/// robin first, then a seeded random interleaving per run); time predicted
/// by the DMA model over the packets themselves.
class PacketSimExecutor : public HostExecutor {
public:
  PacketSimExecutor(const PacketPlan &packets, const MemoryBudget &budget,
                    DmaTimingProfile profile)
      : HostExecutor(packets.layout(), budget), packets_(packets),
        profile_(std::move(profile)) {}
  std::string name() const override { return "sdma-packets"; }
  bool modelTimed() const override { return true; }
  std::string description() const override {
    return "AMD SDMA packets patched and run on the packet simulator, every "
           "byte compared with the reference simulator; time predicted from "
           "the packets by the DMA timing model for " +
           profile_.target + "; sizes rounded down to the packets' " +
           std::to_string(packets_.chunkAlign) + "-byte chunk alignment";
  }
  size_t chunkAlign() const override { return packets_.chunkAlign; }
  bool time(int, std::vector<double> &microseconds,
            std::string &error) override {
    microseconds.clear();
    size_t chunk = chunk_ ? chunk_ : packets_.chunkAlign;
    std::optional<Plan> lifted = liftPackets(packets_, chunk, error);
    std::optional<double> us =
        lifted ? predictDmaTime(*lifted, chunk, profile_, error) : std::nullopt;
    if (!us) {
      error = "timing the packets: " + error;
      return false;
    }
    microseconds.push_back(*us);
    return true;
  }

protected:
  bool runOnce(HostMemory &memory, std::string &error) override {
    PacketSimOptions options;
    options.seed = runs_++; // round robin first, then random orders
    if (simulatePackets(packets_, memory, options, error))
      return true;
    error = "packet simulator: " + error;
    return false;
  }

private:
  PacketPlan packets_;
  DmaTimingProfile profile_;
  uint64_t runs_ = 0;
};

/// ldst-cpu: the load/store kernel itself, compiled for the host, each GPU
/// thread a host thread; host times.
class LdstCpuBackend : public HostExecutor {
public:
  LdstCpuBackend(const Plan &plan, const LdstCpuOptions &options,
                 std::unique_ptr<LdstCpuExecutor> kernel)
      : HostExecutor(plan, options.budget), options_(options),
        kernel_(std::move(kernel)) {}
  std::string name() const override { return "ldst-cpu"; }
  std::string description() const override {
    return "the load/store kernel itself on the CPU (each of " +
           std::to_string(options_.blocks) + " x " +
           std::to_string(options_.threads) +
           " GPU threads per rank a host thread), every byte compared with "
           "the reference simulator; host times, not GPU times";
  }

protected:
  bool runOnce(HostMemory &memory, std::string &error) override {
    if (kernel_->run(memory, error))
      return true;
    error = "ldst-cpu: " + error;
    return false;
  }

private:
  LdstCpuOptions options_;
  std::unique_ptr<LdstCpuExecutor> kernel_;
};

std::optional<DmaTimingProfile> loadProfile(const ExecutorOptions &options,
                                            std::string &error) {
  if (options.dmaProfile.empty()) {
    error = "no DMA timing profile given (ExecutorOptions::dmaProfile)";
    return std::nullopt;
  }
  return DmaTimingProfile::load(options.dmaProfile, error);
}

} // namespace

std::unique_ptr<Executor>
sdma::rt::createSimExecutor(const CompiledSchedule &compiled,
                            const ExecutorOptions &options, std::string &) {
  return std::make_unique<SimExecutor>(compiled.plan, options.simulator);
}

std::unique_ptr<Executor>
sdma::rt::createDmaModelExecutor(const CompiledSchedule &compiled,
                                 const ExecutorOptions &options,
                                 std::string &error) {
  std::optional<DmaTimingProfile> profile = loadProfile(options, error);
  if (!profile)
    return nullptr;
  return std::make_unique<DmaModelExecutor>(compiled.plan, options.simulator,
                                            std::move(*profile),
                                            options.dmaProfile);
}

std::unique_ptr<Executor>
sdma::rt::createPacketSimExecutor(const CompiledSchedule &compiled,
                                  const ExecutorOptions &options,
                                  std::string &error) {
  std::optional<DmaTimingProfile> profile = loadProfile(options, error);
  if (!profile)
    return nullptr;
  return std::make_unique<PacketSimExecutor>(
      *compiled.packets, options.simulator.budget, std::move(*profile));
}

std::unique_ptr<Executor>
sdma::rt::createLdstCpuExecutor(const CompiledSchedule &compiled,
                                const ExecutorOptions &options,
                                std::string &error) {
  std::unique_ptr<LdstCpuExecutor> kernel =
      LdstCpuExecutor::create(*compiled.ldst, options.cpu, error);
  if (!kernel)
    return nullptr;
  return std::make_unique<LdstCpuBackend>(compiled.plan, options.cpu,
                                          std::move(kernel));
}
