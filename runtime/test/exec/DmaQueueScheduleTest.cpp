//===- DmaQueueScheduleTest.cpp - copy-engine enqueue order, no GPU -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The interleaving the copy-engine executors enqueue plan queues in
// (runtime/lib/exec/DmaQueueSchedule.h), checked by replaying the steps with
// vector clocks: every poll must be ordered after the notify it waits for,
// by its own queue's order or by event waits that follow their records.
//
// plans/all_gather_ring-8.json is what the compiler emits for the ring at
// 8 ranks (16 queues); regenerate it with
//   sdma-run schedules/all_gather_ring.mlir --ranks=8 -b 1K -e 1K \
//     --iters=1 --backend=sim --emit-plan=all_gather_ring-8.json
//
//===----------------------------------------------------------------------===//

#include "exec/DmaQueueSchedule.h"
#include "sdma/runtime/Plan.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace sdma::rt;

namespace {

Plan loadPlan(const std::string &name) {
  std::string error;
  std::optional<Plan> plan =
      Plan::load(std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/" + name, error);
  EXPECT_TRUE(plan) << error;
  return plan ? *plan : Plan{};
}

/// A plan of `queues` queues, queue q on rank q with engine 0, flag 2 + q
/// written only by queue q (as insert-sync numbers them).
Plan emptyPlan(int queues) {
  Plan plan;
  plan.schedule = "test";
  plan.ranks = queues;
  plan.engines = 1;
  plan.flags = 2 + queues;
  plan.buffers = {{"data", 64}};
  plan.done.assign(queues, 0);
  for (int q = 0; q < queues; ++q)
    plan.streams.push_back({q, 0, {}});
  return plan;
}

Command copy(int rank, int64_t from, int64_t to) {
  Command c;
  c.kind = Command::Kind::Copy;
  c.slices[0] = {rank, 0, from, 1};
  c.slices[1] = {rank, 0, to, 1};
  return c;
}

Command notify(int target, int flag) {
  Command c;
  c.kind = Command::Kind::Notify;
  c.target = target;
  c.flag = flag;
  return c;
}

Command poll(int flag, int64_t value) {
  Command c;
  c.kind = Command::Kind::Poll;
  c.flag = flag;
  c.value = value;
  return c;
}

/// Replays `schedule` and checks it: each local queue's runs cover its
/// commands once and in order; each event is recorded once, by its queue,
/// before every wait for it; and every poll of a local queue is ordered
/// after the notify it needs (same queue earlier, or reached through event
/// waits), unless the schedule made it a value wait.
void checkSchedule(const Plan &plan, const DmaSchedule &schedule,
                   const DmaScheduleOptions &options = {}) {
  size_t Q = plan.streams.size();
  auto local = [&](size_t q) {
    return options.process.empty() || options.process[q] == options.self;
  };
  // The k-th notify of each (rank, flag): its queue and command index.
  std::map<std::pair<int, int>, std::vector<std::pair<size_t, size_t>>> sent;
  for (size_t q = 0; q < Q; ++q)
    for (size_t i = 0; i < plan.streams[q].commands.size(); ++i) {
      const Command &c = plan.streams[q].commands[i];
      if (c.kind == Command::Kind::Notify && c.flag != kDoneFlag)
        sent[{c.target, c.flag}].push_back({q, i});
    }
  // clock[q][w]: how many of w's commands q's stream is ordered after.
  std::vector<std::vector<size_t>> clock(Q, std::vector<size_t>(Q, 0));
  std::vector<std::optional<std::vector<size_t>>> recorded(
      schedule.eventQueue.size());
  std::vector<size_t> next(Q, 0);
  for (const DmaStep &step : schedule.steps) {
    size_t q = step.queue;
    ASSERT_LT(q, Q);
    ASSERT_TRUE(local(q)) << "queue " << q << " is not this process's";
    if (step.kind == DmaStep::Kind::Record) {
      ASSERT_LT(step.event, recorded.size());
      EXPECT_EQ(schedule.eventQueue[step.event], q);
      EXPECT_FALSE(recorded[step.event]) << "event recorded twice";
      clock[q][q] = next[q];
      recorded[step.event] = clock[q];
      continue;
    }
    if (step.kind == DmaStep::Kind::Wait) {
      ASSERT_LT(step.event, recorded.size());
      ASSERT_TRUE(recorded[step.event])
          << "queue " << q << " waits for event " << step.event
          << " before it is recorded";
      for (size_t w = 0; w < Q; ++w)
        clock[q][w] = std::max(clock[q][w], (*recorded[step.event])[w]);
      continue;
    }
    ASSERT_EQ(step.begin, next[q]) << "queue " << q << " out of order";
    ASSERT_LT(step.begin, step.end);
    ASSERT_LE(step.end, plan.streams[q].commands.size());
    for (size_t i = step.begin; i < step.end; ++i) {
      const Command &c = plan.streams[q].commands[i];
      if (c.kind != Command::Kind::Poll || c.flag == kLaunchFlag ||
          c.value <= 0 || schedule.flagValue[q][i] != DmaSchedule::kNoFlagOp)
        continue;
      auto [w, p] = sent.at({plan.streams[q].rank, c.flag}).at(c.value - 1);
      if (w == q)
        EXPECT_LT(p, i) << "queue " << q << " polls its own later notify";
      else
        EXPECT_GT(clock[q][w], p)
            << "queue " << q << " command " << i << " is not ordered after "
            << "queue " << w << " command " << p;
    }
    next[q] = step.end;
  }
  for (size_t q = 0; q < Q; ++q)
    EXPECT_EQ(next[q], local(q) ? plan.streams[q].commands.size() : 0)
        << "queue " << q << " is not enqueued whole";
}

size_t countSteps(const DmaSchedule &schedule, DmaStep::Kind kind) {
  size_t n = 0;
  for (const DmaStep &step : schedule.steps)
    n += step.kind == kind;
  return n;
}

TEST(DmaQueueSchedule, CompiledPlans) {
  for (const char *name :
       {"ring.json", "racy_ring.json", "all_gather_ring-8.json"}) {
    SCOPED_TRACE(name);
    Plan plan = loadPlan(name);
    std::string error;
    std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
    ASSERT_TRUE(schedule) << error;
    checkSchedule(plan, *schedule);
    EXPECT_FALSE(schedule->usesFlags);
  }
}

TEST(DmaQueueSchedule, RingAtEightRanksInterleavesSixteenQueues) {
  Plan plan = loadPlan("all_gather_ring-8.json");
  ASSERT_EQ(plan.streams.size(), 16u);
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule);
  // The ring forwards chunks around the ranks: queues must be enqueued
  // interleaved (one queue after another in plan order would wait for
  // events not recorded yet), and every cross-queue poll is an event.
  EXPECT_GT(countSteps(*schedule, DmaStep::Kind::Wait), 0u);
  EXPECT_EQ(countSteps(*schedule, DmaStep::Kind::Record),
            schedule->eventQueue.size());
  bool interleaved = false;
  for (size_t n = 1; n < schedule->steps.size(); ++n)
    interleaved |= schedule->steps[n].queue < schedule->steps[n - 1].queue;
  EXPECT_TRUE(interleaved);
}

TEST(DmaQueueSchedule, EventsOnlyWhereAnotherQueueWaits) {
  // Queue 1 waits for queue 0's second notify; queue 0's first notify is
  // never waited for by another queue, and queue 1's own poll of its own
  // earlier notify needs nothing.
  Plan plan = emptyPlan(2);
  plan.streams[0].commands = {copy(0, 0, 1), notify(1, 2), copy(0, 2, 3),
                              notify(1, 2)};
  plan.streams[1].commands = {notify(1, 3), poll(3, 1), poll(2, 2),
                              copy(1, 0, 1)};
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule);
  ASSERT_EQ(schedule->eventQueue.size(), 1u);
  EXPECT_EQ(schedule->eventQueue[0], 0u);
  EXPECT_EQ(countSteps(*schedule, DmaStep::Kind::Wait), 1u);
  // The record comes right after queue 0's second notify (command 3).
  for (size_t n = 0; n < schedule->steps.size(); ++n)
    if (schedule->steps[n].kind == DmaStep::Kind::Record) {
      ASSERT_GT(n, 0u);
      EXPECT_EQ(schedule->steps[n - 1].queue, 0u);
      EXPECT_EQ(schedule->steps[n - 1].end, 4u);
    }
}

