//===- PointToPointTest.cpp - sends, receives and their launch order ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The launch plan of a group (PointToPoint.h): chunk numbering per pair,
// at most kP2pMaxOps operations a launch, and, for random traffic between
// up to 40 ranks, that every group completes when no message fits in its
// ring (a launch finishes only when each of its operations' matches runs
// in the peer's current launch), while plain 32-operation batches in
// issue order deadlock. Then the communicator on the CPU device (ranks as
// threads): messages across launches and calls, a receive nobody sends to
// timing out with the peer named, and the failure staying; and the kernel
// compiled for an NVIDIA and an AMD GPU.
//
//===----------------------------------------------------------------------===//

#include "comm/PointToPoint.h"
#include "comm/ThreadJob.h"
#include "sdma/runtime/KernelCompiler.h"

#include <gtest/gtest.h>
#include <map>
#include <random>

using namespace sdma::rt;
using namespace sdma::rt::test;

namespace {

P2pOp op(bool send, int peer, uint64_t bytes) {
  P2pOp o;
  o.send = send;
  o.peer = peer;
  o.bytes = bytes;
  return o;
}

/// Each rank's launches as (op index) lists, for `groups[r]`.
using Launches = std::vector<std::vector<int>>;

/// True if every rank gets through its launches when a launch finishes
/// only once each of its operations' matches (the peer's n-th operation
/// with this rank, the other way) is in the peer's current launch: no
/// message is buffered.
bool completes(const std::vector<std::vector<P2pOp>> &groups,
               const std::vector<Launches> &launches) {
  int ranks = int(groups.size());
  // match[r][i]: the (peer, op index) of rank r's operation i.
  std::vector<std::vector<int>> match(ranks);
  for (int r = 0; r < ranks; ++r) {
    std::map<std::pair<int, bool>, int> seen;
    for (const P2pOp &o : groups[r]) {
      int n = seen[{o.peer, o.send}]++;
      int found = -1, k = 0;
      for (size_t j = 0; j < groups[o.peer].size(); ++j) {
        const P2pOp &m = groups[o.peer][j];
        if (m.peer == r && m.send != o.send && k++ == n) {
          found = int(j);
          break;
        }
      }
      if (found < 0)
        return false; // not a consistent job
      match[r].push_back(found);
    }
  }
  std::vector<size_t> at(ranks, 0);
  std::vector<std::vector<int>> launchOf(ranks);
  for (int r = 0; r < ranks; ++r) {
    launchOf[r].assign(groups[r].size(), -1);
    for (size_t l = 0; l < launches[r].size(); ++l)
      for (int i : launches[r][l])
        launchOf[r][i] = int(l);
  }
  for (;;) {
    bool done = true, moved = false;
    std::vector<size_t> next = at;
    for (int r = 0; r < ranks; ++r) {
      if (at[r] == launches[r].size())
        continue;
      done = false;
      bool ready = true;
      for (int i : launches[r][at[r]]) {
        int peer = groups[r][i].peer;
        ready &= launchOf[peer][match[r][i]] == int(at[peer]);
      }
      if (ready) {
        ++next[r];
        moved = true;
      }
    }
    if (done)
      return true;
    if (!moved)
      return false;
    at = next;
  }
}

/// A consistent job: each rank's group in a random order, `messages` per
/// ordered pair at most (some pairs none).
std::vector<std::vector<P2pOp>> randomJob(int ranks, int messages,
                                          std::mt19937 &rng) {
  std::vector<std::vector<P2pOp>> groups(ranks);
  for (int s = 0; s < ranks; ++s)
    for (int d = 0; d < ranks; ++d) {
      int n = int(rng() % (messages + 1));
      for (int m = 0; m < n; ++m) {
        uint64_t bytes = rng() % 3 == 0 ? 0 : 1 + rng() % 100000;
        groups[s].push_back(op(true, d, bytes));
        groups[d].push_back(op(false, s, bytes));
      }
    }
  // Shuffle each group keeping each (peer, direction)'s messages in order.
  for (auto &g : groups) {
    std::vector<int> order(g.size());
    for (size_t i = 0; i < g.size(); ++i)
      order[i] = int(i);
    std::shuffle(order.begin(), order.end(), rng);
    std::map<std::pair<int, bool>, std::vector<P2pOp>> lanes;
    for (const P2pOp &o : g)
      lanes[{o.peer, o.send}].push_back(o);
    std::map<std::pair<int, bool>, size_t> taken;
    std::vector<P2pOp> shuffled;
    for (int i : order) {
      std::pair<int, bool> lane{g[i].peer, g[i].send};
      shuffled.push_back(lanes[lane][taken[lane]++]);
    }
    g = shuffled;
  }
  return groups;
}

} // namespace

TEST(PointToPoint, PlanNumbersChunksPerPairAndDirection) {
  std::vector<uint64_t> sent(4, 0), received(4, 0);
  sent[1] = 10; // earlier calls moved 10 chunks to rank 1
  std::vector<P2pOp> ops = {op(true, 1, 100), op(false, 2, 0), op(true, 1, 1),
                            op(false, 1, 64), op(true, 3, 65)};
  P2pLaunchPlan plan = planPointToPoint(ops, 64, sent, received);
  EXPECT_EQ(plan.base, (std::vector<uint64_t>{10, 0, 12, 0, 0}));
  EXPECT_EQ(sent, (std::vector<uint64_t>{0, 13, 0, 2}));
  EXPECT_EQ(received, (std::vector<uint64_t>{0, 1, 1, 0}));
  // The second send to rank 1 is its pair's second message: a later level.
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0], (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(plan.launches[1], (std::vector<int>{2}));
  EXPECT_EQ(p2pChunks(0, 64), 1u);
  EXPECT_EQ(p2pChunks(64, 64), 1u);
  EXPECT_EQ(p2pChunks(65, 64), 2u);
}

