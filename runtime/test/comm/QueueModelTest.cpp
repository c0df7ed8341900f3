//===- QueueModelTest.cpp - the ordered gate against hardware queues ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Why CoLaunch's ordered mode cannot deadlock, checked rather than argued.
// A model of a GPU's hardware queues (CUDA_DEVICE_MAX_CONNECTIONS): each
// stream feeds one FIFO queue; a queue's head is dispatched once its
// stream's previous kernel has finished, and blocks the kernels behind it
// until then (the false dependency that hung 8 ranks as threads, session
// 65). Dispatched kernels run side by side and finish by the protocols'
// rules:
//
//   collective k     once every rank's k-th collective kernel is running
//                    (its barrier);
//   send, c chunks   chunk i once chunk i - depth was received (the ring);
//   receive          chunk i once it was sent.
//
//   one queue, no gate:  rank 0: [coll 1][coll 2]  rank 1: [coll 1]
//                        queue: coll 1 (rank 0, running) | coll 2 (rank 0,
//                        waits for its coll 1) | coll 1 (rank 1, never
//                        dispatched): deadlock.
//
// Random programs (collectives and point-to-point messages of every rank,
// consistent as a job's are) run on threads through the real CoLaunch with
// random delays; fake kernels log the order in which they are enqueued and
// on which stream. Each rank launches on one stream of its own, or on
// either of two of its own at random (the gate looks at a stream's last
// launch, not a rank's). Every log, on one queue, two and one a stream,
// must finish in the model. (Ranks of different threads sharing a stream
// can deadlock whatever the gate does, a launch behind a peer's that waits
// for a later launch of a rank that waits for it: the gate refuses a
// launch only behind one that waits for itself, and times out on the
// others; CoLaunchTest has those cases.) A GPU that
// dispatches nothing until every launch is enqueued is the worst case (a
// dispatch only takes a kernel off a queue's head), so each log is checked
// that way. Mutants: the same programs launched with no gate, and gated for
// a deeper ring than the kernel's, must each deadlock the model in some run.
// The model assumes what the kernels are sized for: every dispatched kernel
// is resident at once.
//
//===----------------------------------------------------------------------===//

#include "comm/CoLaunch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>

using namespace sdma::rt;

namespace {

/// One launch of a rank's program: a collective (peer < 0) or a message of
/// `chunks` chunks to (send) or from `peer`.
struct Op {
  int peer = -1;
  bool send = false;
  uint64_t chunks = 0;
};

/// A job's programs: a script of steps every rank agrees on (a collective
/// of all, or a message between two), each rank's program its part.
std::vector<std::vector<Op>> randomPrograms(int ranks, int steps,
                                            std::mt19937 &random) {
  std::vector<std::vector<Op>> programs(ranks);
  for (int s = 0; s < steps; ++s) {
    if (random() % 3 == 0) {
      for (auto &p : programs)
        p.push_back(Op{});
      continue;
    }
    int from = int(random() % ranks);
    int to = int((from + 1 + random() % (ranks - 1)) % ranks);
    uint64_t chunks = 1 + random() % 10;
    programs[from].push_back(Op{to, true, chunks});
    programs[to].push_back(Op{from, false, chunks});
  }
  return programs;
}

/// A kernel as enqueued: its rank and its op, numbered (a collective's
/// round; a message's first chunk of its pair), and its stream.
struct Enqueued {
  int rank;
  Op op;
  uint64_t number;
  int stream = -1; // -1: the rank's own (`rank`)
  int on() const { return stream < 0 ? rank : stream; }
};

/// The hardware queues' model: whether the kernels `log` enqueued (in that
/// order) all finish with stream s on queue `queueOf[s]`, and if not a
/// picture of the queues' heads.
bool finishes(const std::vector<Enqueued> &log, int ranks,
              const std::vector<int> &queueOf, uint64_t depth,
              std::string &stuck) {
  const size_t n = log.size();
  std::vector<std::vector<size_t>> queues(
      *std::max_element(queueOf.begin(), queueOf.end()) + 1);
  std::vector<long> previous(n, -1), last(queueOf.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    queues[queueOf[log[i].on()]].push_back(i);
    previous[i] = last[log[i].on()];
    last[log[i].on()] = long(i);
  }
  std::vector<size_t> head(queues.size(), 0);
  std::vector<bool> running(n, false), done(n, false);
  std::vector<uint64_t> progress(n, 0);
  // Chunks sent [from][to] and received [to][from], by pair.
  std::vector<std::vector<uint64_t>> sent(ranks, std::vector<uint64_t>(ranks)),
      received = sent;
  std::map<uint64_t, int> runningOfRound;
  size_t finished = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t q = 0; q < queues.size(); ++q)
      while (head[q] < queues[q].size()) {
        size_t k = queues[q][head[q]];
        if (previous[k] >= 0 && !done[previous[k]])
          break;
        running[k] = true;
        if (log[k].op.peer < 0)
          ++runningOfRound[log[k].number];
        ++head[q];
        moved = true;
      }
    for (size_t k = 0; k < n; ++k) {
      if (!running[k] || done[k])
        continue;
      const Enqueued &e = log[k];
      const uint64_t before = progress[k];
      if (e.op.peer < 0) {
        done[k] = runningOfRound[e.number] == ranks;
      } else if (e.op.send) {
        uint64_t &s = sent[e.rank][e.op.peer];
        while (progress[k] < e.op.chunks && s == e.number + progress[k] &&
               s < received[e.op.peer][e.rank] + depth)
          ++s, ++progress[k];
        done[k] = progress[k] == e.op.chunks;
      } else {
        uint64_t &r = received[e.rank][e.op.peer];
        while (progress[k] < e.op.chunks && r == e.number + progress[k] &&
               r < sent[e.op.peer][e.rank])
          ++r, ++progress[k];
        done[k] = progress[k] == e.op.chunks;
      }
      moved |= progress[k] != before;
      if (done[k]) {
        ++finished;
        moved = true;
      }
    }
  }
  if (finished == n)
    return true;
  stuck.clear();
  for (size_t q = 0; q < queues.size(); ++q) {
    stuck += "queue " + std::to_string(q) + ":";
    for (size_t i = head[q]; i < queues[q].size() && i < head[q] + 3; ++i) {
      const Enqueued &e = log[queues[q][i]];
      stuck += " rank " + std::to_string(e.rank) +
               (e.op.peer < 0 ? " coll " + std::to_string(e.number)
                              : (e.op.send ? " send to " : " recv from ") +
                                    std::to_string(e.op.peer));
    }
    stuck += "; ";
  }
  return false;
}