TEST(DmaQueueSchedule, ImpliedWaitsAreDropped) {
  // Queue 1 polls queue 0's second notify, then its first: the second wait
  // is implied by the first.
  Plan plan = emptyPlan(2);
  plan.streams[0].commands = {notify(1, 2), notify(1, 2)};
  plan.streams[1].commands = {poll(2, 2), copy(1, 0, 1), poll(2, 1),
                              copy(1, 1, 2)};
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule);
  EXPECT_EQ(countSteps(*schedule, DmaStep::Kind::Wait), 1u);
  EXPECT_EQ(schedule->eventQueue.size(), 1u);
}

TEST(DmaQueueSchedule, EnqueueOrderFollowsDependencies) {
  // Queue 0 waits for queue 2, which waits for queue 1: in plan order the
  // waits would come before their records.
  Plan plan = emptyPlan(3);
  plan.streams[0].commands = {poll(4, 1), copy(0, 0, 1)};
  plan.streams[1].commands = {copy(1, 0, 1), notify(2, 3)};
  plan.streams[2].commands = {poll(3, 1), copy(2, 0, 1), notify(0, 4)};
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule);
  EXPECT_EQ(countSteps(*schedule, DmaStep::Kind::Wait), 2u);
  EXPECT_EQ(schedule->steps.front().queue, 1u);
}

