//===- DmaQueueWalk.h - a plan queue as copy-engine operations ---*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the CUDA and HIP copy-engine executors share: the operations one
// plan queue becomes on a stream. Flags only grow: flag f of rank r is
// written by one queue, so run n's k-th notify writes n x (notifies per run)
// + k and a poll waits for its value shifted the same way; the launch poll
// (enqueueing is the launch) and completion notifies (the host joins the
// streams) are not issued. Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_DMAQUEUEWALK_H
#define SDMA_RUNTIME_LIB_DMAQUEUEWALK_H

#include "sdma/runtime/Plan.h"

#include <string>
#include <vector>

namespace sdma::rt {

/// notifies[rank][flag]: how many notifies reach each flag in one run.
inline std::vector<std::vector<int64_t>> notifiesPerRun(const Plan &plan) {
  std::vector<std::vector<int64_t>> n(plan.ranks,
                                      std::vector<int64_t>(plan.flags, 0));
  for (const Stream &stream : plan.streams)
    for (const Command &command : stream.commands)
      if (command.kind == Command::Kind::Notify)
        ++n[command.target][command.flag];
  return n;
}

/// Calls, in order, for queue `q` of run `epoch`:
///   sink.copy(dst, src)            a copy (a bcast is two)
///   sink.swap(a, b)                an in-place exchange
///   sink.notify(rank, flag, value) write `value` to a peer's flag
///   sink.poll(flag, value)         wait until this rank's flag >= value
/// stopping at the first that returns false.
template <typename Sink>
bool walkQueue(const Plan &plan, size_t q, uint64_t epoch,
               const std::vector<std::vector<int64_t>> &perRun, Sink &sink) {
  const Stream &stream = plan.streams[q];
  std::vector<int64_t> sent(plan.ranks * plan.flags, 0);
  for (const Command &c : stream.commands) {
    switch (c.kind) {
    case Command::Kind::Copy:
      if (!sink.copy(c.slices[1], c.slices[0]))
        return false;
      break;
    case Command::Kind::Bcast:
      if (!sink.copy(c.slices[1], c.slices[0]) ||
          !sink.copy(c.slices[2], c.slices[0]))
        return false;
      break;
    case Command::Kind::Swap:
      if (!sink.swap(c.slices[0], c.slices[1]))
        return false;
      break;
    case Command::Kind::Notify: {
      if (c.flag == kDoneFlag)
        break;
      int64_t k = ++sent[c.target * plan.flags + c.flag];
      if (!sink.notify(c.target, c.flag,
                       epoch * perRun[c.target][c.flag] + uint64_t(k)))
        return false;
      break;
    }
    case Command::Kind::Poll:
      if (c.flag == kLaunchFlag)
        break;
      if (!sink.poll(c.flag,
                     epoch * perRun[stream.rank][c.flag] + uint64_t(c.value)))
        return false;
      break;
    }
  }
  return true;
}

/// What an unfinished queue `q` of run `epoch` may be waiting for: "queue
/// 2 (rank 1, engine 0) did not finish; it waits at one of: flag 3 >= 2,
/// flag 5 >= 2". (Reading the flags would need the GPU, whose queues are
/// blocked: the executors do not.)
inline std::string
describeUnfinishedQueue(const Plan &plan, size_t q, uint64_t epoch,
                        const std::vector<std::vector<int64_t>> &perRun) {
  const Stream &stream = plan.streams[q];
  std::string polls;
  for (const Command &c : stream.commands)
    if (c.kind == Command::Kind::Poll && c.flag != kLaunchFlag)
      polls += (polls.empty() ? "" : ", ") + std::string("flag ") +
               std::to_string(c.flag) + " >= " +
               std::to_string(epoch * perRun[stream.rank][c.flag] +
                              static_cast<uint64_t>(c.value));
  return "queue " + std::to_string(q) + " (rank " +
         std::to_string(stream.rank) + ", engine " +
         std::to_string(stream.engine) + ") did not finish" +
         (polls.empty() ? "" : "; it waits at one of: " + polls);
}

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_DMAQUEUEWALK_H