TEST(PointToPoint, EveryGroupCompletesAndBatchesInIssueOrderDoNot) {
  std::mt19937 rng(7);
  int naiveDeadlocks = 0;
  for (int trial = 0; trial < 300; ++trial) {
    int ranks = 2 + int(rng() % 39);
    auto groups = randomJob(ranks, trial % 3 == 0 ? 3 : 1, rng);
    std::vector<Launches> planned(ranks), naive(ranks);
    for (int r = 0; r < ranks; ++r) {
      std::vector<uint64_t> sent(ranks, 0), received(ranks, 0);
      P2pLaunchPlan plan = planPointToPoint(groups[r], 1024, sent, received);
      for (const auto &launch : plan.launches)
        ASSERT_LE(launch.size(), size_t(kP2pMaxOps));
      planned[r] = plan.launches;
      for (size_t i = 0; i < groups[r].size(); ++i) {
        if (i % kP2pMaxOps == 0)
          naive[r].emplace_back();
        naive[r].back().push_back(int(i));
      }
    }
    ASSERT_TRUE(completes(groups, planned))
        << "trial " << trial << ": " << ranks << " ranks";
    naiveDeadlocks += !completes(groups, naive);
  }
  // The check can fail: batching in issue order deadlocks some of them.
  EXPECT_GT(naiveDeadlocks, 0);
}

TEST(PointToPoint, MessagesCrossLaunchesCallsAndRings) {
  // 40 messages from every rank to the next in one group (3 launches), then
  // 3 calls of one message each, all longer than a ring of 4 x 256 bytes.
  auto errors = job(
      3, 1 << 20,
      [](Communicator &comm, int rank, Error &e) {
        int next = (rank + 1) % 3, prev = (rank + 2) % 3;
        auto fill = [](int from, int m, size_t n) {
          std::vector<uint32_t> v(n);
          for (size_t i = 0; i < n; ++i)
            v[i] = uint32_t(from * 1000003 + m * 7919 + i);
          return v;
        };
        std::vector<std::vector<uint32_t>> out, in;
        std::vector<PeerOp> ops;
        for (int m = 0; m < 40; ++m) {
          size_t n = 1 + size_t(m) * 37;
          out.push_back(fill(rank, m, n));
          in.emplace_back(n, 0);
        }
        for (int m = 0; m < 40; ++m) {
          ops.push_back({true, next, out[m].data(), out[m].size() * 4});
          ops.push_back({false, prev, in[m].data(), in[m].size() * 4});
        }
        if (!comm.sendRecv(ops, nullptr, e))
          return false;
        for (int m = 0; m < 40; ++m)
          if (in[m] != fill(prev, m, in[m].size()))
            return e.message = "message " + std::to_string(m), false;
        for (int call = 0; call < 3; ++call) {
          std::vector<uint32_t> a = fill(rank, 100 + call, 3000), b(3000, 0);
          if (!comm.sendRecv({{false, prev, b.data(), 12000},
                              {true, next, a.data(), 12000}},
                             nullptr, e))
            return false;
          if (b != fill(prev, 100 + call, 3000))
            return e.message = "call " + std::to_string(call), false;
        }
        Error async;
        return comm.asyncError(async) || (e = async, false);
      },
      [](CommOptions &o) { o.p2pChunkBytes = 256; });
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(PointToPoint, AnUnmatchedReceiveTimesOutNamingThePeer) {
  auto errors = job(
      2, 1 << 20,
      [](Communicator &comm, int rank, Error &e) {
        if (rank == 0)
          return true; // never sends
        std::vector<char> in(100);
        Error why;
        if (comm.sendRecv({{false, 0, in.data(), 100}}, nullptr, why))
          return e.message = "an unmatched receive succeeded", false;
        if (why.kind != ErrorKind::Remote ||
            why.message != "rank 1 timed out after 300 ms receiving from "
                           "rank 0: it did not send (no matching send, it "
                           "exited, or it waits on something else)")
          return e.message = "receive: " + why.message, false;
        // The communicator has failed: later calls are refused, saying so.
        if (comm.sendRecv({{true, 1, in.data(), 1}}, nullptr, why) ||
            why.message.find("the communicator has failed") ==
                std::string::npos)
          return e.message = "after: " + why.message, false;
        return true;
      },
      [](CommOptions &o) { o.timeoutMs = 300; });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

// The kernel the GPUs run, compiled as they compile it (no GPU needed):
// NVRTC for an H100/H200 and hipRTC (HIP 5.2) for an MI200, where each is
// installed.
TEST(PointToPoint, KernelCompilesForNvidiaAndAmd) {
  LdstProgram program;
  program.source = p2pKernelSource();
  program.entry = program.schedule = "sdma_p2p";
  int compiled = 0;
  for (auto [compiler, arch] :
       {std::pair<const char *, const char *>{"nvrtc", "sm_90"},
        {"hiprtc", "gfx90a"}}) {
    KernelBinary binary;
    std::string error;
    if (!compileKernel(program, compiler, arch, binary, error)) {
      // That compiler is not installed here, or this runtime was built
      // without HIP's headers.
      if ((error.find("not") != std::string::npos &&
           (error.find("NVRTC") != std::string::npos ||
            error.find("hipRTC") != std::string::npos)) ||
          error.find("built without HIP") != std::string::npos)
        continue;
      ADD_FAILURE() << compiler << ": " << error;
      continue;
    }
    EXPECT_GT(binary.code.size(), 0u) << compiler;
    ++compiled;
  }
  if (!compiled)
    GTEST_SKIP() << "neither NVRTC nor hipRTC is installed";
}
