//===- LaunchPoolTest.cpp - one host thread per GPU for launches ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "exec/LaunchPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

using namespace sdma::rt;
using namespace std::chrono;

namespace {

// Every job waits until all jobs of the run have started: only jobs that
// really run at once finish (bounded, so a serial pool fails, not hangs).
bool rendezvous(std::atomic<int> &arrived, int jobs) {
  arrived.fetch_add(1);
  auto deadline = steady_clock::now() + seconds(5);
  while (arrived.load() < jobs)
    if (steady_clock::now() > deadline)
      return false;
  return true;
}

TEST(LaunchPool, RunsEveryJobAtOnceOnDistinctThreads) {
  LaunchPool pool(4);
  ASSERT_EQ(pool.size(), 4u);
  for (int run = 0; run < 50; ++run) {
    std::atomic<int> arrived{0};
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::vector<int> done(4, 0);
    std::string error;
    bool ok = pool.run(
        [&](size_t i, std::string &jobError) {
          {
            std::lock_guard<std::mutex> lock(mutex);
            threads.insert(std::this_thread::get_id());
          }
          if (!rendezvous(arrived, 4)) {
            jobError = "not all jobs ran at once";
            return false;
          }
          done[i] += 1;
          return true;
        },
        error);
    ASSERT_TRUE(ok) << error;
    EXPECT_EQ(threads.size(), 4u);
    EXPECT_TRUE(threads.count(std::this_thread::get_id())) << "job 0 runs here";
    EXPECT_EQ(done, std::vector<int>(4, 1));
  }
}

TEST(LaunchPool, WakesSleepingWorkers) {
  // No spinning: every worker sleeps between runs and must be woken.
  LaunchPool pool(3, microseconds(0));
  for (int run = 0; run < 20; ++run) {
    std::this_thread::sleep_for(microseconds(200));
    std::atomic<int> arrived{0};
    std::string error;
    ASSERT_TRUE(pool.run(
        [&](size_t, std::string &jobError) {
          if (rendezvous(arrived, 3))
            return true;
          jobError = "a sleeping worker was not woken";
          return false;
        },
        error))
        << error;
  }
}

TEST(LaunchPool, ReportsTheLowestFailingJobAndStaysUsable) {
  LaunchPool pool(4);
  std::string error;
  EXPECT_FALSE(pool.run(
      [](size_t i, std::string &jobError) {
        if (i == 2 || i == 3) {
          jobError = "GPU " + std::to_string(i) + ": launch failed";
          return false;
        }
        return true;
      },
      error));
  EXPECT_EQ(error, "GPU 2: launch failed");
  std::atomic<int> count{0};
  error.clear();
  EXPECT_TRUE(pool.run(
      [&](size_t, std::string &) {
        count.fetch_add(1);
        return true;
      },
      error));
  EXPECT_EQ(count.load(), 4);
  EXPECT_EQ(error, "");
}

TEST(LaunchPool, OneJobRunsOnTheCaller) {
  LaunchPool pool(1);
  std::thread::id where;
  std::string error;
  EXPECT_TRUE(pool.run(
      [&](size_t i, std::string &) {
        where = std::this_thread::get_id();
        return i == 0;
      },
      error));
  EXPECT_EQ(where, std::this_thread::get_id());
}

} // namespace