TEST(DmaQueueSchedule, CycleIsReportedAsDeadlock) {
  // Each queue waits for the other's notify, which follows the wait.
  Plan plan = emptyPlan(2);
  plan.streams[0].commands = {poll(3, 1), copy(0, 0, 1), notify(1, 2)};
  plan.streams[1].commands = {copy(1, 0, 1), poll(2, 1), notify(0, 3)};
  std::string error;
  EXPECT_FALSE(scheduleDmaQueues(plan, error));
  EXPECT_NE(error.find("the plan deadlocks"), std::string::npos) << error;
  EXPECT_NE(error.find("queue 0 (rank 0, engine 0) waits at command 0 for "
                       "flag 3 of rank 0 >= 1, notified by queue 1 (rank "
                       "1, engine 0) at command 2"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("queue 1 (rank 1, engine 0) waits at command 1 for "
                       "flag 2 of rank 1 >= 1, notified by queue 0"),
            std::string::npos)
      << error;
}

TEST(DmaQueueSchedule, DeadlockNamesOnlyTheCycle) {
  // Queue 2 waits for queue 0, which is in a cycle with queue 1.
  Plan plan = emptyPlan(3);
  plan.streams[0].commands = {poll(3, 1), notify(1, 2), notify(2, 2)};
  plan.streams[1].commands = {poll(2, 1), notify(0, 3)};
  plan.streams[2].commands = {poll(2, 1)};
  std::string error;
  EXPECT_FALSE(scheduleDmaQueues(plan, error));
  EXPECT_NE(error.find("queue 0 (rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("queue 1 (rank 1"), std::string::npos) << error;
  EXPECT_EQ(error.find("queue 2 (rank 2, engine 0) waits"), std::string::npos)
      << error;
}

TEST(DmaQueueSchedule, PollForMoreThanIsNotifiedIsADeadlock) {
  Plan plan = emptyPlan(2);
  plan.streams[0].commands = {notify(1, 2)};
  plan.streams[1].commands = {poll(2, 2)};
  std::string error;
  EXPECT_FALSE(scheduleDmaQueues(plan, error));
  EXPECT_EQ(error, "the plan deadlocks: queue 1 (rank 1, engine 0) waits at "
                   "command 0 for flag 2 of rank 1 >= 2, but the plan "
                   "notifies it 1 time (by queue 0 (rank 0, engine 0))");
}

TEST(DmaQueueSchedule, PollOfOwnLaterNotifyIsADeadlock) {
  Plan plan = emptyPlan(1);
  plan.streams[0].commands = {poll(2, 1), notify(0, 2)};
  std::string error;
  EXPECT_FALSE(scheduleDmaQueues(plan, error));
  EXPECT_NE(error.find("only its own later command 1"), std::string::npos)
      << error;
}

TEST(DmaQueueSchedule, TwoWritersOfOneFlagAreRefused) {
  Plan plan = emptyPlan(3);
  plan.streams[0].commands = {notify(2, 4)};
  plan.streams[1].commands = {notify(2, 4)};
  plan.streams[2].commands = {poll(4, 2)};
  std::string error;
  EXPECT_FALSE(scheduleDmaQueues(plan, error));
  EXPECT_NE(error.find("flag 4 of rank 2 is notified by queue 0 (rank 0, "
                       "engine 0) and by queue 1 (rank 1, engine 0)"),
            std::string::npos)
      << error;
}

TEST(DmaQueueSchedule, LaunchAndCompletionFlagsAreLeftToTheHost) {
  Plan plan = emptyPlan(2);
  plan.prelaunch = true;
  plan.done = {1, 1};
  plan.streams[0].commands = {poll(kLaunchFlag, 1), copy(0, 0, 1),
                              notify(0, kDoneFlag)};
  plan.streams[1].commands = {poll(kLaunchFlag, 1), notify(1, kDoneFlag)};
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule);
  EXPECT_TRUE(schedule->eventQueue.empty());
  EXPECT_EQ(schedule->steps.size(), 2u);

  plan.streams[1].commands = {poll(kDoneFlag, 1)};
  EXPECT_FALSE(scheduleDmaQueues(plan, error));
  EXPECT_NE(error.find("polls the completion flag"), std::string::npos)
      << error;
}

TEST(DmaQueueSchedule, ValueWaitsWhereTheNotifierIsElsewhere) {
  // Queues 0 and 1 in this process, queue 2 in another: queue 1's poll of
  // queue 2's flag is a value wait; queue 0's notify that queue 2 polls
  // writes the flag; queue 1's poll of queue 0 is an event.
  Plan plan = emptyPlan(3);
  plan.streams[0].commands = {notify(2, 2), notify(1, 2)};
  plan.streams[1].commands = {poll(4, 1), poll(2, 1), copy(1, 0, 1)};
  plan.streams[2].commands = {poll(2, 1), notify(1, 4)};
  DmaScheduleOptions options;
  options.process = {0, 0, 1};
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error, options);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule, options);
  EXPECT_TRUE(schedule->usesFlags);
  EXPECT_EQ(schedule->flagValue[1][0], 1);                      // value wait
  EXPECT_EQ(schedule->flagValue[0][0], 1);                      // flag write
  EXPECT_EQ(schedule->flagValue[0][1], DmaSchedule::kNoFlagOp); // an event
  EXPECT_EQ(schedule->flagValue[1][1], DmaSchedule::kNoFlagOp);
  EXPECT_EQ(schedule->eventQueue.size(), 1u);
}

TEST(DmaQueueSchedule, ForcedValueWaitsUseNoEvents) {
  Plan plan = loadPlan("ring.json");
  DmaScheduleOptions options;
  options.valueWaits = true;
  std::string error;
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error, options);
  ASSERT_TRUE(schedule) << error;
  checkSchedule(plan, *schedule, options);
  EXPECT_TRUE(schedule->eventQueue.empty());
  EXPECT_TRUE(schedule->usesFlags);
  // One run per queue, in plan order: nothing needs interleaving.
  ASSERT_EQ(schedule->steps.size(), plan.streams.size());
  for (size_t q = 0; q < plan.streams.size(); ++q)
    EXPECT_EQ(schedule->steps[q].queue, q);
  // Every cross-queue poll waits for its value, and the k-th notify of a
  // flag writes k.
  for (size_t q = 0; q < plan.streams.size(); ++q) {
    std::map<std::pair<int, int>, int64_t> k;
    for (size_t i = 0; i < plan.streams[q].commands.size(); ++i) {
      const Command &c = plan.streams[q].commands[i];
      if (c.kind == Command::Kind::Poll && c.flag >= 2)
        EXPECT_EQ(schedule->flagValue[q][i], c.value);
      if (c.kind == Command::Kind::Notify && c.flag >= 2) {
        int64_t ordinal = ++k[std::make_pair(c.target, c.flag)];
        EXPECT_EQ(schedule->flagValue[q][i], ordinal);
      }
    }
  }
}

