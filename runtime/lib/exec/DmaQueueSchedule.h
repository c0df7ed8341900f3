//===- DmaQueueSchedule.h - plan queues enqueued in dependency order -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The order in which a copy-engine executor enqueues a plan's queues, and
// how each notify/poll pair is carried out. Pure: no GPU, tested in CI.
//
// Every flag is written by one queue (insert-sync guarantees it), so a poll
// of flag f of rank r for value k waits for exactly one command: the k-th
// notify of (r, f) by that queue. Within one process that dependency is an
// event: recorded on the notifier's stream right after the notify, waited
// on by the poller's stream at the poll. A stream waits for an event's most
// recent record at the time of the wait call, so the queues are enqueued in
// a topological interleaving: each queue advances until it reaches a poll
// whose event is not recorded yet. Every wait then points backwards in
// enqueue order, and streams that share a hardware queue cannot deadlock (a
// cross-stream spin-wait on a flag can: the wait may sit in the hardware
// queue in front of the write it waits for). A plan no interleaving can
// enqueue is a deadlock, reported before anything is enqueued.
//
// A poll whose notifier is issued by another process (or another device
// engine) stays a value wait on the flag (cuStreamWaitValue64), and the
// notifies of a flag such a poll reads write the flag. The choice is made
// per dependency (DmaScheduleOptions::process).
//
// Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_EXEC_DMAQUEUESCHEDULE_H
#define SDMA_RUNTIME_LIB_EXEC_DMAQUEUESCHEDULE_H

#include "sdma/runtime/Plan.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sdma::rt {

struct DmaScheduleOptions {
  /// Per queue: the process (or device engine) that issues it. Empty: every
  /// queue is issued by this process.
  std::vector<int> process;
  /// The process this schedule is for: only its queues are enqueued.
  int self = 0;
  /// Every dependency a value wait, also within this process (the path a
  /// signaller in another process takes; for testing it on one GPU).
  bool valueWaits = false;
};

struct DmaStep {
  enum class Kind : uint8_t {
    Run,    // commands [begin, end) of `queue` (a queue's runs cover its
            // commands once, in order)
    Record, // record `event` on `queue`'s stream
    Wait    // `queue`'s stream waits for `event`
  };
  Kind kind = Kind::Run;
  size_t queue = 0;
  size_t begin = 0, end = 0;
  size_t event = 0;
};

struct DmaSchedule {
  /// Constant for DmaSchedule::flagValue: the command is not a flag
  /// operation (a data command, the launch poll, a completion notify, a
  /// notify that only events carry, a poll that an event or its own queue's
  /// order satisfies).
  static constexpr int64_t kNoFlagOp = -1;

  std::vector<DmaStep> steps;
  /// [event]: the queue whose stream records it.
  std::vector<size_t> eventQueue;
  /// [queue][command]: for a notify issued as a flag write, its ordinal k
  /// among the notifies of its (rank, flag); for a poll issued as a value
  /// wait, the value it waits for; else kNoFlagOp. Values are per run: run
  /// n adds n x (notifies of the flag per run).
  std::vector<std::vector<int64_t>> flagValue;
  /// Whether any command is a flag operation (the flags need resetting).
  bool usesFlags = false;
};

namespace detail {

inline std::string queueName(const Plan &plan, size_t q) {
  return "queue " + std::to_string(q) + " (rank " +
         std::to_string(plan.streams[q].rank) + ", engine " +
         std::to_string(plan.streams[q].engine) + ")";
}

inline std::string pollName(const Plan &plan, size_t q, size_t i) {
  const Command &c = plan.streams[q].commands[i];
  return "flag " + std::to_string(c.flag) + " of rank " +
         std::to_string(plan.streams[q].rank) +
         " >= " + std::to_string(c.value);
}

/// The notifies of one (rank, flag): the queue that issues them and the
/// command index of each, in order.
struct FlagWriter {
  size_t queue = 0;
  std::vector<size_t> positions;
};

/// Builds the schedule. Steps are appended as queues advance.
class DmaScheduler {
public:
  DmaScheduler(const Plan &plan, const DmaScheduleOptions &options)
      : plan_(plan), options_(options) {}

