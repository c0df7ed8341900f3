//===- CoLaunchTest.cpp - ranks sharing a GPU context launch as one -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// CoLaunch: members' threads hand their launches in; the last starts the
// round as one group launch where the builds allow it, else each alone;
// a member that never comes fails the others' round after the timeout with
// its rank named and nothing started, and the room serves the next round.
// Fake kernels record what was started (no device).
//
//===----------------------------------------------------------------------===//

#include "comm/CoLaunch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace sdma::rt;

namespace {

/// What the fake kernels started: each launch a list of program ranks
/// (one: alone; several: one group launch).
struct Started {
  std::mutex mutex;
  std::vector<std::vector<int>> launches;
  void add(std::vector<int> ranks) {
    std::lock_guard<std::mutex> lock(mutex);
    launches.push_back(std::move(ranks));
  }
};

class FakeKernel : public CommKernel {
public:
  FakeKernel(Started &started, std::string key, int limit)
      : started_(started), key_(std::move(key)), limit_(limit) {}
  bool launch(const KernelLaunch &launch, std::string &error) override {
    if (failAlone) {
      error = "launch refused";
      return false;
    }
    started_.add({launch.programRank});
    return true;
  }
  std::string groupKey() const override { return key_; }
  int groupLimit() const override { return limit_; }
  bool launchGroup(const std::vector<const KernelLaunch *> &launches,
                   bool &started, std::string &error) override {
    started = false;
    if (throwGroup)
      throw std::runtime_error("no memory for the parameters");
    if (refuseGroup) {
      error = "group refused";
      return false;
    }
    std::vector<int> ranks;
    for (const KernelLaunch *l : launches)
      ranks.push_back(l->programRank);
    started_.add(ranks);
    started = true;
    return true;
  }
  bool refuseGroup = false, failAlone = false, throwGroup = false;

private:
  Started &started_;
  std::string key_;
  int limit_;
};

/// A launch of `rank` on a stream of its own (tests that share one say so).
CoLaunch::Hand hand(FakeKernel &kernel, int rank, bool lowLatency = false) {
  static int ownStream[64];
  CoLaunch::Hand h;
  h.kernel = &kernel;
  h.launch.programRank = rank;
  h.launch.stream = &ownStream[rank % 64];
  h.launch.chunkBytes = 64;
  h.launch.lowLatency = lowLatency;
  h.launch.table.assign(4, uint64_t(rank));
  return h;
}

/// Each rank of `ranks` hands `make(rank)` in on a thread of its own;
/// their errors by rank.
template <typename Make>
std::vector<std::vector<Error>> handAll(CoLaunch &room,
                                        const std::vector<int> &ranks,
                                        Make make, uint64_t timeoutMs = 5000) {
  std::vector<std::vector<Error>> errors(ranks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i)
    threads.emplace_back(
        [&, i] { room.launch({make(ranks[i])}, timeoutMs, errors[i]); });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

TEST(CoLaunch, TheLastToComeStartsEveryRankAsOneLaunch) {
  Started started;
  FakeKernel a(started, "k", 8), b(started, "k", 8), c(started, "k", 8);
  FakeKernel *of[] = {&a, &b, &c};
  CoLaunch room({0, 1, 2});
  for (int round = 0; round < 50; ++round) {
    auto errors =
        handAll(room, {0, 1, 2}, [&](int r) { return hand(*of[r], r); });
    for (auto &e : errors)
      ASSERT_TRUE(e[0].empty()) << e[0].message;
  }
  ASSERT_EQ(started.launches.size(), 50u);
  for (const auto &l : started.launches)
    EXPECT_EQ(l, (std::vector<int>{0, 1, 2})); // member order, one launch
}

TEST(CoLaunch, OneThreadMayHandSeveralMembers) {
  Started started;
  FakeKernel a(started, "k", 8);
  CoLaunch room({1, 4, 6});
  std::vector<Error> first, second;
  std::thread other([&] { room.launch({hand(a, 4)}, 5000, second); });
  EXPECT_TRUE(room.launch({hand(a, 6), hand(a, 1)}, 5000, first));
  other.join();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(first[0].empty() && first[1].empty() && second[0].empty());
  ASSERT_EQ(started.launches.size(), 1u);
  EXPECT_EQ(started.launches[0], (std::vector<int>{1, 4, 6}));
}

TEST(CoLaunch, LaunchesOneGroupCannotTakeStartAlone) {
  Started started;
  // Different builds; then more ranks than the build holds; then one
  // low-latency launch among barrier ones.
  FakeKernel k1(started, "k1", 8), k2(started, "k2", 8), small(started, "s", 2),
      same(started, "k1", 8);
  CoLaunch room({0, 1, 2});
  handAll(room, {0, 1, 2}, [&](int r) { return hand(r == 2 ? k2 : k1, r); });
  handAll(room, {0, 1, 2}, [&](int r) { return hand(small, r); });
  handAll(room, {0, 1, 2}, [&](int r) { return hand(same, r, r == 1); });
  ASSERT_EQ(started.launches.size(), 9u);
  for (const auto &l : started.launches)
    EXPECT_EQ(l.size(), 1u);
}

TEST(CoLaunch, ARefusedGroupLaunchFallsBackToEachAlone) {
  Started started;
  FakeKernel k(started, "k", 8);
  k.refuseGroup = true;
  CoLaunch room({0, 1});
  auto errors = handAll(room, {0, 1}, [&](int r) { return hand(k, r); });
  EXPECT_TRUE(errors[0][0].empty() && errors[1][0].empty());
  ASSERT_EQ(started.launches.size(), 2u);
  // Failing alone too: every member hears why, the group's refusal with it.
  k.failAlone = true;
  errors = handAll(room, {0, 1}, [&](int r) { return hand(k, r); });
  for (auto &e : errors) {
    EXPECT_EQ(e[0].kind, ErrorKind::Device);
    EXPECT_NE(e[0].message.find("launch refused"), std::string::npos);
    EXPECT_NE(e[0].message.find("group refused"), std::string::npos)
        << e[0].message;
  }
}

TEST(CoLaunch, AMemberThatNeverComesIsNamedAndNothingStarts) {
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 3, 5});
  auto errors = handAll(
      room, {0, 5}, [&](int r) { return hand(k, r); }, 100);
  for (auto &e : errors) {
    EXPECT_EQ(e[0].kind, ErrorKind::Remote);
    EXPECT_NE(e[0].message.find("rank 3 "), std::string::npos) << e[0].message;
    EXPECT_NE(e[0].message.find("nothing was started"), std::string::npos);
  }
  EXPECT_TRUE(started.launches.empty());
  // Withdrawn, and the room broken: which call each member makes next is
  // unknown, so the next round is refused at once on every member, naming
  // the first cause.
  errors = handAll(room, {0, 3, 5}, [&](int r) { return hand(k, r); });
  for (auto &e : errors) {
    EXPECT_NE(e[0].message.find("rank 3 "), std::string::npos) << e[0].message;
    EXPECT_NE(e[0].message.find("out of step from here on"), std::string::npos)
        << e[0].message;
  }
  EXPECT_TRUE(started.launches.empty());
}

