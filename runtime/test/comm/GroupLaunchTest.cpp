//===- GroupLaunchTest.cpp - a group's rounds on one stream ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// streamConflict: ranks of one job on one stream that would start in
// different launches of a group's round (each waiting for a peer queued
// behind it) are refused with their names, and only they. runGroup: calls
// that start as made before run on the calling thread; the first of a
// signature, which meets every rank on the host, and what follows it on
// its communicator run on a thread of their own, in order.
//
//===----------------------------------------------------------------------===//

#include "comm/GroupLaunch.h"

#include "ThreadJob.h"
#include "sdma/runtime/Communicator.h"

#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <thread>

using namespace sdma::rt;

namespace {

int streamA, streamB; // two distinct stream handles
int gpu0, gpu1;       // two streams' domains (CUDA contexts)

TEST(GroupLaunchStreams, RanksOfOneJobInTwoLaunchesOnOneStreamAreRefused) {
  std::string why =
      streamConflict({{0, 7, 0, &streamA, true}, {1, 7, 1, &streamA, true}});
  EXPECT_NE(why.find("ranks 0 and 1 of one job are on one stream"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("a stream of its own"), std::string::npos) << why;
}

TEST(GroupLaunchStreams, OneHandleOnTwoGpusIsTwoStreams) {
  // The legacy default stream (null) of two GPUs: one handle, two streams.
  EXPECT_EQ(streamConflict({{0, 7, 0, nullptr, true, &gpu0},
                            {1, 7, 1, nullptr, true, &gpu1}}),
            "");
  uint64_t job = 0;
  std::string why = streamConflict(
      {{0, 7, 0, nullptr, true, &gpu0}, {1, 7, 1, nullptr, true, &gpu0}}, &job);
  EXPECT_NE(why.find("ranks 0 and 1"), std::string::npos) << why;
  EXPECT_EQ(job, 7u);
  // A kernel that does not name its domain is compared with every one.
  EXPECT_NE(streamConflict({{0, 7, 0, &streamA, true, nullptr},
                            {1, 7, 1, &streamA, true, &gpu1}}),
            "");
}

TEST(GroupLaunchStreams, TheClashingPairIsNamedAmongOthers) {
  std::string why = streamConflict({{0, 7, 0, &streamA, true},
                                    {0, 7, 1, &streamA, true},
                                    {1, 7, 2, &streamB, true},
                                    {2, 7, 3, &streamB, true}});
  EXPECT_NE(why.find("ranks 2 and 3"), std::string::npos) << why;
}

TEST(GroupLaunchStreams, OneLaunchOtherStreamsOrJobsOrACpuDeviceAreFine) {
  // One launch for both ranks.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, &streamA, true}, {0, 7, 1, &streamA, true}}),
      "");
  // A stream each.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, &streamA, true}, {1, 7, 1, &streamB, true}}),
      "");
  // Two jobs: neither waits for the other.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, &streamA, true}, {1, 8, 1, &streamA, true}}),
      "");
  // A device whose launch runs before it returns queues nothing.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, nullptr, false}, {1, 7, 1, nullptr, false}}),
      "");
  EXPECT_EQ(streamConflict({}), "");
}

/// `ranks` communicators of one job on the CPU device, made on a thread
/// each (as ncclCommInitAll does), then driven from one thread; `in` and
/// `out` symmetric buffers of `count` int32 per rank (out: ranks times).
struct GroupJob {
  int ranks;
  size_t count;
  test::TempDir cache;
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<int32_t *> in, out;

