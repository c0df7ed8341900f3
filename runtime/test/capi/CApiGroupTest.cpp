//===- CApiGroupTest.cpp - one thread driving several ranks ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// NCCL's single-process pattern: the communicators of every rank made at
// once (ncclCommInitAll), then one thread making each rank's call between
// sdmaGroupStart and sdmaGroupEnd. On the CPU device a launch runs before
// it returns, so a rank's call alone would wait for its peers' until the
// timeout: a group's calls complete only when the group runs them as one
// launch (GroupLaunch.h). The first calls also meet every rank on the host
// (a thread per communicator), the repeated ones are replays.
//
//===----------------------------------------------------------------------===//

#include "sdma/sdma.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

namespace {

/// `ranks` communicators of one job on the CPU device, made (and destroyed)
/// on a thread each, as ncclCommInitAll does; `in` and `out` symmetric
/// buffers of `count` int32 per rank (out: `ranks` times that).
struct Ranks {
  int ranks;
  size_t count;
  std::vector<sdmaComm_t> comms;
  std::vector<int32_t *> in, out;

  Ranks(int n, size_t elements, unsigned long long timeoutMs = 5000)
      : ranks(n), count(elements), comms(n), in(n), out(n) {
    sdmaUniqueId id;
    EXPECT_EQ(sdmaGetUniqueId(&id), sdmaSuccess);
    each([&](int r) {
      sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
      config.device = "cpu";
      config.heapBytes = 1 << 20;
      config.timeoutMs = timeoutMs;
      ASSERT_EQ(sdmaCommInitRankConfig(&comms[r], ranks, id, r, &config),
                sdmaSuccess)
          << sdmaGetLastError(nullptr);
      ASSERT_EQ(sdmaMemAlloc(comms[r], (void **)&in[r], count * 4),
                sdmaSuccess);
      ASSERT_EQ(sdmaMemAlloc(comms[r], (void **)&out[r], ranks * count * 4),
                sdmaSuccess);
    });
  }
  ~Ranks() {
    each([&](int r) {
      if (comms[r])
        sdmaCommDestroy(comms[r]);
    });
  }
  void each(const std::function<void(int)> &body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back(body, r);
    for (std::thread &t : threads)
      t.join();
  }
  void fill(int round) {
    for (int r = 0; r < ranks; ++r) {
      for (size_t i = 0; i < count; ++i)
        in[r][i] = int32_t(round * 100000 + r * 1000 + int(i));
      std::memset(out[r], 0xff, ranks * count * 4);
    }
  }
  /// Every rank's out is the all-gather of round `round`'s inputs.
  bool gathered(int round) const {
    for (int r = 0; r < ranks; ++r)
      for (int q = 0; q < ranks; ++q)
        for (size_t i = 0; i < count; ++i)
          if (out[r][q * count + i] != int32_t(round * 100000 + q * 1000 + i))
            return false;
    return true;
  }
  bool untouched() const {
    for (int r = 0; r < ranks; ++r)
      for (size_t i = 0; i < ranks * count; ++i)
        if (out[r][i] != -1)
          return false;
    return true;
  }
};

sdmaResult_t allGathers(Ranks &job) {
  EXPECT_EQ(sdmaGroupStart(), sdmaSuccess);
  for (int r = 0; r < job.ranks; ++r)
    EXPECT_EQ(sdmaAllGather(job.in[r], job.out[r], job.count, sdmaInt32,
                            job.comms[r], nullptr),
              sdmaSuccess);
  return sdmaGroupEnd();
}

} // namespace

TEST(CApiGroup, OneThreadRunsEveryRanksAllGather) {
  Ranks job(3, 64);
  // The first group meets every rank on the host; the next ones replay.
  for (int round = 0; round < 4; ++round) {
    job.fill(round);
    ASSERT_EQ(allGathers(job), sdmaSuccess) << sdmaGetLastError(nullptr);
    EXPECT_TRUE(job.gathered(round)) << "round " << round;
  }
}

