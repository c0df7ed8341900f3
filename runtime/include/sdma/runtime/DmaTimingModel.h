//===- DmaTimingModel.h - predicted time of a plan on DMA engines -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// DMA-Latte splits a DMA command's time into control (writing the packet),
// schedule (doorbell and fetch), copy and sync (the completion signal the
// host waits for). The model replays a plan's queues with those costs:
//   - submission, in one of two modes:
//     host (DMA-Latte): per rank, the host writes every command (control)
//       and rings each queue's doorbell (schedule), one after the other;
//       with prelaunch both happen before the collective and leave the
//       critical path;
//     gpu (GPU-initiated, as mori and rocSHMEM do it): a kernel is
//       launched, then one wavefront per queue writes that queue's packets
//       and rings its doorbell, all queues in parallel: every queue starts
//       after the launch, a fixed dispatch and its own packet writes (the
//       writes leave the critical path with prelaunch);
//   - an engine runs its queue in order: start-up when it starts from idle
//     (or after a poll), a cost per command (packet), then bytes at the
//     engine's rate, shared with the other copies over the same link; a
//     broadcast writes its two destinations, and a swap moves both
//     directions, through the one engine (twice the bytes);
//   - a notify costs an engine atomic; a poll holds its queue until the
//     flag's value-th notify has landed;
//   - completion: in host mode the host polls every completion signal of
//     its rank in turn, so back-to-back batches (one signal) cost one poll
//     where pcpy costs N; in gpu mode a wavefront of the rank spins on its
//     completion counter and sees the last signal land once.
// A profile may also describe the GPU's load/store copy kernel (the
// compute-unit alternative to DMA): predictLdstTime().
// Parameters come from a JSON profile that cites its sources
// (runtime/profiles/mi300x-sdma.json, runtime/profiles/*-sdma-gpu.json).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_DMATIMINGMODEL_H
#define SDMA_RUNTIME_DMATIMINGMODEL_H

#include "sdma/runtime/Plan.h"

namespace sdma::rt {

/// Who writes the packets and rings the doorbells.
enum class DmaSubmission { Host, Gpu };

/// "host" or "gpu".
const char *submissionName(DmaSubmission submission);

/// A load/store copy kernel (compute units move the bytes): one launch, one
/// cross-rank synchronisation, then every rank's bytes at the rates below.
struct LdstTimingProfile {
  double launchUs = 0, syncUs = 0;
  /// Bytes a rank's kernel writes to its peers, all links together.
  double peerGBps = 1;
  /// Bytes copied within a GPU.
  double localGBps = 1;
};

struct DmaTimingProfile {
  std::string target;
  /// The mode predictDmaTime() uses; the profile's "submission" (default
  /// host).
  DmaSubmission submission = DmaSubmission::Host;
  /// Host submission (DMA-Latte); present when hasHost.
  bool hasHost = false;
  double controlUs = 0, scheduleUs = 0, hostSyncUs = 0;
  /// GPU-initiated submission; present when hasGpu.
  bool hasGpu = false;
  double kernelLaunchUs = 0, dispatchUs = 0, gpuPacketUs = 0, gpuPollUs = 0;
  /// The engines, whoever submits.
  double engineStartupUs = 0, perCommandUs = 0, engineAtomicUs = 0;
  double engineGBps = 1, linkGBps = 1;
  int enginesPerGpu = 1;
  /// The load/store copy kernel of the same GPU, if the profile has one.
  std::optional<LdstTimingProfile> ldst;

  /// This profile predicting in `mode`, or std::nullopt with `error` when
  /// it lacks that mode's parameters.
  std::optional<DmaTimingProfile> withSubmission(DmaSubmission mode,
                                                 std::string &error) const;

  static std::optional<DmaTimingProfile> load(const std::string &path,
                                              std::string &error);
  /// The same from the JSON text; errors name the JSON path
  /// ("invalid dma timing profile: $.target: expected a string").
  static std::optional<DmaTimingProfile> parse(std::string_view text,
                                               std::string &error);
};

/// Predicted microseconds for one run of `plan` at `chunkBytes` in the
/// profile's submission mode, or std::nullopt with `error` if a poll can
/// never be satisfied.
std::optional<double> predictDmaTime(const Plan &plan, size_t chunkBytes,
                                     const DmaTimingProfile &profile,
                                     std::string &error);

/// Predicted microseconds for a load/store kernel that moves the bytes of
/// `plan`'s copies at `chunkBytes` (each copy written by its source rank's
/// compute units; a broadcast to both destinations, a swap both ways):
/// launch + sync + the busiest rank's time, where a rank's time is the
/// largest of its peer bytes at peer_GBps, its local bytes at local_GBps
/// and its busiest link's bytes at the profile's link_GBps. One
/// synchronisation whatever the plan's waits: a plan whose copies depend on
/// other ranks' (a ring) is predicted too fast.
double predictLdstTime(const Plan &plan, size_t chunkBytes,
                       const LdstTimingProfile &ldst, double linkGBps);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_DMATIMINGMODEL_H