  /// `coLaunch`: CommOptions::coLaunch (CoLaunch.h).
  GroupJob(int n, size_t elements, int coLaunch = -1)
      : ranks(n), count(elements), comms(n), in(n), out(n) {
    UniqueId id;
    Error error;
    EXPECT_TRUE(createUniqueId(id, error)) << error.message;
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        CommOptions options;
        options.device = "cpu";
        options.heapBytes = 1 << 20;
        options.timeoutMs = 20000;
        options.cpuThreads = 1;
        options.cacheDirectory = cache.path;
        options.coLaunch = coLaunch;
        Error e;
        comms[r] = Communicator::create(id, r, ranks, options, e);
        void *a = nullptr, *b = nullptr;
        if (comms[r] && comms[r]->memAlloc(count * 4, a, e) &&
            comms[r]->memAlloc(ranks * count * 4, b, e)) {
          in[r] = static_cast<int32_t *>(a);
          out[r] = static_cast<int32_t *>(b);
        }
      });
    for (std::thread &t : threads)
      t.join();
  }
  /// Destroyed as made, on a thread each (collective).
  ~GroupJob() {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] { comms[r].reset(); });
    for (std::thread &t : threads)
      t.join();
  }
  bool ready() const {
    for (int r = 0; r < ranks; ++r)
      if (!comms[r] || !in[r] || !out[r])
        return false;
    return true;
  }
  void fill(int round) {
    for (int r = 0; r < ranks; ++r) {
      for (size_t i = 0; i < count; ++i)
        in[r][i] = int32_t(round * 100000 + r * 1000 + int(i));
      std::memset(out[r], 0xff, ranks * count * 4);
    }
  }
  /// Every rank's first `ranks * n` outputs are round `round`'s all-gather
  /// of its inputs' first `n`.
  bool gathered(int round, size_t n) const {
    for (int r = 0; r < ranks; ++r)
      for (int q = 0; q < ranks; ++q)
        for (size_t i = 0; i < n; ++i)
          if (out[r][q * n + i] != int32_t(round * 100000 + q * 1000 + i))
            return false;
    return true;
  }
  /// A group call of every rank's all-gather of `n` elements, recording
  /// the thread that made it in `made[rank]`.
  std::vector<GroupCall> allGathers(size_t n,
                                    std::vector<std::thread::id> &made) {
    std::vector<GroupCall> calls;
    for (int r = 0; r < ranks; ++r) {
      GroupCall call;
      call.comm = comms[r].get();
      call.probe = true;
      call.run = [this, r, n, &made](Error &error) {
        made[r] = std::this_thread::get_id();
        return comms[r]->collective(CommOp::AllGather, in[r], out[r], n,
                                    DataType::Int32, 0, nullptr, error);
      };
      calls.push_back(std::move(call));
    }
    return calls;
  }
};

/// A runtime built alone (test/runtime/without-hip.test) has no schedule
/// compiler to build a first call's program: the tests below run in the
/// main build.
bool noCompiler(const std::vector<GroupCall> &calls) {
  return !calls.empty() &&
         calls[0].error.message.find("no compiler") != std::string::npos;
}

TEST(RunGroup, ReplayedCallsRunOnTheCallingThread) {
  GroupJob job(3, 32);
  ASSERT_TRUE(job.ready());
  const std::thread::id self = std::this_thread::get_id();
  for (int round = 0; round < 3; ++round) {
    job.fill(round);
    std::vector<std::thread::id> made(job.ranks);
    std::vector<GroupCall> calls = job.allGathers(job.count, made);
    bool ok = runGroup(calls);
    if (noCompiler(calls))
      GTEST_SKIP() << calls[0].error.message;
    ASSERT_TRUE(ok) << calls[0].error.message;
    EXPECT_TRUE(job.gathered(round, job.count)) << "round " << round;
    // The first round meets every rank on the host: a thread per
    // communicator (the first the caller's). Later ones replay, here.
    EXPECT_EQ(made[0], self);
    for (int r = 1; r < job.ranks; ++r)
      EXPECT_EQ(made[r] == self, round > 0)
          << "rank " << r << " round " << round;
  }
}

TEST(RunGroup, AMissDefersItsCommunicatorsLaterCallsInOrder) {
  GroupJob job(3, 32);
  ASSERT_TRUE(job.ready());
  const std::thread::id self = std::this_thread::get_id();
  // Made once: the all-gather of 32 replays from here on.
  {
    job.fill(0);
    std::vector<std::thread::id> made(job.ranks);
    std::vector<GroupCall> calls = job.allGathers(job.count, made);
    bool ok = runGroup(calls);
    if (noCompiler(calls))
      GTEST_SKIP() << calls[0].error.message;
    ASSERT_TRUE(ok) << calls[0].error.message;
  }
  // Each rank: the all-gather of 32 (replayed, here), one of 8 never made
  // (meets on the host: a worker's for ranks 1 and 2), then the one of 32
  // again (after the miss: in order, on the same thread). The last writes
  // what the first did: every rank's output is round 1's gather of 32.
  job.fill(1);
  std::vector<std::thread::id> first(job.ranks), second(job.ranks),
      third(job.ranks);
  std::vector<GroupCall> a = job.allGathers(job.count, first),
                         b = job.allGathers(8, second),
                         c = job.allGathers(job.count, third), calls;
  for (int r = 0; r < job.ranks; ++r)
    for (std::vector<GroupCall> *part : {&a, &b, &c})
      calls.push_back((*part)[r]);
  ASSERT_TRUE(runGroup(calls));
  EXPECT_TRUE(job.gathered(1, job.count));
  for (int r = 0; r < job.ranks; ++r) {
    EXPECT_EQ(first[r], self) << "rank " << r;
    EXPECT_EQ(second[r] == self, r == 0) << "rank " << r;
    EXPECT_EQ(third[r], second[r]) << "rank " << r;
  }
}