  std::optional<DmaSchedule> run(std::string &error) {
    size_t Q = plan_.streams.size();
    out_.flagValue.resize(Q);
    eventAt_.resize(Q);
    for (size_t q = 0; q < Q; ++q) {
      out_.flagValue[q].assign(plan_.streams[q].commands.size(),
                               DmaSchedule::kNoFlagOp);
      eventAt_[q].assign(plan_.streams[q].commands.size(), -1);
    }
    if (!collectWriters(error) || !resolvePolls(error))
      return std::nullopt;
    markFlagWrites();
    interleave();
    for (size_t q = 0; q < Q; ++q)
      if (local(q) && cursor_[q] < plan_.streams[q].commands.size()) {
        error = describeDeadlock(q);
        return std::nullopt;
      }
    compact();
    return std::move(out_);
  }

private:
  bool local(size_t q) const {
    return options_.process.empty() || options_.process[q] == options_.self;
  }
  int64_t key(int rank, int flag) const {
    return int64_t(rank) * plan_.flags + flag;
  }

  bool collectWriters(std::string &error) {
    for (size_t q = 0; q < plan_.streams.size(); ++q) {
      const std::vector<Command> &commands = plan_.streams[q].commands;
      for (size_t i = 0; i < commands.size(); ++i) {
        const Command &c = commands[i];
        if (c.kind != Command::Kind::Notify || c.flag == kDoneFlag)
          continue;
        auto [it, fresh] = writers_.try_emplace(key(c.target, c.flag));
        if (fresh)
          it->second.queue = q;
        if (it->second.queue != q) {
          error = "flag " + std::to_string(c.flag) + " of rank " +
                  std::to_string(c.target) + " is notified by " +
                  queueName(plan_, it->second.queue) + " and by " +
                  queueName(plan_, q) +
                  "; the copy-engine executors need one writer per flag";
          return false;
        }
        it->second.positions.push_back(i);
      }
    }
    return true;
  }

  /// Decides for every poll of a local queue: nothing, an event or a value
  /// wait.
  bool resolvePolls(std::string &error) {
    for (size_t q = 0; q < plan_.streams.size(); ++q) {
      const Stream &stream = plan_.streams[q];
      for (size_t i = 0; i < stream.commands.size(); ++i) {
        const Command &c = stream.commands[i];
        if (c.kind != Command::Kind::Poll || c.flag == kLaunchFlag ||
            c.value <= 0)
          continue;
        if (!local(q)) {
          // Another process waits for the value: this one's notifies of
          // the flag must write it.
          if (c.flag != kDoneFlag)
            valueRead_.push_back(key(stream.rank, c.flag));
          continue;
        }
        if (c.flag == kDoneFlag) {
          error = queueName(plan_, q) +
                  " polls the completion flag (flag 1) "
                  "at command " +
                  std::to_string(i) +
                  "; the copy-engine executors leave it to the host";
          return false;
        }
        auto it = writers_.find(key(stream.rank, c.flag));
        size_t sent = it == writers_.end() ? 0 : it->second.positions.size();
        if (uint64_t(c.value) > sent) {
          error =
              "the plan deadlocks: " + queueName(plan_, q) +
              " waits at command " + std::to_string(i) + " for " +
              pollName(plan_, q, i) + ", but the plan notifies it " +
              std::to_string(sent) + " time" + (sent == 1 ? "" : "s") +
              (sent ? " (by " + queueName(plan_, it->second.queue) + ")" : "");
          return false;
        }
        size_t w = it->second.queue;
        size_t p = it->second.positions[c.value - 1];
        if (!local(w) || options_.valueWaits) {
          out_.flagValue[q][i] = c.value;
          valueRead_.push_back(it->first);
          continue;
        }
        if (w == q) {
          if (p < i)
            continue; // this queue's own order already holds
          error = "the plan deadlocks: " + queueName(plan_, q) +
                  " waits at command " + std::to_string(i) + " for " +
                  pollName(plan_, q, i) +
                  ", which only its own later "
                  "command " +
                  std::to_string(p) + " notifies";
          return false;
        }
        eventAt_[q][i] = eventFor(w, p);
      }
    }
    return true;
  }