TEST(CApiGroup, SeveralCallsPerRankRunInOrder) {
  // Each rank: an all-gather, then an all-reduce of what it gathered (into
  // its input's place, in place): two launches a rank, one per round.
  Ranks job(4, 16);
  for (int round = 0; round < 2; ++round) {
    job.fill(round);
    ASSERT_EQ(sdmaGroupStart(), sdmaSuccess);
    for (int r = 0; r < job.ranks; ++r) {
      ASSERT_EQ(sdmaAllGather(job.in[r], job.out[r], job.count, sdmaInt32,
                              job.comms[r], nullptr),
                sdmaSuccess);
      ASSERT_EQ(sdmaAllReduce(job.out[r], job.out[r], job.ranks * job.count,
                              sdmaInt32, sdmaSum, job.comms[r], nullptr),
                sdmaSuccess);
    }
    ASSERT_EQ(sdmaGroupEnd(), sdmaSuccess) << sdmaGetLastError(nullptr);
    // out[q * count + i] summed over ranks: ranks times the gathered value.
    for (int r = 0; r < job.ranks; ++r)
      for (int q = 0; q < job.ranks; ++q)
        for (size_t i = 0; i < job.count; ++i)
          ASSERT_EQ(job.out[r][q * job.count + i],
                    job.ranks * int32_t(round * 100000 + q * 1000 + i))
              << "rank " << r << " round " << round;
  }
}

TEST(CApiGroup, TwoJobsInOneGroup) {
  // Two jobs' ranks in one group: each job's launched together, apart from
  // the other's.
  Ranks a(2, 8), b(3, 8);
  for (int round = 0; round < 2; ++round) {
    a.fill(round);
    b.fill(round + 7);
    ASSERT_EQ(sdmaGroupStart(), sdmaSuccess);
    for (int r = 0; r < 3; ++r) {
      if (r < 2)
        ASSERT_EQ(sdmaAllGather(a.in[r], a.out[r], a.count, sdmaInt32,
                                a.comms[r], nullptr),
                  sdmaSuccess);
      ASSERT_EQ(sdmaAllGather(b.in[r], b.out[r], b.count, sdmaInt32, b.comms[r],
                              nullptr),
                sdmaSuccess);
    }
    ASSERT_EQ(sdmaGroupEnd(), sdmaSuccess) << sdmaGetLastError(nullptr);
    EXPECT_TRUE(a.gathered(round));
    EXPECT_TRUE(b.gathered(round + 7));
  }
}

