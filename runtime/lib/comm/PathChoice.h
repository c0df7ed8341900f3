//===- PathChoice.h - load/store or DMA, per call ---------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Which path a collective call takes, and why (Communicator::lastPath
// reports it; SDMA_PATH_LOG=1 prints each new decision):
//   - a collective without a DMA plan (a reduction, an all-to-allv, a
//     program loaded as a program) runs on the load/store kernel, whatever
//     was asked;
//   - CommOptions::path "ldst" or "dma" (SDMA_PATH) forces the path (with
//     "dma", calls of chunks below dmaMinBytes, SDMA_DMA_MIN_BYTES, take
//     load/store); a forced DMA path that cannot be built fails the call,
//     naming why;
//   - "auto" on a device whose DMA path may be picked by the cost model
//     (CommDevice::dmaByCostModel: CUDA) takes costModelPath's pick: the
//     NVIDIA cost model (NvTimingModel.h, the profile built in) at the
//     call's chunk where each rank has a GPU of its own and the profile
//     was fitted on that many GPUs; elsewhere it takes load/store: the CPU
//     device (its DMA engines are host threads, there to test the path)
//     and the HIP device (its DMA path has not run on an AMD GPU);
//   - on load/store, a program the compiler planned low-latency calls for
//     (LdstLowLatency.hip) runs a call without job barriers where the
//     bytes one rank sends another are at most lowLatencyBytes
//     (SDMA_LL_BYTES), an eighth of it for a reduction, never a premulsum
//     (the reason says "low-latency").
// The decision depends only on what every rank shares (the schedule, the
// chunk, the options), and the launcher agrees on it across ranks with the
// call's signature, so a rank configured otherwise is refused by name.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_PATHCHOICE_H
#define SDMA_RUNTIME_LIB_COMM_PATHCHOICE_H

#include "comm/ProgramCache.h"
#include "sdma/runtime/NvTimingModel.h"

#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace sdma::rt {

struct PathChoice {
  bool dma = false;
  /// "dma pcpy (SDMA_PATH=dma)", "ldst (auto: ...)".
  std::string why;
  /// The load/store kernel's low-latency call (no job barrier): a program
  /// planned for it whose call fits CommOptions::lowLatencyBytes.
  bool lowLatency = false;
};

/// Why auto cannot pick the copy engines for `ranks` on `devices` GPUs by
/// `profile` (null: `profileError` says why), known before any plan is
/// built; "" where it may. It cannot where ranks share a GPU (copies
/// between ranks of one GPU run on SMs either way, so the engines free
/// nothing and cost their commands) or where the profile has no fit of its
/// own for `devices` GPUs (its joint fit mispredicts GPU counts it was not
/// fitted on: bench/results/cost-model-h200x4-out-of-sample.md).
std::string costModelRefusal(const NvTimingProfile *profile,
                             const std::string &profileError, int ranks,
                             int devices);

/// Auto's pick for a call of `plan` (its DMA variant `variant`) at
/// `chunkBytes`: load/store with costModelRefusal's reason, else the
/// faster of the profile's predictions for the load/store kernel and the
/// copy engines (plain, or batched where `batched`: the DMA path batches),
/// each plus the communicator's extra on
/// that path (NvTimingProfile::communicatorExtra), both in the reason.
PathChoice costModelPath(const NvTimingProfile *profile,
                         const std::string &profileError, const Plan &plan,
                         const std::string &variant, size_t chunkBytes,
                         int ranks, int devices, bool batched = true);

class PathChooser {
public:
  PathChooser(const CommOptions &options, CommDevice &device,
              ProgramCache &programs, int devices)
      : options_(options), device_(device), programs_(programs),
        devices_(devices) {}

  /// The path of a call of instance `index` at `chunkBytes` bytes per
  /// chunk whose buffers are all `baseAlign`-byte aligned (a power of two,
  /// at most 256). Collective where it adds the DMA path (the first call of
  /// an instance that may take it). False only where the call must fail: a
  /// forced DMA path that cannot be added.
  bool choose(int index, size_t chunkBytes, unsigned baseAlign,
              PathChoice &choice, Error &error);

private:
  /// The built-in profile, parsed on first use; null with profileError_.
  const NvTimingProfile *profile();

  const CommOptions &options_;
  CommDevice &device_;
  ProgramCache &programs_;
  int devices_;
  std::mutex mutex_; // decided_ and the profile: calls from any thread
  std::map<std::tuple<int, size_t, unsigned>, PathChoice> decided_;
  std::optional<NvTimingProfile> profile_;
  std::string profileError_;
  bool profileTried_ = false;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_PATHCHOICE_H