  int64_t eventFor(size_t w, size_t p) {
    int64_t &e = eventAt_[w][p];
    if (e < 0) {
      e = int64_t(out_.eventQueue.size());
      out_.eventQueue.push_back(w);
      eventPosition_.push_back(p);
    }
    return e;
  }

  /// A local notify writes its flag where some value wait reads it.
  void markFlagWrites() {
    std::sort(valueRead_.begin(), valueRead_.end());
    valueRead_.erase(std::unique(valueRead_.begin(), valueRead_.end()),
                     valueRead_.end());
    for (int64_t k : valueRead_) {
      auto it = writers_.find(k);
      if (it == writers_.end())
        continue;
      const FlagWriter &writer = it->second;
      if (!local(writer.queue))
        continue;
      for (size_t n = 0; n < writer.positions.size(); ++n)
        out_.flagValue[writer.queue][writer.positions[n]] = int64_t(n) + 1;
    }
    for (const std::vector<int64_t> &values : out_.flagValue)
      for (int64_t v : values)
        out_.usesFlags |= v != DmaSchedule::kNoFlagOp;
  }

  void interleave() {
    size_t Q = plan_.streams.size();
    cursor_.assign(Q, 0);
    runStart_.assign(Q, 0);
    recorded_.assign(out_.eventQueue.size(), false);
    waiters_.assign(Q, {});
    std::deque<size_t> work;
    for (size_t q = 0; q < Q; ++q)
      if (local(q))
        work.push_back(q);
    while (!work.empty()) {
      size_t q = work.front();
      work.pop_front();
      // Only a queue that recorded an event can unblock others (waking
      // them otherwise would loop forever around a cycle).
      if (!advance(q))
        continue;
      for (size_t waiter : waiters_[q])
        work.push_back(waiter);
      waiters_[q].clear();
    }
  }

  void endRun(size_t q) {
    if (runStart_[q] < cursor_[q])
      out_.steps.push_back(
          {DmaStep::Kind::Run, q, runStart_[q], cursor_[q], 0});
    runStart_[q] = cursor_[q];
  }

  /// Enqueues queue q up to its end or its first poll whose event is not
  /// recorded yet. Returns whether it recorded an event.
  bool advance(size_t q) {
    bool recordedAny = false;
    const std::vector<Command> &commands = plan_.streams[q].commands;
    size_t &i = cursor_[q];
    while (i < commands.size()) {
      int64_t e = eventAt_[q][i];
      if (e >= 0 && commands[i].kind == Command::Kind::Poll) {
        size_t w = out_.eventQueue[e];
        if (!recorded_[e]) {
          waiters_[w].push_back(q);
          break;
        }
        endRun(q);
        // A wait for an earlier or the same notify of w is already implied.
        auto [it, fresh] = waited_.try_emplace(q * plan_.streams.size() + w,
                                               eventPosition_[e]);
        if (fresh || it->second < eventPosition_[e]) {
          it->second = eventPosition_[e];
          out_.steps.push_back({DmaStep::Kind::Wait, q, 0, 0, size_t(e)});
        }
        ++i; // the poll itself issues nothing; it opens the next run
        continue;
      }
      ++i;
      if (e >= 0) {
        endRun(q);
        out_.steps.push_back({DmaStep::Kind::Record, q, 0, 0, size_t(e)});
        recorded_[e] = true;
        recordedAny = true;
      }
    }
    endRun(q);
    return recordedAny;
  }

  /// Follows the chain of blocked queues from q to a cycle and names it.
  std::string describeDeadlock(size_t q) const {
    std::vector<size_t> chain;
    std::vector<bool> seen(plan_.streams.size(), false);
    while (!seen[q] && local(q) &&
           cursor_[q] < plan_.streams[q].commands.size()) {
      seen[q] = true;
      chain.push_back(q);
      int64_t e = eventAt_[q][cursor_[q]];
      q = out_.eventQueue[e];
    }
    size_t start = std::find(chain.begin(), chain.end(), q) - chain.begin();
    if (start == chain.size())
      start = 0;
    std::string cycle;
    const size_t kShown = 8;
    for (size_t n = start; n < chain.size(); ++n) {
      if (n - start == kShown) {
        cycle += "; ... (" + std::to_string(chain.size() - n) + " more)";
        break;
      }
      size_t b = chain[n];
      size_t i = cursor_[b];
      size_t w = out_.eventQueue[eventAt_[b][i]];
      cycle += (n == start ? "" : "; ") + queueName(plan_, b) +
               " waits at command " + std::to_string(i) + " for " +
               pollName(plan_, b, i) + ", notified by " + queueName(plan_, w) +
               " at command " + std::to_string(eventPosition_[eventAt_[b][i]]);
    }
    return "the plan deadlocks: " + cycle;
  }