// A member that withdrew call k (its peer came too late) and then hands in
// call k+1 beside the late peer's call k: refused, not launched as one
// round (calls of one signature would run on each other's data).
TEST(CoLaunch, AfterAWithdrawalRoundsDoNotPairDifferentCalls) {
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1});
  std::vector<Error> errors;
  EXPECT_FALSE(room.launch({hand(k, 0)}, 50, errors)); // call k: rank 1 late
  std::vector<Error> late, next;
  std::thread one([&] { room.launch({hand(k, 1)}, 1000, late); }); // its k
  EXPECT_FALSE(room.launch({hand(k, 0)}, 1000, next));             // k + 1
  one.join();
  EXPECT_NE(late[0].message.find("out of step"), std::string::npos)
      << late[0].message;
  EXPECT_NE(next[0].message.find("out of step"), std::string::npos)
      << next[0].message;
  EXPECT_TRUE(started.launches.empty());
}

// The first member to time out breaks the room: the others waiting in
// that round are told at once, not at their own (longer) timeouts.
TEST(CoLaunch, ATimeoutEndsTheOthersWaitsAtOnce) {
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1, 2});
  std::vector<Error> patient, hasty;
  auto begin = std::chrono::steady_clock::now();
  std::thread one([&] { room.launch({hand(k, 1)}, 60000, patient); });
  EXPECT_FALSE(room.launch({hand(k, 0)}, 100, hasty));
  one.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  EXPECT_NE(hasty[0].message.find("rank 2 "), std::string::npos)
      << hasty[0].message;
  EXPECT_NE(patient[0].message.find("rank 2 "), std::string::npos)
      << patient[0].message;
  EXPECT_NE(patient[0].message.find("out of step"), std::string::npos)
      << patient[0].message;
  EXPECT_TRUE(started.launches.empty());
}

TEST(CoLaunch, AWaitEndsAtOnceWhenTheRankMustStop) {
  // An abort while the others are awaited: the wait ends within
  // milliseconds with the stop's reason, long before the timeout.
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1});
  std::atomic<bool> aborted{false};
  auto stop = [&](Error &why) {
    if (!aborted)
      return false;
    why.fail(ErrorKind::InvalidUsage, "the communicator was aborted");
    return true;
  };
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    aborted = true;
  });
  std::vector<Error> errors;
  auto begin = std::chrono::steady_clock::now();
  EXPECT_FALSE(room.launch({hand(k, 0)}, 60000, errors, stop));
  aborter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  EXPECT_EQ(errors[0].kind, ErrorKind::InvalidUsage);
  EXPECT_EQ(errors[0].message, "the communicator was aborted");
  EXPECT_TRUE(started.launches.empty());
  // The room is broken: both are refused at once next time, with why, as
  // the others see it (Remote, naming the rank that stopped).
  auto all = handAll(room, {0, 1}, [&](int r) { return hand(k, r); });
  for (auto &e : all) {
    EXPECT_EQ(e[0].kind, ErrorKind::Remote);
    EXPECT_EQ(e[0].message.rfind("rank 0 stopped (its communicator was "
                                 "aborted or has failed: the communicator "
                                 "was aborted); the co-launched calls",
                                 0),
              0u)
        << e[0].message;
  }
  EXPECT_TRUE(started.launches.empty());
}

