//===- DmaTimingModel.h - predicted time of a plan on DMA engines -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// DMA-Latte splits a DMA command's time into control (writing the packet),
// schedule (doorbell and fetch), copy and sync (the completion signal the
// host waits for). The model replays a plan's queues with those costs:
//   - per rank, the host writes every command (control) and rings each
//     queue's doorbell (schedule), one after the other; with prelaunch both
//     happen before the collective and leave the critical path;
//   - an engine runs its queue in order: start-up when it starts from idle
//     (or after a poll), a small cost per command, then bytes at the
//     engine's rate, shared with the other copies over the same link; a
//     broadcast writes its two destinations, and a swap moves both
//     directions, through the one engine (twice the bytes);
//   - a notify costs an engine atomic; a poll holds its queue until the
//     flag's value-th notify has landed;
//   - the host then polls every completion signal of its rank in turn, so
//     back-to-back batches (one signal) cost one poll where pcpy costs N.
// Parameters come from a JSON profile that cites its sources
// (runtime/profiles/mi300x-sdma.json).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_DMATIMINGMODEL_H
#define SDMA_RUNTIME_DMATIMINGMODEL_H

#include "sdma/runtime/Plan.h"

namespace sdma::rt {

struct DmaTimingProfile {
  std::string target;
  double controlUs = 0, scheduleUs = 0, engineStartupUs = 0, perCommandUs = 0,
         engineAtomicUs = 0, hostSyncUs = 0;
  double engineGBps = 1, linkGBps = 1;
  int enginesPerGpu = 1;

  static std::optional<DmaTimingProfile> load(const std::string &path,
                                              std::string &error);
  /// The same from the JSON text; errors name the JSON path
  /// ("invalid dma timing profile: $.target: expected a string").
  static std::optional<DmaTimingProfile> parse(std::string_view text,
                                               std::string &error);
};

/// Predicted microseconds for one run of `plan` at `chunkBytes`, or
/// std::nullopt with `error` if a poll can never be satisfied.
std::optional<double> predictDmaTime(const Plan &plan, size_t chunkBytes,
                                     const DmaTimingProfile &profile,
                                     std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_DMATIMINGMODEL_H