/// A random plan that some execution order completes: built by running
/// random queues one command at a time, polling only what is already
/// notified.
Plan randomPlan(std::mt19937 &random, int queues, int commands) {
  Plan plan = emptyPlan(queues);
  // notified[rank][writer]: notifies so far of flag 2 + writer of rank.
  std::vector<std::vector<int64_t>> notified(queues,
                                             std::vector<int64_t>(queues, 0));
  for (int n = 0; n < commands; ++n) {
    int q = random() % queues;
    std::vector<Command> &out = plan.streams[q].commands;
    switch (random() % 3) {
    case 0:
      out.push_back(copy(q, random() % 8, 8 + random() % 8));
      break;
    case 1: {
      int target = random() % queues;
      out.push_back(notify(target, 2 + q));
      ++notified[target][q];
      break;
    }
    default: {
      int w = random() % queues;
      if (notified[q][w])
        out.push_back(poll(2 + w, 1 + random() % notified[q][w]));
    }
    }
  }
  return plan;
}

TEST(DmaQueueSchedule, RandomCompletablePlansSchedule) {
  std::mt19937 random(12);
  for (int seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE("plan " + std::to_string(seed));
    Plan plan = randomPlan(random, 2 + seed % 15, 20 + seed % 200);
    std::string error;
    std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
    ASSERT_TRUE(schedule) << error;
    checkSchedule(plan, *schedule);
    if (HasFailure())
      return;
  }
}