// An abort between calls (Communicator::abort tells the room): the others'
// next launches fail at once, naming the rank, not at the timeout.
TEST(CoLaunch, AnAbortBetweenCallsEndsTheOthersWaitsAtOnce) {
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1, 2});
  room.memberAborted(1);
  std::vector<Error> errors;
  auto begin = std::chrono::steady_clock::now();
  EXPECT_FALSE(room.launch({hand(k, 0)}, 60000, errors));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  EXPECT_EQ(errors[0].kind, ErrorKind::Remote);
  EXPECT_NE(errors[0].message.find("rank 1 (threads of this process on this "
                                   "GPU, whose calls start with this rank's) "
                                   "aborted its communicator"),
            std::string::npos)
      << errors[0].message;
  EXPECT_TRUE(started.launches.empty());
}

TEST(CoLaunch, ARankHandedTwiceOrNotAMemberIsAnInternalError) {
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1});
  std::vector<Error> errors;
  EXPECT_FALSE(room.launch({hand(k, 0), hand(k, 0)}, 100, errors));
  EXPECT_EQ(errors[0].kind, ErrorKind::Internal);
  EXPECT_FALSE(room.launch({hand(k, 7)}, 100, errors));
  EXPECT_EQ(errors[0].kind, ErrorKind::Internal);
  // Nothing was left handed in.
  auto all = handAll(room, {0, 1}, [&](int r) { return hand(k, r); });
  EXPECT_TRUE(all[0][0].empty() && all[1][0].empty());
  EXPECT_EQ(started.launches.size(), 1u);
}

/// A kernel on fake streams (ints) that logs how each is ordered: a mark
/// of a stream, the group launch's waits on marks, its end mark, a
/// stream's wait on it.
class MarkingKernel : public FakeKernel {
public:
  MarkingKernel(Started &started, std::vector<std::string> &log,
                std::mutex &mutex)
      : FakeKernel(started, "k", 8), log_(log), mutex_(mutex) {}
  bool markStream(void *stream, void *&mark, std::string &) override {
    mark = &marks_; // this kernel's mark, as a CUDA kernel's event
    say("mark " + name(stream));
    return true;
  }
  bool waitMark(void *stream, void *mark, std::string &) override {
    say(name(stream) + " waits for " +
        (mark == &end_ ? "its own end" : "the end of " + owner(mark)));
    return true;
  }
  bool launchGroupMarked(const std::vector<const KernelLaunch *> &launches,
                         bool &started, void *&after,
                         std::string &error) override {
    for (size_t i = 1; i < launches.size(); ++i)
      say(name(launches[0]->stream) + " waits for " +
          (launches[i]->before ? "the mark of " : "a new mark of ") +
          name(launches[i]->stream));
    after = &end_;
    return launchGroup(launches, started, error);
  }
  /// Whose end mark `mark` is (a kernel's own name).
  static std::string owner(void *mark) {
    for (auto &[k, n] : names())
      if (mark == &k->end_)
        return n;
    return "?";
  }
  static std::vector<std::pair<MarkingKernel *, std::string>> &names() {
    static std::vector<std::pair<MarkingKernel *, std::string>> all;
    return all;
  }
  std::string name(void *stream) {
    return "stream " + std::to_string(*static_cast<int *>(stream));
  }

private:
  void say(const std::string &line) {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back(line);
  }
  std::vector<std::string> &log_;
  std::mutex &mutex_;
  int marks_ = 0, end_ = 0;
};

TEST(CoLaunch, EachThreadOrdersItsOwnStreamWithOwnMarks) {
  // SDMA_COLAUNCH_MARKS=1: every rank marks its stream before it hands in,
  // the launch waits for the marks of the others' streams (not new ones),
  // and every rank on another stream than the launch's waits for its end
  // before it returns; rank 0's stream is the launch's.
  Started started;
  std::vector<std::string> log;
  std::mutex mutex;
  MarkingKernel k0(started, log, mutex), k1(started, log, mutex),
      k2(started, log, mutex);
  MarkingKernel *of[] = {&k0, &k1, &k2};
  MarkingKernel::names() = {{&k0, "rank 0's kernel"},
                            {&k1, "rank 1's kernel"},
                            {&k2, "rank 2's kernel"}};
  int streams[] = {10, 11, 12};
  CoLaunch room({0, 1, 2});
  room.setOwnMarks(true);
  auto errors = handAll(room, {0, 1, 2}, [&](int r) {
    CoLaunch::Hand h = hand(*of[r], r);
    h.launch.stream = &streams[r];
    return h;
  });
  for (auto &e : errors)
    EXPECT_TRUE(e[0].empty()) << e[0].message;
  ASSERT_EQ(started.launches.size(), 1u);
  std::sort(log.begin(), log.end());
  EXPECT_EQ(log, (std::vector<std::string>{
                     "mark stream 10", "mark stream 11", "mark stream 12",
                     "stream 10 waits for the mark of stream 11",
                     "stream 10 waits for the mark of stream 12",
                     "stream 11 waits for the end of rank 0's kernel",
                     "stream 12 waits for the end of rank 0's kernel"}));
  // Off (the default): the launching thread orders every stream itself.
  log.clear();
  CoLaunch plain({0, 1, 2});
  handAll(plain, {0, 1, 2}, [&](int r) {
    CoLaunch::Hand h = hand(*of[r], r);
    h.launch.stream = &streams[r];
    return h;
  });
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(started.launches.size(), 2u);
}

