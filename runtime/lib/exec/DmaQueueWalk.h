//===- DmaQueueWalk.h - a plan queue as copy-engine operations ---*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the CUDA and HIP copy-engine executors share: the operations a range
// of one plan queue's commands becomes on a stream, in the order and with
// the events of DmaQueueSchedule.h. Where a notify/poll pair stays a flag
// operation (the notifier is in another process), flags only grow: flag f
// of rank r is written by one queue, so run n's k-th notify writes n x
// (notifies per run) + k and a poll waits for its value shifted the same
// way. The launch poll (enqueueing is the launch) and completion notifies
// (the host joins the streams) are not issued. Internal to the runtime
// library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_EXEC_DMAQUEUEWALK_H
#define SDMA_RUNTIME_LIB_EXEC_DMAQUEUEWALK_H

#include "exec/DmaQueueSchedule.h"
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

/// Calls, in order, for commands [begin, end) of queue `q` of run `epoch`:
///   sink.copy(dst, src)            a copy (a bcast is two)
///   sink.swap(a, b)                an in-place exchange
///   sink.notify(rank, flag, value) write `value` to a peer's flag
///   sink.poll(flag, value)         wait until this rank's flag >= value
/// stopping at the first that returns false. Notifies and polls are issued
/// only where the schedule makes them flag operations (the others are
/// events, or nothing); copies of a slice onto itself and swaps of a slice
/// with itself move nothing and are skipped.
template <typename Sink>
bool walkCommands(const Plan &plan, const DmaSchedule &schedule, size_t q,
                  size_t begin, size_t end, uint64_t epoch,
                  const std::vector<std::vector<int64_t>> &perRun, Sink &sink) {
  const Stream &stream = plan.streams[q];
  for (size_t i = begin; i < end; ++i) {
    const Command &c = stream.commands[i];
    int64_t value = schedule.flagValue[q][i];
    switch (c.kind) {
    case Command::Kind::Copy:
      if (!isSelfCopy(c.slices[1], c.slices[0]) &&
          !sink.copy(c.slices[1], c.slices[0]))
        return false;
      break;
    case Command::Kind::Bcast:
      for (int d : {1, 2})
        if (!isSelfCopy(c.slices[d], c.slices[0]) &&
            !sink.copy(c.slices[d], c.slices[0]))
          return false;
      break;
    case Command::Kind::Swap:
      if (!isSelfCopy(c.slices[0], c.slices[1]) &&
          !sink.swap(c.slices[0], c.slices[1]))
        return false;
      break;
    case Command::Kind::Notify:
      if (value != DmaSchedule::kNoFlagOp &&
          !sink.notify(c.target, c.flag,
                       epoch * perRun[c.target][c.flag] + uint64_t(value)))
        return false;
      break;
    case Command::Kind::Poll:
      if (value != DmaSchedule::kNoFlagOp &&
          !sink.poll(c.flag,
                     epoch * perRun[stream.rank][c.flag] + uint64_t(value)))
        return false;
      break;
    }
  }
  return true;
}

/// What an unfinished queue `q` of run `epoch` may be waiting for: "queue
/// 2 (rank 1, engine 0) did not finish; it waits at one of: flag 3 >= 2
/// (value wait), flag 5 >= 1 (event)". (Reading the flags would need the
/// GPU, whose queues are blocked: the executors do not.)
inline std::string
describeUnfinishedQueue(const Plan &plan, const DmaSchedule &schedule, size_t q,
                        uint64_t epoch,
                        const std::vector<std::vector<int64_t>> &perRun) {
  const Stream &stream = plan.streams[q];
  std::string polls;
  for (size_t i = 0; i < stream.commands.size(); ++i) {
    const Command &c = stream.commands[i];
    if (c.kind != Command::Kind::Poll || c.flag == kLaunchFlag || c.value <= 0)
      continue;
    bool value = schedule.flagValue[q][i] != DmaSchedule::kNoFlagOp;
    polls += (polls.empty() ? "" : ", ") + std::string("flag ") +
             std::to_string(c.flag) + " >= " +
             std::to_string(value ? epoch * perRun[stream.rank][c.flag] +
                                        uint64_t(c.value)
                                  : uint64_t(c.value)) +
             (value ? " (value wait)" : " (event)");
  }
  return detail::queueName(plan, q) + " did not finish" +
         (polls.empty() ? "" : "; it waits at one of: " + polls);
}

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_EXEC_DMAQUEUEWALK_H