TEST(CApiGroup, ARefusedCallRunsNothingAndTheRanksStayUsable) {
  Ranks job(3, 32);
  job.fill(0);
  ASSERT_EQ(sdmaGroupStart(), sdmaSuccess);
  for (int r = 0; r < job.ranks; ++r)
    EXPECT_EQ(sdmaAllGather(job.in[r], job.out[r], job.count, sdmaInt32,
                            job.comms[r], nullptr),
              sdmaSuccess);
  // The C layer refuses a bad type at once; the group then runs nothing.
  EXPECT_EQ(sdmaAllGather(job.in[0], job.out[0], job.count, sdmaDataType_t(99),
                          job.comms[0], nullptr),
            sdmaInvalidArgument);
  EXPECT_EQ(sdmaGroupEnd(), sdmaInvalidArgument);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("did not run"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
  EXPECT_TRUE(job.untouched());
  job.fill(1);
  ASSERT_EQ(allGathers(job), sdmaSuccess) << sdmaGetLastError(nullptr);
  EXPECT_TRUE(job.gathered(1));
}

TEST(CApiGroup, RanksThatDisagreeFailOnEveryRankNamingIt) {
  // Rank 2 gathers fewer elements: the first call's agreement refuses it
  // on every rank (each communicator's thread meets the others), and
  // nothing is launched; the ranks then still work.
  Ranks job(3, 32);
  job.fill(0);
  ASSERT_EQ(sdmaGroupStart(), sdmaSuccess);
  for (int r = 0; r < job.ranks; ++r)
    ASSERT_EQ(sdmaAllGather(job.in[r], job.out[r], r == 2 ? 16 : job.count,
                            sdmaInt32, job.comms[r], nullptr),
              sdmaSuccess);
  EXPECT_EQ(sdmaGroupEnd(), sdmaInvalidUsage);
  std::string why = sdmaGetLastError(nullptr);
  EXPECT_NE(why.find("sdmaGroupEnd"), std::string::npos) << why;
  EXPECT_NE(why.find("differ"), std::string::npos) << why;
  for (int r = 0; r < job.ranks; ++r)
    EXPECT_NE(std::string(sdmaGetLastError(job.comms[r])).find("AllGather"),
              std::string::npos)
        << sdmaGetLastError(job.comms[r]);
  EXPECT_TRUE(job.untouched());
  job.fill(1);
  ASSERT_EQ(allGathers(job), sdmaSuccess) << sdmaGetLastError(nullptr);
  EXPECT_TRUE(job.gathered(1));
}

TEST(CApiGroup, ACommunicatorDestroyedBeforeTheEndIsRefused) {
  Ranks job(2, 8);
  job.fill(0);
  ASSERT_EQ(sdmaGroupStart(), sdmaSuccess);
  ASSERT_EQ(sdmaAllGather(job.in[0], job.out[0], job.count, sdmaInt32,
                          job.comms[0], nullptr),
            sdmaSuccess);
  // Destroyed (by every rank, on threads) before the group ends.
  job.each([&](int r) {
    sdmaCommDestroy(job.comms[r]);
    job.comms[r] = nullptr;
  });
  EXPECT_EQ(sdmaGroupEnd(), sdmaInvalidUsage);
  EXPECT_NE(std::string(sdmaGetLastError(nullptr)).find("destroyed"),
            std::string::npos)
      << sdmaGetLastError(nullptr);
}

TEST(CApiGroup, TwoThreadsEachDriveHalfTheRanks) {
  // Ranks 0-1 in one thread's groups, 2-3 in another's, at once: the first
  // calls meet all four ranks on the host (neither group may wait for the
  // other to finish), and each group's launch waits on the device for the
  // other's ranks.
  Ranks job(4, 16);
  for (int round = 0; round < 3; ++round) {
    job.fill(round);
    std::vector<sdmaResult_t> results(2, sdmaInternalError);
    std::vector<std::string> why(2);
    std::vector<std::thread> threads;
    for (int half = 0; half < 2; ++half)
      threads.emplace_back([&, half] {
        sdmaGroupStart();
        for (int r = 2 * half; r < 2 * half + 2; ++r)
          sdmaAllGather(job.in[r], job.out[r], job.count, sdmaInt32,
                        job.comms[r], nullptr);
        results[half] = sdmaGroupEnd();
        why[half] = sdmaGetLastError(nullptr);
      });
    for (std::thread &t : threads)
      t.join();
    ASSERT_EQ(results[0], sdmaSuccess) << why[0];
    ASSERT_EQ(results[1], sdmaSuccess) << why[1];
    EXPECT_TRUE(job.gathered(round)) << "round " << round;
  }
}

TEST(CApiGroup, RanksLaunchedOneByOneSideBySide) {
  // SDMA_GROUP_LAUNCH=0 (and a device that refuses a group launch): each
  // rank's launch alone, started side by side, so the CPU device's launches
  // (each waiting for its peers) still meet.
  setenv("SDMA_GROUP_LAUNCH", "0", 1);
  {
    Ranks job(3, 64);
    for (int round = 0; round < 2; ++round) {
      job.fill(round);
      ASSERT_EQ(allGathers(job), sdmaSuccess) << sdmaGetLastError(nullptr);
      EXPECT_TRUE(job.gathered(round)) << "round " << round;
    }
  }
  unsetenv("SDMA_GROUP_LAUNCH");
}