/// Ordered rooms: `streams` holds each rank's fake stream.
CoLaunch::Hand handOn(FakeKernel &kernel, int rank, int *streams) {
  CoLaunch::Hand h = hand(kernel, rank);
  h.launch.stream = &streams[rank];
  return h;
}

TEST(CoLaunch, OrderedMembersLaunchAloneAfterAFirstRoundTogether) {
  Started started;
  FakeKernel k(started, "k", 8);
  int streams[3] = {};
  CoLaunch room({0, 1, 2});
  room.setMode(CoLaunch::Mode::Ordered);
  for (int round = 0; round < 20; ++round) {
    auto errors =
        handAll(room, {0, 1, 2}, [&](int r) { return handOn(k, r, streams); });
    for (auto &e : errors)
      ASSERT_TRUE(e[0].empty()) << e[0].message;
    EXPECT_TRUE(room.ordered());
  }
  // The first round as one launch (every stream learnt), then each alone.
  ASSERT_EQ(started.launches.size(), 1u + 19u * 3u);
  EXPECT_EQ(started.launches[0], (std::vector<int>{0, 1, 2}));
  for (size_t i = 1; i < started.launches.size(); ++i)
    EXPECT_EQ(started.launches[i].size(), 1u);
}

TEST(CoLaunch, OrderedMembersSharingAStreamStayTogether) {
  // One stream for every member (a kernel alone would sit behind a peer's
  // that waits for it): every round stays one launch.
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1});
  room.setMode(CoLaunch::Mode::Ordered);
  int stream = 0;
  for (int round = 0; round < 5; ++round)
    handAll(room, {0, 1}, [&](int r) {
      CoLaunch::Hand h = hand(k, r);
      h.launch.stream = &stream;
      return h;
    });
  EXPECT_FALSE(room.ordered());
  ASSERT_EQ(started.launches.size(), 5u);
  for (const auto &l : started.launches)
    EXPECT_EQ(l, (std::vector<int>{0, 1}));
}

/// A fake kernel that logs (rank, the rank's launch count) in the order
/// launches were made, across every rank.
class CountingKernel : public FakeKernel {
public:
  CountingKernel(Started &started, std::vector<std::pair<int, int>> &order,
                 std::mutex &mutex)
      : FakeKernel(started, "k", 8), order_(order), mutex_(mutex) {}
  bool launch(const KernelLaunch &launch, std::string &error) override {
    std::lock_guard<std::mutex> lock(mutex_);
    order_.emplace_back(launch.programRank, count_[launch.programRank]++);
    return true;
  }
  bool launchGroup(const std::vector<const KernelLaunch *> &launches,
                   bool &started, std::string &error) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const KernelLaunch *l : launches)
      order_.emplace_back(l->programRank, count_[l->programRank]++);
    started = true;
    return true;
  }

private:
  std::vector<std::pair<int, int>> &order_;
  std::mutex &mutex_;
  std::map<int, int> count_;
};

TEST(CoLaunch, NoOrderedLaunchOvertakesAPeersLaunchOfTheRoundBefore) {
  // Four ranks, 300 calls each with random delays: a rank's k-th launch
  // is never made before every rank's (k-1)-th (what keeps a hardware
  // queue's kernels of one round ahead of the next round's).
  Started started;
  std::vector<std::pair<int, int>> order;
  std::mutex mutex;
  CountingKernel k(started, order, mutex);
  int streams[4] = {};
  CoLaunch room({0, 1, 2, 3});
  room.setMode(CoLaunch::Mode::Ordered);
  const int calls = 300;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      unsigned seed = 17u * unsigned(r + 1);
      for (int c = 0; c < calls; ++c) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 4 == 0)
          std::this_thread::sleep_for(
              std::chrono::microseconds((seed >> 8) % 300));
        std::vector<Error> errors;
        if (!room.launch({handOn(k, r, streams)}, 5000, errors))
          ++failures;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(order.size(), size_t(4 * calls));
  std::vector<int> made(4, 0);
  for (auto [rank, k] : order) {
    for (int other = 0; other < 4; ++other)
      ASSERT_GE(made[other], k)
          << "rank " << rank << "'s launch " << k << " before rank " << other
          << "'s launch " << k - 1;
    made[rank] = k + 1;
  }
  EXPECT_TRUE(room.ordered());
}

/// An ordered room of `members` (ranks below 8), each on a stream of its
/// own, past its first round (together): its launches in `started`.
struct OrderedRoom {
  Started started;
  FakeKernel k{started, "k", 8};
  int streams[8] = {};
  CoLaunch room;
  explicit OrderedRoom(const std::vector<int> &members) : room(members) {
    room.setMode(CoLaunch::Mode::Ordered);
    handAll(room, members, [&](int r) { return on(r); });
  }
  CoLaunch::Hand on(int rank) { return handOn(k, rank, streams); }
};