  /// Drops records no wait uses, numbers the events densely and merges
  /// adjacent runs of one queue.
  void compact() {
    std::vector<bool> used(out_.eventQueue.size(), false);
    for (const DmaStep &s : out_.steps)
      if (s.kind == DmaStep::Kind::Wait)
        used[s.event] = true;
    std::vector<size_t> renumber(used.size(), 0);
    std::vector<size_t> eventQueue;
    for (size_t e = 0; e < used.size(); ++e)
      if (used[e]) {
        renumber[e] = eventQueue.size();
        eventQueue.push_back(out_.eventQueue[e]);
      }
    std::vector<DmaStep> steps;
    for (DmaStep s : out_.steps) {
      if (s.kind == DmaStep::Kind::Record && !used[s.event])
        continue;
      if (s.kind != DmaStep::Kind::Run) {
        s.event = renumber[s.event];
      } else if (!steps.empty() && steps.back().kind == DmaStep::Kind::Run &&
                 steps.back().queue == s.queue && steps.back().end == s.begin) {
        steps.back().end = s.end;
        continue;
      }
      steps.push_back(s);
    }
    out_.steps = std::move(steps);
    out_.eventQueue = std::move(eventQueue);
  }

  const Plan &plan_;
  const DmaScheduleOptions &options_;
  DmaSchedule out_;
  std::unordered_map<int64_t, FlagWriter> writers_; // by key(rank, flag)
  std::vector<int64_t> valueRead_;                  // keys read by value waits
  std::vector<std::vector<int64_t>> eventAt_; // [q][i]: notify records, poll
                                              // waits for; -1: none
  std::vector<size_t> eventPosition_;         // [event]: its notify's index
  std::vector<size_t> cursor_, runStart_;
  std::vector<bool> recorded_;
  std::vector<std::vector<size_t>> waiters_;  // [q]: queues blocked on q
  std::unordered_map<size_t, size_t> waited_; // [poller x Q + notifier]
};

} // namespace detail

/// The steps that enqueue a plan's local queues so that every event wait
/// follows its record, or std::nullopt with `error` naming the deadlock (the
/// queues, the flags they wait for and who notifies them), a flag with two
/// writers or a poll of the completion flag.
inline std::optional<DmaSchedule>
scheduleDmaQueues(const Plan &plan, std::string &error,
                  const DmaScheduleOptions &options = {}) {
  return detail::DmaScheduler(plan, options).run(error);
}

/// Two slices share a byte.
inline bool slicesOverlap(const Slice &a, const Slice &b) {
  return a.rank == b.rank && a.buffer == b.buffer &&
         a.offset < b.offset + b.count && b.offset < a.offset + a.count;
}

/// A copy waiting in a batch (cuMemcpyBatchAsync runs its copies in no
/// particular order).
struct PendingCopy {
  Slice dst, src;
};

/// Whether copy dst <- src may join a batch of `pending` copies: not when it
/// writes what a pending copy reads or writes, or reads what one writes
/// (the plan orders the commands of one queue; a batch does not).
inline bool mayJoinBatch(const std::vector<PendingCopy> &pending,
                         const Slice &dst, const Slice &src) {
  for (const PendingCopy &p : pending)
    if (slicesOverlap(dst, p.dst) || slicesOverlap(dst, p.src) ||
        slicesOverlap(src, p.dst))
      return false;
  return true;
}

/// A copy of a slice onto itself moves nothing.
inline bool isSelfCopy(const Slice &dst, const Slice &src) {
  return dst.rank == src.rank && dst.buffer == src.buffer &&
         dst.offset == src.offset && dst.count == src.count;
}

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_EXEC_DMAQUEUESCHEDULE_H