/// A fake kernel that logs each launch as enqueued (a group launch: each
/// of its ranks in turn).
class LoggingKernel : public CommKernel {
public:
  LoggingKernel(std::vector<Enqueued> &log, std::mutex &mutex,
                const int *streams)
      : log_(log), mutex_(mutex), streams_(streams) {}
  bool launch(const KernelLaunch &launch, std::string &) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log_.push_back({launch.programRank, Op{}, launch.table[0], id(launch)});
    return true;
  }
  std::string groupKey() const override { return "k"; }
  int groupLimit() const override { return 8; }
  bool launchGroup(const std::vector<const KernelLaunch *> &launches,
                   bool &started, std::string &) override {
    std::lock_guard<std::mutex> lock(mutex_);
    // One kernel ordered after every rank's stream and before what each
    // gets next: in the model, each rank's part on its own stream.
    for (const KernelLaunch *l : launches)
      log_.push_back({l->programRank, Op{}, l->table[0], id(*l)});
    started = true;
    return true;
  }
  int id(const KernelLaunch &launch) const {
    return int(static_cast<const int *>(launch.stream) - streams_);
  }

private:
  std::vector<Enqueued> &log_;
  std::mutex &mutex_;
  const int *streams_;
};

/// How the programs' launches reach the log.
enum class Launch { Gated, Ungated, GatedDeeper };

/// Which streams a rank launches on (2 x ranks streams: rank r's own r and
/// ranks + r).
enum class Streams { OwnOne, OwnTwo };

/// Runs `programs` (after a first collective of every rank) on a thread a
/// rank, each launch after a random delay; the log of enqueues, or "" and
/// `failure` where a launch was refused.
std::vector<Enqueued> runJob(const std::vector<std::vector<Op>> &programs,
                             Launch how, uint64_t depth, unsigned seed,
                             std::string &failure,
                             Streams use = Streams::OwnOne) {
  const int ranks = int(programs.size());
  std::vector<Enqueued> log;
  std::mutex mutex;
  std::vector<int> members(ranks), streams(2 * ranks);
  LoggingKernel kernel(log, mutex, streams.data());
  for (int r = 0; r < ranks; ++r)
    members[r] = r;
  CoLaunch room(members);
  room.setMode(CoLaunch::Mode::Ordered);
  // A gate for a deeper ring than the kernel's: sends wait for fewer
  // receives than they need.
  const uint64_t gateDepth = how == Launch::GatedDeeper ? depth + 2 : depth;
  std::mutex failed;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      std::mt19937 random(seed * 31 + unsigned(r));
      std::vector<uint64_t> sent(ranks, 0), received(ranks, 0);
      uint64_t round = 0;
      auto fail = [&](const std::string &why) {
        std::lock_guard<std::mutex> lock(failed);
        if (failure.empty())
          failure = "rank " + std::to_string(r) + ": " + why;
      };
      // The first call shows each rank's own stream (the room's round 0).
      auto pick = [&](size_t i) {
        if (use == Streams::OwnOne || i == 0)
          return r;
        return random() % 2 ? r : ranks + r;
      };
      for (size_t i = 0; i <= programs[r].size(); ++i) {
        Op op = i ? programs[r][i - 1] : Op{};
        if (i && random() % 3 == 0)
          std::this_thread::sleep_for(
              std::chrono::microseconds(random() % 200));
        const int on = pick(i);
        if (op.peer < 0) {
          CoLaunch::Hand hand;
          hand.kernel = &kernel;
          hand.launch.programRank = r;
          hand.launch.chunkBytes = 64;
          hand.launch.stream = &streams[on];
          hand.launch.table.assign(1, round++);
          std::vector<Error> errors;
          if (how == Launch::Ungated && i) {
            std::string why;
            kernel.launch(hand.launch, why);
          } else if (!room.launch({hand}, 5000, errors)) {
            fail(errors[0].message);
          }
          continue;
        }
        uint64_t &count = op.send ? sent[op.peer] : received[op.peer];
        Enqueued e{r, op, count, on};
        count += op.chunks;
        auto enqueue = [&](std::string &) {
          std::lock_guard<std::mutex> lock(mutex);
          log.push_back(e);
          return true;
        };
        std::string why;
        Error error;
        if (how == Launch::Ungated)
          enqueue(why);
        else if (room.launchPeer(r, &streams[on], true, sent, received,
                                 gateDepth, 5000, enqueue,
                                 error) != CoLaunch::PeerStart::Started)
          fail(error.message);
      }
    });
  for (std::thread &t : threads)
    t.join();
  return log;
}