TEST(DmaQueueSchedule, RandomPlansWithAForwardPollDeadlock) {
  // A poll moved to the front of its queue, waiting for a notify that
  // itself waits (through the chain) for that queue: some such plans
  // deadlock, and those must be refused, never scheduled wrongly.
  std::mt19937 random(34);
  int refused = 0;
  for (int seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE("plan " + std::to_string(seed));
    Plan plan = randomPlan(random, 2 + seed % 6, 30 + seed % 60);
    for (Stream &stream : plan.streams) {
      auto last = std::find_if(
          stream.commands.rbegin(), stream.commands.rend(),
          [](const Command &c) { return c.kind == Command::Kind::Poll; });
      if (last != stream.commands.rend()) {
        Command moved = *last;
        stream.commands.erase(std::next(last).base());
        stream.commands.insert(stream.commands.begin(), moved);
      }
    }
    std::string error;
    std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
    if (schedule)
      checkSchedule(plan, *schedule);
    else
      EXPECT_EQ(error.rfind("the plan deadlocks: ", 0), 0u) << error;
    refused += !schedule;
    if (HasFailure())
      return;
  }
  EXPECT_GT(refused, 0);
}

Slice slice(int rank, int buffer, int64_t offset, int64_t count) {
  return {rank, buffer, offset, count};
}

TEST(DmaBatch, SplitsOnlyOnOverlapWithAWrite) {
  std::vector<PendingCopy> pending = {
      {slice(0, 1, 0, 2), slice(0, 0, 0, 2)}, // output[0..2) <- input[0..2)
  };
  // Disjoint destination, same source (both only read it): joins.
  EXPECT_TRUE(mayJoinBatch(pending, slice(0, 1, 2, 2), slice(0, 0, 0, 2)));
  // Adjacent, not overlapping: joins.
  EXPECT_TRUE(mayJoinBatch(pending, slice(0, 1, 2, 1), slice(0, 0, 4, 1)));
  // The same chunks on another rank or buffer: joins.
  EXPECT_TRUE(mayJoinBatch(pending, slice(1, 1, 0, 2), slice(1, 0, 0, 2)));
  EXPECT_TRUE(mayJoinBatch(pending, slice(0, 2, 0, 2), slice(0, 0, 0, 2)));
  // Writes what a pending copy writes: splits.
  EXPECT_FALSE(mayJoinBatch(pending, slice(0, 1, 1, 2), slice(0, 0, 4, 2)));
  // Writes what a pending copy reads: splits.
  EXPECT_FALSE(mayJoinBatch(pending, slice(0, 0, 1, 1), slice(0, 2, 0, 1)));
  // Reads what a pending copy writes: splits.
  EXPECT_FALSE(mayJoinBatch(pending, slice(0, 2, 0, 1), slice(0, 1, 1, 1)));
  // An empty batch takes anything.
  EXPECT_TRUE(mayJoinBatch({}, slice(0, 1, 0, 2), slice(0, 1, 0, 2)));
}

TEST(DmaBatch, SelfCopies) {
  EXPECT_TRUE(isSelfCopy(slice(0, 1, 3, 2), slice(0, 1, 3, 2)));
  EXPECT_FALSE(isSelfCopy(slice(0, 1, 3, 2), slice(0, 1, 3, 1)));
  EXPECT_FALSE(isSelfCopy(slice(0, 1, 3, 2), slice(1, 1, 3, 2)));
  EXPECT_FALSE(isSelfCopy(slice(0, 1, 3, 2), slice(0, 0, 3, 2)));
}

} // namespace
