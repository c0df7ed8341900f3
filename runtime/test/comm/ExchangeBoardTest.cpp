//===- ExchangeBoardTest.cpp - the shared-memory all-gather ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ranks as threads over a real bootstrap: many exchanges back to back with
// random delays per rank (both slots reused many times), every rank seeing
// every rank's message of the same exchange; a rank that stops exchanging
// makes the others fail after the timeout, naming it, and every later
// exchange fails the same way.
//
//===----------------------------------------------------------------------===//

#include "comm/ExchangeBoard.h"

#include <atomic>
#include <gtest/gtest.h>
#include <random>
#include <thread>

using namespace sdma::rt;

namespace {
template <typename Body>
std::vector<std::string> onRanks(int ranks, uint64_t timeoutMs, Body body) {
  UniqueId id;
  Error made;
  EXPECT_TRUE(createUniqueId(id, made)) << made.message;
  std::vector<std::string> failures(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      Error error;
      auto boot = Bootstrap::connect(id, r, ranks, 5000, error);
      if (!boot) {
        failures[r] = "connect: " + error.message;
        return;
      }
      Agreement agreement(*boot);
      ExchangeBoard board(agreement, timeoutMs);
      body(r, board, failures[r], *boot);
    });
  for (std::thread &t : threads)
    t.join();
  return failures;
}
/// "" where `board`'s exchange of `message` fails within `limit`, its
/// error naming `needle`; else what happened instead.
std::string
failsAtOnce(ExchangeBoard &board, const std::string &message,
            const std::string &needle,
            std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  std::vector<std::string> all;
  Error error;
  auto start = std::chrono::steady_clock::now();
  if (board.allGather(message, all, error))
    return "the " + message + " exchange succeeded";
  if (error.message.find(needle) == std::string::npos)
    return message + ": " + error.message;
  if (std::chrono::steady_clock::now() - start > limit)
    return message + ": it waited for the timeout";
  return "";
}
} // namespace