TEST(RunGroup, ACallNotProbedIsNeverMadeOnTheCallingThreadTwice) {
  // A call that does not defer (an sdmaGroupCall's function, a schedule
  // launch) is made once, on its communicator's thread, even where the
  // calls before it replayed.
  GroupJob job(2, 16);
  ASSERT_TRUE(job.ready());
  std::vector<std::thread::id> made(job.ranks);
  for (int round = 0; round < 2; ++round) {
    job.fill(round);
    std::vector<GroupCall> calls = job.allGathers(job.count, made);
    std::vector<int> ran(job.ranks, 0);
    for (int r = 0; r < job.ranks; ++r) {
      GroupCall other;
      other.comm = job.comms[r].get();
      other.run = [&ran, r](Error &) { return ++ran[r] > 0; };
      calls.insert(calls.begin() + 2 * r + 1, other);
    }
    bool ok = runGroup(calls);
    if (noCompiler(calls))
      GTEST_SKIP() << calls[0].error.message;
    ASSERT_TRUE(ok) << calls[0].error.message;
    EXPECT_TRUE(job.gathered(round, job.count));
    EXPECT_EQ(ran, std::vector<int>(job.ranks, 1)) << "round " << round;
  }
}

} // namespace

/// A group whose ranks share their GPU context with a rank outside it hands
/// its launch to that rank's (CoLaunch.h) and waits for it: an abort of one
/// of the group's communicators ends that wait at once, not at the timeout.
TEST(RunGroup, AnAbortEndsAHandedLaunchsWaitForARankOutsideTheGroup) {
  GroupJob job(3, 32, /*coLaunch=*/1);
  ASSERT_TRUE(job.ready());
  job.fill(0);
  std::vector<std::thread::id> made(job.ranks);
  // Made once by every rank: it replays from here on, meeting no rank on
  // the host.
  std::vector<GroupCall> calls = job.allGathers(job.count, made);
  bool first = runGroup(calls);
  if (noCompiler(calls))
    GTEST_SKIP() << calls[0].error.message;
  ASSERT_TRUE(first) << calls[0].error.message;
  // Ranks 0 and 1 only: rank 2, which shares their room, never calls.
  calls = job.allGathers(job.count, made);
  calls.pop_back();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Error ignored;
    job.comms[0]->abort(ignored);
  });
  auto began = std::chrono::steady_clock::now();
  bool ok = runGroup(calls);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
          .count();
  aborter.join();
  EXPECT_FALSE(ok);
  // The timeout is 20 s; the wait checks every 5 ms.
  EXPECT_LT(seconds, 5.0);
  // The abort tells the room (or, where it came first, the wait's stop).
  EXPECT_TRUE(calls[0].error.message.find("rank 0 (threads of this process "
                                          "on this GPU, whose calls start "
                                          "with this rank's) aborted its "
                                          "communicator") !=
                  std::string::npos ||
              calls[0].error.message.find("the communicator has failed") !=
                  std::string::npos)
      << calls[0].error.message;
}

// A group over ranks 0 and 1 whose room also holds rank 2, which calls on
// a thread of its own, split over launches (SDMA_GROUP_LAUNCH=0): its
// launches are handed to the room together, and start with rank 2's
// (handed part by part, the first part waited for the second; launched
// past the room, rank 2 waited for them until its timeout).
TEST(RunGroup, AGroupSplitOverLaunchesIsHandedToItsRoomWhole) {
  GroupJob job(3, 32, /*coLaunch=*/1);
  ASSERT_TRUE(job.ready());
  job.fill(0);
  std::vector<std::thread::id> made(job.ranks);
  std::vector<GroupCall> calls = job.allGathers(job.count, made);
  bool first = runGroup(calls);
  if (noCompiler(calls))
    GTEST_SKIP() << calls[0].error.message;
  ASSERT_TRUE(first) << calls[0].error.message;
  setenv("SDMA_GROUP_LAUNCH", "0", 1);
  job.fill(1);
  calls = job.allGathers(job.count, made);
  GroupCall alone = std::move(calls.back());
  calls.pop_back();
  Error aloneError;
  bool aloneOk = false;
  auto began = std::chrono::steady_clock::now();
  std::thread other([&] { aloneOk = alone.run(aloneError); });
  bool ok = runGroup(calls);
  other.join();
  unsetenv("SDMA_GROUP_LAUNCH");
  EXPECT_TRUE(ok) << calls[0].error.message << " / " << calls[1].error.message;
  EXPECT_TRUE(aloneOk) << aloneError.message;
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
  EXPECT_TRUE(job.gathered(1, job.count));
}