TEST(CoLaunch, AnOrderedMemberWaitsForThePreviousRoundThenIsNamed) {
  OrderedRoom o({0, 1, 2});
  CoLaunch &room = o.room;
  auto &started = o.started;
  // Rank 0 and 2 make call 2; rank 0 then makes call 3 while rank 1 has
  // not made call 2: refused after the timeout, rank 1 named, nothing
  // started; the room is broken, so rank 1's call 2 and rank 0's next are
  // refused at once.
  handAll(room, {0, 2}, [&](int r) { return o.on(r); });
  size_t before = started.launches.size();
  std::vector<Error> errors;
  EXPECT_FALSE(room.launch({o.on(0)}, 50, errors));
  EXPECT_EQ(errors[0].kind, ErrorKind::Remote);
  EXPECT_NE(errors[0].message.find("rank 1 "), std::string::npos)
      << errors[0].message;
  EXPECT_EQ(errors[0].message.find("rank 2"), std::string::npos);
  EXPECT_NE(errors[0].message.find("nothing was started"), std::string::npos);
  EXPECT_EQ(started.launches.size(), before);
  auto more = handAll(room, {1, 0}, [&](int r) { return o.on(r); });
  for (auto &e : more)
    EXPECT_NE(e[0].message.find("out of step"), std::string::npos)
        << e[0].message;
  EXPECT_EQ(started.launches.size(), before);
}

TEST(CoLaunch, TwoOrderedMembersOnOneStreamInOneRoundAreRefused) {
  OrderedRoom o({0, 1});
  CoLaunch &room = o.room;
  auto &started = o.started;
  std::vector<Error> errors;
  ASSERT_TRUE(room.launch({o.on(0)}, 1000, errors));
  // Rank 1's call on rank 0's stream: behind rank 0's launch, which waits
  // for it.
  CoLaunch::Hand h = hand(o.k, 1);
  h.launch.stream = &o.streams[0];
  EXPECT_FALSE(room.launch({h}, 1000, errors));
  EXPECT_EQ(errors[0].kind, ErrorKind::InvalidUsage);
  EXPECT_NE(errors[0].message.find("rank 1's launch would go on a stream "
                                   "behind rank 0's, which waits for it"),
            std::string::npos)
      << errors[0].message;
  EXPECT_EQ(started.launches.size(), 2u);
  // On its own stream it goes.
  EXPECT_TRUE(room.launch({o.on(1)}, 1000, errors));
  EXPECT_EQ(started.launches.size(), 3u);
}