TEST(ExchangeBoard, ManyExchangesEveryMessageOfItsRound) {
  const int R = 4;
  auto failures = onRanks(
      R, 5000,
      [](int rank, ExchangeBoard &board, std::string &failure, Bootstrap &) {
        std::mt19937 random(rank);
        for (int round = 0; round < 300 && failure.empty(); ++round) {
          if (random() % 4 == 0)
            std::this_thread::sleep_for(
                std::chrono::microseconds(random() % 300));
          std::vector<std::string> all;
          Error error;
          std::string mine = "round " + std::to_string(round) + " rank " +
                             std::to_string(rank);
          if (!board.allGather(mine, all, error)) {
            failure = error.message;
            break;
          }
          if (round == 0 && !board.onSegment())
            failure = "the exchanges do not use the shared segment";
          for (int r = 0; r < R; ++r) {
            std::string want =
                "round " + std::to_string(round) + " rank " + std::to_string(r);
            if (all[r].substr(0, all[r].find('\0')) != want)
              failure = "round " + std::to_string(round) + ": rank " +
                        std::to_string(r) + " said '" + all[r].c_str() + "'";
          }
        }
      });
  for (int r = 0; r < R; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

TEST(ExchangeBoard, ARankThatStopsIsNamedAfterTheTimeout) {
  const int R = 3;
  std::atomic<int> finished{0};
  auto failures = onRanks(
      R, 300,
      [&](int rank, ExchangeBoard &board, std::string &failure, Bootstrap &) {
        std::vector<std::string> all;
        Error error;
        if (!board.allGather("first", all, error)) { // every rank: the segment
          failure = "first: " + error.message;
          return;
        }
        if (rank == 2) { // stops exchanging, its board kept
          while (finished.load() < 2)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return;
        }
        struct Finish {
          std::atomic<int> &count;
          ~Finish() { ++count; }
        } finish{finished};
        auto start = std::chrono::steady_clock::now();
        if (board.allGather("second", all, error))
          failure = "the second exchange succeeded without rank 2";
        else if (error.message.find("rank 2 did not reach") ==
                 std::string::npos)
          failure = "second: " + error.message;
        else if (std::chrono::steady_clock::now() - start <
                 std::chrono::milliseconds(250))
          failure = "failed before the timeout";
        if (board.allGather("third", all, error) ||
            error.message.find("rank 2 did not reach") == std::string::npos)
          failure += " the exchange after a timeout did not fail alike";
      });
  for (int r = 0; r < R; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

TEST(ExchangeBoard, AnInterruptEndsAWaitAtOnce) {
  std::atomic<bool> done{false};
  auto failures = onRanks(
      2, 20000,
      [&](int rank, ExchangeBoard &board, std::string &failure,
          Bootstrap &boot) {
        std::vector<std::string> all;
        Error error;
        if (!board.allGather("first", all, error)) {
          failure = "first: " + error.message;
          return;
        }
        if (rank == 1) { // never exchanges again
          while (!done)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return;
        }
        std::thread aborter([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          boot.interrupt("aborted here");
        });
        auto start = std::chrono::steady_clock::now();
        bool ok = board.allGather("second", all, error);
        auto took = std::chrono::steady_clock::now() - start;
        done = true;
        aborter.join();
        if (ok)
          failure = "the second exchange succeeded";
        else if (error.message.find("aborted here") == std::string::npos)
          failure = "second: " + error.message;
        else if (took > std::chrono::seconds(5))
          failure = "it waited for the timeout";
        if (board.allGather("third", all, error) ||
            error.message.find("aborted here") == std::string::npos)
          failure += " the next exchange did not fail "
                     "alike";
      });
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

// A rank whose communicator is aborted (Communicator::abort: the
// bootstrap's interrupt, then the board's abandon) marks its slots: the
// peers waiting on it fail at once, naming it, and so does every later
// exchange of theirs and of its own.
TEST(ExchangeBoard, AnAbortedRankIsNamedToItsPeersAtOnce) {
  const int R = 3;
  auto failures = onRanks(
      R, 20000,
      [](int rank, ExchangeBoard &board, std::string &failure,
         Bootstrap &boot) {
        std::vector<std::string> all;
        Error error;
        if (!board.allGather("first", all, error)) {
          failure = "first: " + error.message;
          return;
        }
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          boot.interrupt("aborted here");
          board.abandon();
          if (board.allGather("second", all, error) ||
              error.message.find("aborted here") == std::string::npos)
            failure = "the aborted rank's own exchange: " + error.message;
          return;
        }
        failure =
            failsAtOnce(board, "second", "rank 1 aborted its communicator") +
            failsAtOnce(board, "third", "rank 1 aborted its communicator");
      });
  for (int r = 0; r < R; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

// A rank that destroys its board (its communicator) while the others
// exchange: they fail at once, naming it.
TEST(ExchangeBoard, ARankThatLeavesIsNamedAtOnce) {
  auto failures = onRanks(
      3, 20000,
      [](int rank, ExchangeBoard &board, std::string &failure, Bootstrap &) {
        std::vector<std::string> all;
        Error error;
        if (!board.allGather("first", all, error)) {
          failure = "first: " + error.message;
          return;
        }
        if (rank == 2)
          return; // its board goes
        failure =
            failsAtOnce(board, "second", "rank 2 destroyed its communicator");
      });
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

// A rank whose exchange failed (here: its peer came too late) marks it: the
// late peer fails that exchange at once, naming it, rather than taking it
// alone and waiting out the next one.
TEST(ExchangeBoard, ARankWhoseExchangeFailedTellsTheLatePeer) {
  std::atomic<bool> timedOut{false};
  auto failures = onRanks(
      2, 300,
      [&](int rank, ExchangeBoard &board, std::string &failure, Bootstrap &) {
        std::vector<std::string> all;
        Error error;
        if (!board.allGather("first", all, error)) {
          failure = "first: " + error.message;
          return;
        }
        if (rank == 0) {
          if (board.allGather("second", all, error) ||
              error.message.find("rank 1 did not reach") == std::string::npos)
            failure = "second: " + error.message;
          timedOut = true;
          return; // (its board stays marked failed, not left)
        }
        while (!timedOut.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        failure =
            failsAtOnce(board, "second", "rank 0 failed a buffer exchange",
                        std::chrono::milliseconds(200));
      });
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

// A message longer than an exchange is cut and tagged with its hash, as
// the bootstrap's exchanges are (it was refused on its own rank alone,
// and the peers waited out the timeout).
TEST(ExchangeBoard, AMessageTooLongIsCutAsTheBootstrapCutsIt) {
  const std::string longOne(300, 'x');
  auto failures = onRanks(
      2, 20000,
      [&](int rank, ExchangeBoard &board, std::string &failure, Bootstrap &) {
        std::vector<std::string> all;
        Error error;
        if (!board.allGather("first", all, error)) {
          failure = "first: " + error.message;
          return;
        }
        if (!board.allGather(rank == 1 ? longOne : "short", all, error)) {
          failure = "second: " + error.message;
          return;
        }
        if (all[1] != exchangeText(longOne))
          failure = "rank 1's message arrived as '" +
                    all[1].substr(0, all[1].find('\0')) + "'";
      });
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}

// An abort that comes before the segment exists: the board marks the
// rank's slots once mapped, so the peers' first exchange on it fails at
// once.
TEST(ExchangeBoard, AnAbortBeforeTheSegmentIsMarkedWhenMapped) {
  auto failures = onRanks(
      3, 20000,
      [](int rank, ExchangeBoard &board, std::string &failure, Bootstrap &) {
        if (rank == 1)
          board.abandon();
        failure = failsAtOnce(board, "first",
                              rank == 1 ? "the communicator was aborted"
                                        : "rank 1 aborted its communicator");
        if (failure.empty() && !board.onSegment())
          failure = "the board is not on its segment";
      });
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(failures[r], "") << "rank " << r;
}
