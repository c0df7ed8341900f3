//===- BootstrapTest.cpp - ranks meet, gather, and fail by name -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ranks are threads here (the protocol is the same between processes; the
// multi-process CPU device runs it across processes).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Bootstrap.h"

#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <thread>

using namespace sdma::rt;

namespace {
/// Runs `body(rank)` for each of `ranks` ranks on its own thread; the error
/// each rank ended with ("" if none).
std::vector<std::string>
runRanks(int ranks, const std::function<bool(int, Error &)> &body) {
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      Error error;
      if (!body(r, error))
        errors[r] = error.empty() ? "failed" : error.message;
    });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

UniqueId makeId() {
  UniqueId id;
  Error error;
  EXPECT_TRUE(createUniqueId(id, error)) << error.message;
  return id;
}
} // namespace

TEST(Bootstrap, AllGatherAndBarrierAtEveryRankCount) {
  for (int ranks : {1, 2, 3, 4, 8}) {
    UniqueId id = makeId();
    std::vector<std::string> errors =
        runRanks(ranks, [&](int rank, Error &error) {
          auto boot = Bootstrap::connect(id, rank, ranks, 5000, error);
          if (!boot)
            return false;
          for (int round = 0; round < 3; ++round) {
            std::vector<std::string> all;
            std::string mine = "r" + std::to_string(rank) + "/" +
                               std::to_string(round) + std::string(7, 'x');
            mine.resize(12);
            if (!boot->allGather(mine, all, error))
              return false;
            for (int r = 0; r < ranks; ++r) {
              std::string want = "r" + std::to_string(r) + "/" +
                                 std::to_string(round) + std::string(7, 'x');
              want.resize(12);
              if (all[r] != want) {
                error.message =
                    "rank " + std::to_string(r) + "'s blob is wrong";
                return false;
              }
            }
            if (!boot->barrier(error))
              return false;
          }
          return true;
        });
    for (int r = 0; r < ranks; ++r)
      EXPECT_EQ(errors[r], "") << ranks << " ranks, rank " << r;
  }
}

TEST(Bootstrap, AMissingRankIsNamedOnEveryRank) {
  UniqueId id = makeId();
  std::vector<std::string> errors = runRanks(3, [&](int rank, Error &error) {
    if (rank == 1)
      return true; // never arrives
    return Bootstrap::connect(id, rank, 3, 300, error) != nullptr;
  });
  for (int r : {0, 2})
    EXPECT_NE(errors[r].find("rank 1 did not arrive within 300 ms"),
              std::string::npos)
        << errors[r];
}

TEST(Bootstrap, AForeignIdIsRefused) {
  UniqueId id = makeId();
  UniqueId forged = id;
  forged.bytes[20] ^= 1; // the secret differs, the address is the same
  Error error;
  EXPECT_FALSE(Bootstrap::connect(forged, 0, 1, 1000, error));
  EXPECT_NE(error.message.find("refused"), std::string::npos) << error.message;
  EXPECT_EQ(error.kind, ErrorKind::Remote);
  // The job itself still runs.
  auto boot = Bootstrap::connect(id, 0, 1, 1000, error);
  ASSERT_TRUE(boot) << error.message;
  EXPECT_TRUE(boot->barrier(error)) << error.message;
  UniqueId garbage;
  std::memset(garbage.bytes, 7, sizeof(garbage.bytes));
  EXPECT_FALSE(Bootstrap::connect(garbage, 0, 1, 1000, error));
  EXPECT_EQ(error.message.rfind("bootstrap: not an sdma unique id", 0), 0u)
      << error.message;
  EXPECT_EQ(error.kind, ErrorKind::InvalidArgument);
}

TEST(Bootstrap, DisagreeingRankCountsAndDuplicatesFailTheJob) {
  UniqueId id = makeId();
  Error error0, error1;
  std::thread first([&] { Bootstrap::connect(id, 0, 2, 2000, error0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Bootstrap::connect(id, 1, 3, 2000, error1));
  first.join();
  EXPECT_NE(error1.message.find(
                "rank 1 says the job has 3 ranks, earlier ranks said 2"),
            std::string::npos)
      << error1.message;
  EXPECT_NE(error0.message.find("says the job has 3 ranks"), std::string::npos)
      << error0.message;

  UniqueId id2 = makeId();
  std::thread again([&] { Bootstrap::connect(id2, 0, 2, 2000, error0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Bootstrap::connect(id2, 0, 2, 2000, error1));
  again.join();
  EXPECT_NE(error1.message.find("rank 0 joined twice"), std::string::npos)
      << error1.message;
}

TEST(Bootstrap, ARankThatLeavesOrGathersTheWrongSizeIsNamed) {
  UniqueId id = makeId();
  std::vector<std::string> errors = runRanks(3, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id, rank, 3, 2000, error);
    if (!boot)
      return false;
    if (rank == 2)
      return true; // leaves (its connection closes)
    std::vector<std::string> all;
    return boot->allGather("abcd", all, error);
  });
  EXPECT_EQ(errors[2], "");
  for (int r : {0, 1})
    EXPECT_NE(errors[r].find("rank 2 left the job"), std::string::npos)
        << errors[r];

  UniqueId id2 = makeId();
  errors = runRanks(2, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id2, rank, 2, 2000, error);
    std::vector<std::string> all;
    return boot && boot->allGather(std::string(rank ? 4 : 8, 'z'), all, error);
  });
  for (int r : {0, 1})
    EXPECT_NE(errors[r].find("all-gather: rank 1 gave 4 bytes, rank 0 gave 8"),
              std::string::npos)
        << errors[r];
}

TEST(Bootstrap, ARankThatNeverReachesTheAllGatherIsNamed) {
  UniqueId id = makeId();
  std::vector<std::string> errors = runRanks(2, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id, rank, 2, 300, error);
    if (!boot)
      return false;
    if (rank == 1) { // busy elsewhere, longer than the timeout
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return true;
    }
    std::vector<std::string> all;
    return boot->allGather("x", all, error);
  });
  EXPECT_NE(errors[0].find("rank 1 did not reach the all-gather within 300 ms"),
            std::string::npos)
      << errors[0];
}