/// Whether `log` finishes on one queue, on two (streams alternating) and
/// on a queue a stream; `stuck` says where one did not.
bool finishesOnEveryQueueCount(const std::vector<Enqueued> &log, int ranks,
                               uint64_t depth, std::string &stuck) {
  const int streams = 2 * ranks;
  for (int queues : {1, 2, streams}) {
    std::vector<int> queueOf(streams);
    for (int s = 0; s < streams; ++s)
      queueOf[s] = s % queues;
    if (!finishes(log, ranks, queueOf, depth, stuck)) {
      stuck = std::to_string(queues) + " queue(s): " + stuck;
      return false;
    }
  }
  return true;
}

constexpr uint64_t kDepth = 4;

} // namespace

TEST(QueueModel, TheModelDeadlocksOnTheFalseDependency) {
  // The picture above: rank 0's second collective enqueued before rank
  // 1's first, on one queue.
  std::vector<Enqueued> log = {{0, Op{}, 0}, {1, Op{}, 0}, {0, Op{}, 1},
                               {0, Op{}, 2}, {1, Op{}, 1}, {1, Op{}, 2}};
  std::string stuck;
  EXPECT_FALSE(finishes(log, 2, {0, 0}, kDepth, stuck));
  EXPECT_NE(stuck.find("rank 0 coll 2 rank 1 coll 1"), std::string::npos)
      << stuck;
  EXPECT_TRUE(finishes(log, 2, {0, 1}, kDepth, stuck)) << stuck;
  // A send past the ring's depth before its receive, on one queue: the
  // send runs, its stream's next kernel waits for it, the receive is
  // behind that.
  Op send{1, true, 6}, receive{0, false, 6};
  std::vector<Enqueued> p2p = {{0, Op{}, 0}, {1, Op{}, 0},    {0, send, 0},
                               {0, Op{}, 1}, {1, receive, 0}, {1, Op{}, 1}};
  EXPECT_FALSE(finishes(p2p, 2, {0, 0}, kDepth, stuck));
  EXPECT_TRUE(finishes(p2p, 2, {0, 1}, kDepth, stuck)) << stuck;
  // Within the depth the send finishes alone.
  p2p[2].op.chunks = p2p[4].op.chunks = kDepth;
  EXPECT_TRUE(finishes(p2p, 2, {0, 0}, kDepth, stuck)) << stuck;
}

TEST(QueueModel, GatedLaunchesFinishOnAnyNumberOfQueues) {
  int runs = 0;
  for (Streams use : {Streams::OwnOne, Streams::OwnTwo})
    for (int ranks : {2, 3, 4})
      for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 random(seed * 7919u + unsigned(ranks));
        auto programs = randomPrograms(ranks, 24, random);
        std::string failure, stuck;
        auto log = runJob(programs, Launch::Gated, kDepth, seed, failure, use);
        ASSERT_EQ(failure, "") << ranks << " ranks, seed " << seed;
        ASSERT_TRUE(finishesOnEveryQueueCount(log, ranks, kDepth, stuck))
            << ranks << " ranks, seed " << seed << ", streams " << int(use)
            << ": " << stuck;
        ++runs;
      }
  EXPECT_EQ(runs, 240);
}

TEST(QueueModel, WithoutTheGateOrWithTooLaxAGateSomeRunDeadlocks) {
  for (Launch how : {Launch::Ungated, Launch::GatedDeeper}) {
    int deadlocked = 0;
    std::string example;
    for (unsigned seed = 1; seed <= 60 && !deadlocked; ++seed) {
      std::mt19937 random(seed * 104729u);
      auto programs = randomPrograms(3, 24, random);
      std::string failure, stuck;
      auto log = runJob(programs, how, kDepth, seed, failure);
      ASSERT_EQ(failure, "") << "seed " << seed;
      if (!finishesOnEveryQueueCount(log, 3, kDepth, stuck)) {
        ++deadlocked;
        example = stuck;
      }
    }
    EXPECT_GT(deadlocked, 0)
        << (how == Launch::Ungated ? "ungated" : "gated for a deeper ring")
        << ": no run deadlocked";
  }
}