// The last launch on a stream is whoever made it, not each member's own
// last: a member that moved to another stream still left its launch on
// the first, and a peer's launch there behind it is refused where that
// launch waits for it (case a), or held until what it waits for is in
// (case c: a launch of the next round behind a peer's of this one).
TEST(CoLaunch, AnOrderedLaunchSeesWhoeverLaunchedLastOnItsStream) {
  {
    OrderedRoom o({0, 1});
    std::vector<Error> errors;
    ASSERT_TRUE(o.room.launch({o.on(0)}, 1000, errors)); // call 1 on S0
    int other = 0;
    CoLaunch::Hand moved = hand(o.k, 0);
    moved.launch.stream = &other; // call 2 on a stream of its own
    std::vector<Error> movedErrors;
    std::thread two([&] { o.room.launch({moved}, 5000, movedErrors); });
    // Rank 1's call 1 on S0: behind rank 0's call 1, which waits for it.
    CoLaunch::Hand behind = hand(o.k, 1);
    behind.launch.stream = &o.streams[0];
    EXPECT_FALSE(o.room.launch({behind}, 1000, errors));
    EXPECT_EQ(errors[0].kind, ErrorKind::InvalidUsage);
    EXPECT_NE(errors[0].message.find("behind rank 0's, which waits for it"),
              std::string::npos)
        << errors[0].message;
    // On its own stream it goes, and rank 0's call 2 with it.
    EXPECT_TRUE(o.room.launch({o.on(1)}, 1000, errors)) << errors[0].message;
    two.join();
    EXPECT_TRUE(movedErrors[0].empty()) << movedErrors[0].message;
  }
  {
    OrderedRoom o({0, 1, 2});
    std::vector<Error> errors;
    ASSERT_TRUE(o.room.launch({o.on(0)}, 1000, errors)); // call 1 on S0
    ASSERT_TRUE(o.room.launch({o.on(1)}, 1000, errors)); // call 1 on S1
    // Rank 1's call 2 on S0, behind rank 0's call 1 (which waits for rank
    // 2's call 1): held until rank 2 has launched it.
    CoLaunch::Hand behind = hand(o.k, 1);
    behind.launch.stream = &o.streams[0];
    std::atomic<bool> through{false};
    std::vector<Error> behindErrors;
    std::thread two(
        [&] { through = o.room.launch({behind}, 5000, behindErrors); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(through.load());
    EXPECT_EQ(o.started.launches.size(), 3u); // round 0, two of call 1
    EXPECT_TRUE(o.room.launch({o.on(2)}, 1000, errors)) << errors[0].message;
    two.join();
    EXPECT_TRUE(through.load()) << behindErrors[0].message;
    EXPECT_EQ(o.started.launches.size(), 5u);
  }
}

// An ordered launch that failed to start: the peers' launches of that
// round are in and wait for it, so the room is out of step; the next
// launches are refused at once, naming the failure.
TEST(CoLaunch, AFailedOrderedLaunchBreaksTheRoom) {
  OrderedRoom o({0, 1});
  std::vector<Error> errors;
  o.k.failAlone = true;
  EXPECT_FALSE(o.room.launch({o.on(0)}, 1000, errors)); // rank 0 call 1
  EXPECT_EQ(errors[0].kind, ErrorKind::Device);
  o.k.failAlone = false;
  EXPECT_FALSE(o.room.launch({o.on(1)}, 1000, errors));
  EXPECT_NE(errors[0].message.find("rank 0's launch failed (launch refused)"),
            std::string::npos)
      << errors[0].message;
  EXPECT_EQ(o.started.launches.size(), 1u); // round 0 alone
}

// A group's hands on one stream in an ordered room go as one launch or not
// at all (one by one, the later would wait behind the earlier).
TEST(CoLaunch, OrderedHandsOnOneStreamThatCannotGoAsOneAreRefused) {
  OrderedRoom o({0, 1, 2});
  o.k.refuseGroup = true;
  int shared = 0;
  std::vector<CoLaunch::Hand> hands = {hand(o.k, 0), hand(o.k, 1)};
  for (CoLaunch::Hand &h : hands)
    h.launch.stream = &shared;
  std::vector<Error> errors;
  EXPECT_FALSE(o.room.launch(hands, 1000, errors));
  for (const Error &e : errors)
    EXPECT_NE(e.message.find("share a stream"), std::string::npos) << e.message;
  EXPECT_EQ(o.started.launches.size(), 1u); // round 0 alone
}

TEST(CoLaunch, AnOrderedWaitEndsAtOnceWhenTheRankMustStop) {
  OrderedRoom o({0, 1});
  CoLaunch &room = o.room;
  auto &started = o.started;
  std::vector<Error> errors;
  ASSERT_TRUE(room.launch({o.on(0)}, 1000, errors));
  auto stop = [](Error &why) {
    why.fail(ErrorKind::InvalidUsage, "the communicator was aborted");
    return true;
  };
  auto begin = std::chrono::steady_clock::now();
  EXPECT_FALSE(room.launch({o.on(0)}, 60000, errors, stop));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  EXPECT_EQ(errors[0].message, "the communicator was aborted");
  EXPECT_EQ(started.launches.size(), 2u);
}

TEST(CoLaunch, SeveralOrderedMembersOfOneThreadLaunchAsOne) {
  OrderedRoom o({0, 1, 2});
  CoLaunch &room = o.room;
  auto &started = o.started;
  std::vector<Error> first, second;
  std::thread other([&] { room.launch({o.on(2)}, 5000, second); });
  EXPECT_TRUE(room.launch({o.on(0), o.on(1)}, 5000, first));
  other.join();
  EXPECT_TRUE(second[0].empty());
  ASSERT_EQ(started.launches.size(), 3u);
  std::vector<std::vector<int>> later(started.launches.begin() + 1,
                                      started.launches.end());
  std::sort(later.begin(), later.end());
  EXPECT_EQ(later, (std::vector<std::vector<int>>{{0, 1}, {2}}));
}

TEST(CoLaunch, OneOfSeveralOrderedMembersFailingLeavesTheOthersLaunched) {
  // Ranks 0 and 1 from one thread with builds one launch cannot take:
  // each alone; rank 1's fails. Rank 0's kernel was enqueued, so its call
  // succeeded and its round is spent. Rank 1's peers' kernels of the call
  // wait for its own: the room is out of step, and rank 1's retry is
  // refused at once, naming the failure (launched, it would pair with the
  // peers' next call).
  OrderedRoom o({0, 1, 2});
  FakeKernel other(o.started, "other", 8);
  auto onOther = [&](int rank) { return handOn(other, rank, o.streams); };
  size_t before = o.started.launches.size();
  std::vector<Error> errors, third;
  ASSERT_TRUE(o.room.launch({o.on(2)}, 5000, third)) << third[0].message;
  other.failAlone = true;
  EXPECT_FALSE(o.room.launch({o.on(0), onOther(1)}, 5000, errors));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_TRUE(errors[0].empty()) << errors[0].message;
  EXPECT_EQ(errors[1].kind, ErrorKind::Device);
  EXPECT_NE(errors[1].message.find("launch refused"), std::string::npos)
      << errors[1].message;
  other.failAlone = false;
  errors.clear();
  EXPECT_FALSE(o.room.launch({onOther(1)}, 5000, errors));
  EXPECT_NE(errors[0].message.find("rank 1's launch failed (launch refused)"),
            std::string::npos)
      << errors[0].message;
  std::vector<std::vector<int>> later(o.started.launches.begin() + before,
                                      o.started.launches.end());
  std::sort(later.begin(), later.end());
  EXPECT_EQ(later, (std::vector<std::vector<int>>{{0}, {2}}));
}

TEST(CoLaunch, APointToPointLaunchGatesTheSendersNextLaunch) {
  // Rank 0 sends rank 1 ten chunks (depth 4): its kernel waits for rank
  // 1's receives through chunk 6, so rank 0's next launch waits until rank
  // 1 has launched them (held, nothing started); rank 1's receive then
  // lets it go.
  OrderedRoom o({0, 1});
  int launches = 0;
  auto start = [&](std::string &) {
    ++launches;
    return true;
  };
  Error error;
  ASSERT_EQ(o.room.launchPeer(0, &o.streams[0], true, {0, 10}, {0, 0}, 4, 1000,
                              start, error),
            CoLaunch::PeerStart::Started);
  std::vector<Error> errors;
  std::atomic<bool> through{false};
  std::thread next([&] { through = o.room.launch({o.on(0)}, 5000, errors); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(through.load());
  EXPECT_EQ(o.started.launches.size(), 1u); // round 0 alone
  ASSERT_EQ(o.room.launchPeer(1, &o.streams[1], true, {0, 0}, {10, 0}, 4, 1000,
                              start, error),
            CoLaunch::PeerStart::Started);
  next.join();
  EXPECT_TRUE(through.load()) << errors[0].message;
  // A receive's launch waits for nothing behind it once the sends are in;
  // a send within the ring's depth waits for no receive.
  EXPECT_TRUE(o.room.launch({o.on(1)}, 1000, errors)) << errors[0].message;
  ASSERT_EQ(o.room.launchPeer(0, &o.streams[0], true, {0, 13}, {0, 0}, 4, 1000,
                              start, error),
            CoLaunch::PeerStart::Started);
  EXPECT_TRUE(o.room.launch({o.on(0)}, 50, errors)) << errors[0].message;
  EXPECT_EQ(o.started.launches.size(), 4u);
  EXPECT_EQ(launches, 3);
}

TEST(CoLaunch, AReceiveGatesTheReceiversNextLaunchUntilTheSendIsIn) {
  auto start = [](std::string &) { return true; };
  Error error;
  std::vector<Error> errors;
  {
    // Past the timeout, only the sender awaited is named.
    OrderedRoom o({0, 1, 2});
    ASSERT_EQ(o.room.launchPeer(2, &o.streams[2], true, {0, 0, 0}, {3, 0, 0}, 4,
                                1000, start, error),
              CoLaunch::PeerStart::Started);
    EXPECT_FALSE(o.room.launch({o.on(2)}, 50, errors));
    EXPECT_NE(errors[0].message.find("rank 0 "), std::string::npos)
        << errors[0].message;
    EXPECT_EQ(errors[0].message.find("rank 1"), std::string::npos);
  }
  OrderedRoom o({0, 1, 2});
  ASSERT_EQ(o.room.launchPeer(2, &o.streams[2], true, {0, 0, 0}, {3, 0, 0}, 4,
                              1000, start, error),
            CoLaunch::PeerStart::Started);
  std::atomic<bool> through{false};
  std::thread next([&] { through = o.room.launch({o.on(2)}, 5000, errors); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(through.load());
  ASSERT_EQ(o.room.launchPeer(0, &o.streams[0], true, {0, 0, 3}, {0, 0, 0}, 4,
                              1000, start, error),
            CoLaunch::PeerStart::Started);
  next.join();
  EXPECT_TRUE(through.load()) << errors[0].message;
  // Outside an ordered room nothing waits, but the counts are noted.
  CoLaunch together({0, 1});
  EXPECT_EQ(together.launchPeer(0, nullptr, true, {0, 0}, {0, 9}, 4, 50, start,
                                error),
            CoLaunch::PeerStart::Started);
  EXPECT_EQ(together.launchPeer(0, nullptr, true, {0, 0}, {0, 10}, 4, 50, start,
                                error),
            CoLaunch::PeerStart::Started);
  // A launch that fails is Failed, with the device's reason.
  auto refuse = [](std::string &why) {
    why = "no launch";
    return false;
  };
  EXPECT_EQ(o.room.launchPeer(1, &o.streams[1], true, {0, 0, 0}, {0, 0, 0}, 4,
                              50, refuse, error),
            CoLaunch::PeerStart::Failed);
  EXPECT_EQ(error.kind, ErrorKind::Device);
  EXPECT_EQ(error.message, "no launch");
}

TEST(CoLaunch, OnlyALaunchOnTheSameStreamWaitsBehindAPointToPointOne) {
  // Rank 0 receives from rank 1 on a stream of its own: its all-gather on
  // its usual stream does not queue behind that receive, so it goes at
  // once; rank 1's all-gather, then its send, go too (a gate per member
  // alone would hold both until the timeout).
  OrderedRoom o({0, 1});
  auto start = [](std::string &) { return true; };
  int side = 0;
  Error error;
  ASSERT_EQ(
      o.room.launchPeer(0, &side, true, {0, 0}, {0, 1}, 4, 1000, start, error),
      CoLaunch::PeerStart::Started);
  std::vector<Error> errors;
  EXPECT_TRUE(o.room.launch({o.on(0)}, 50, errors)) << errors[0].message;
  EXPECT_TRUE(o.room.launch({o.on(1)}, 50, errors)) << errors[0].message;
  EXPECT_EQ(o.room.launchPeer(1, &o.streams[1], true, {1, 0}, {0, 0}, 4, 50,
                              start, error),
            CoLaunch::PeerStart::Started);
  // Back on the side stream, rank 0's next launch finds the send in.
  CoLaunch::Hand h = o.on(0);
  h.launch.stream = &side;
  EXPECT_TRUE(o.room.launch({h}, 50, errors)) << errors[0].message;
}

TEST(CoLaunch, ALaunchThatRunsBeforeItReturnsIsNotGated) {
  // The CPU device's kernels wait in no hardware queue: a receive whose
  // send is not in does not hold the rank's next launch (gating it could
  // hold up the peer the running launch waits for).
  OrderedRoom o({0, 1});
  auto start = [](std::string &) { return true; };
  Error error;
  ASSERT_EQ(o.room.launchPeer(0, &o.streams[0], false, {0, 0}, {0, 3}, 4, 50,
                              start, error),
            CoLaunch::PeerStart::Started);
  EXPECT_EQ(o.room.launchPeer(0, &o.streams[0], false, {0, 0}, {0, 4}, 4, 50,
                              start, error),
            CoLaunch::PeerStart::Started);
}

/// A fake kernel whose launches block until released (a launch in flight).
class SlowKernel : public FakeKernel {
public:
  using FakeKernel::FakeKernel;
  bool launch(const KernelLaunch &launch, std::string &error) override {
    std::unique_lock<std::mutex> lock(mutex_);
    inside_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
    return FakeKernel::launch(launch, error);
  }
  void awaitInside() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return inside_; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool inside_ = false, released_ = false;
};

TEST(CoLaunch, ASameStreamLaunchIsRefusedWhileThePeersIsInFlight) {
  // Rank 0's launch of a round is still being made on stream 0 when rank
  // 1 comes with the same round on stream 0: refused, not queued behind it.
  Started started;
  FakeKernel k(started, "k", 8);
  int streams[2] = {};
  CoLaunch room({0, 1});
  room.setMode(CoLaunch::Mode::Ordered);
  handAll(room, {0, 1}, [&](int r) { return handOn(k, r, streams); });
  SlowKernel held(started, "k", 8);
  std::vector<Error> first;
  std::thread zero(
      [&] { room.launch({handOn(held, 0, streams)}, 5000, first); });
  held.awaitInside();
  CoLaunch::Hand h = hand(k, 1);
  h.launch.stream = &streams[0];
  std::vector<Error> errors;
  EXPECT_FALSE(room.launch({h}, 1000, errors));
  EXPECT_EQ(errors[0].kind, ErrorKind::InvalidUsage);
  held.release();
  zero.join();
  EXPECT_TRUE(first[0].empty()) << first[0].message;
}

TEST(CoLaunch, MembersOfOneJobShareARoom) {
  auto a = CoLaunch::join(42, {0, 1});
  auto b = CoLaunch::join(42, {0, 1});
  auto other = CoLaunch::join(43, {0, 1});
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), other.get());
  EXPECT_EQ(a->members(), (std::vector<int>{0, 1}));
}

} // namespace

// A round whose launch throws fails every member's call with why, and the
// room goes on: the next round starts (the waits ended as for any round).
TEST(CoLaunch, ARoundWhoseLaunchThrowsFailsAndTheRoomGoesOn) {
  Started started;
  FakeKernel k(started, "k", 8);
  CoLaunch room({0, 1});
  k.throwGroup = true;
  auto errors = handAll(room, {0, 1}, [&](int r) { return hand(k, r); });
  for (auto &e : errors)
    EXPECT_NE(e[0].message.find("starting the launch: no memory for the "
                                "parameters"),
              std::string::npos)
        << e[0].message;
  EXPECT_TRUE(started.launches.empty());
  k.throwGroup = false;
  errors = handAll(room, {0, 1}, [&](int r) { return hand(k, r); });
  for (auto &e : errors)
    EXPECT_TRUE(e[0].empty()) << e[0].message;
  EXPECT_EQ(started.launches.size(), 1u);
}

// Members on one stream whose round one launch cannot take: launched one
// by one they would wait for each other, so none starts, and why is said.
TEST(CoLaunch, MembersOnOneStreamThatCannotLaunchAsOneAreRefused) {
  Started started;
  FakeKernel k(started, "k", 8);
  k.refuseGroup = true;
  CoLaunch room({0, 1});
  int stream = 0;
  auto errors = handAll(room, {0, 1}, [&](int r) {
    CoLaunch::Hand h = hand(k, r);
    h.launch.stream = &stream;
    return h;
  });
  for (auto &e : errors) {
    EXPECT_NE(e[0].message.find("rank 0 and rank 1 (threads of this process "
                                "on this GPU) launch on one stream"),
              std::string::npos)
        << e[0].message;
    EXPECT_NE(e[0].message.find("group refused"), std::string::npos)
        << e[0].message;
  }
  EXPECT_TRUE(started.launches.empty());
}
