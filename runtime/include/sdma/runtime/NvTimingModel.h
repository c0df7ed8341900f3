//===- NvTimingModel.h - predicted time of a plan on NVIDIA GPUs -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The first cost model for NVIDIA: a run's time is a linear function of a
// few features of the plan at a chunk size, with one coefficient set per
// executor, fitted by least squares (non-negative) to the benchmark's
// measured medians (bench/fit_nvidia.py -> runtime/profiles/h200-nvidia.json):
//
//   fixed      1                        launch, fork/join, event overhead
//   queues     engine queues            (CE: a stream forked and joined each)
//   commands   host-issued operations   (CE: each copy, stream memory op;
//                                        ld/st: data ops of the busiest rank)
//   syncs      cross-rank waits on the longest rank's path
//   local_GB   bytes moved within one GPU, busiest GPU (SM copies share HBM)
//   peer_GB    bytes sent to other GPUs, busiest GPU (NVLink, copy engines)
//   queue_GB   CE: bytes of the busiest engine queue (a queue runs its copies
//              one after another; queues run side by side); ld/st: 0
//
// time_us = sum(coefficient x feature). 10^6 / coefficient[local_GB] is the
// fitted same-GPU bandwidth in GB/s, likewise for peer_GB.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_NVTIMINGMODEL_H
#define SDMA_RUNTIME_NVTIMINGMODEL_H

#include "sdma/runtime/Plan.h"

#include <array>
#include <map>

namespace sdma::rt {

/// How a plan is run on NVIDIA GPUs.
enum class NvExecutor { Ldst, Ce, CeBatch, CeGraph };
constexpr int kNvFeatures = 7;
extern const char *const kNvFeatureNames[kNvFeatures];

std::optional<NvExecutor> parseNvExecutor(std::string_view name);
const char *nvExecutorName(NvExecutor executor);

/// The features of one run of `plan` at `chunkBytes` with its ranks spread
/// over `devices` GPUs in contiguous groups (as CudaOptions::devices does).
std::array<double, kNvFeatures> nvFeatures(const Plan &plan, size_t chunkBytes,
                                           NvExecutor executor, int devices);

/// Whether some queue of `plan` has two copies in a row (what ce-batch
/// issues as one cuMemcpyBatchAsync).
bool nvBatchApplies(const Plan &plan);

struct NvTimingProfile {
  using Coefficients = std::map<NvExecutor, std::array<double, kNvFeatures>>;
  std::string target;
  /// Fitted on every machine size together ("executors").
  Coefficients coefficients;
  /// Fitted on one machine size each ("by_devices": {"4": {"executors":
  /// ...}}): the fixed costs of launching and joining grow with the GPU
  /// count in ways the features do not carry, so a fit per size picks
  /// better where there is one.
  std::map<int, Coefficients> byDevices;
  /// What the communicator's call adds to an executor's predicted time on
  /// that path ("communicator": {"ldst": us, "ce": us, "ce-batch": us}):
  /// its job barriers, the DMA path's sync kernels and forked streams.
  /// Measured on one GPU (bench/fit_comm.py); absent: 0.
  std::map<NvExecutor, double> communicatorExtra;
  double communicatorExtraFor(NvExecutor executor) const {
    auto it = communicatorExtra.find(executor);
    return it == communicatorExtra.end() ? 0.0 : it->second;
  }

  static std::optional<NvTimingProfile> load(const std::string &path,
                                             std::string &error);
  /// The same from the JSON text; errors name the JSON path.
  static std::optional<NvTimingProfile> parse(const std::string &text,
                                              std::string &error);
  /// The coefficients for ranks spread over `devices` GPUs: that size's
  /// own fit if the profile has one, else the joint fit.
  const Coefficients &coefficientsFor(int devices) const;
  /// Predicted microseconds, or std::nullopt (the reason in `why`, if
  /// given) if the profile has no coefficients for `executor` (at that
  /// size) or the executor does not apply (ce-batch on a plan where no
  /// queue has two copies in a row: batching would change nothing, and the
  /// fit has never seen such a plan).
  std::optional<double> predict(const Plan &plan, size_t chunkBytes,
                                NvExecutor executor, int devices,
                                std::string *why = nullptr) const;

  /// The (candidate plan, executor) predicted fastest at `chunkBytes` on
  /// `devices` GPUs, or std::nullopt if nothing can be predicted. The
  /// load/store kernel does not depend on the DMA variant: it is costed on
  /// the first candidate only.
  struct Pick {
    size_t candidate = 0;
    NvExecutor executor = NvExecutor::Ldst;
    double microseconds = 0;
  };
  std::optional<Pick> pickFastest(const std::vector<const Plan *> &candidates,
                                  size_t chunkBytes, int devices) const;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_NVTIMINGMODEL_H
