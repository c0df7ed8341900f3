//===- PointToPointTest.cpp - sends, receives and their launch order ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Point-to-point (PointToPoint.h): chunk numbering per pair; on the CPU
// device (ranks as threads), a group's operations running together while
// other ranks mix groups and plain calls (every message longer than a
// ring), a group too large for a launch refused with nothing run, 40
// messages to one peer in a group and calls after it, a receive nobody
// sends to timing out with the peer named and the failure staying; and the
// kernel compiled for an NVIDIA and an AMD GPU.
//
//===----------------------------------------------------------------------===//

#include "comm/PointToPoint.h"
#include "comm/KernelBuilds.h"
#include "comm/ThreadJob.h"

#include <gtest/gtest.h>

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

} // namespace

TEST(PointToPoint, ChunksAreNumberedPerPairAndDirection) {
  std::vector<uint64_t> sent(4, 0), received(4, 0);
  sent[1] = 10; // earlier calls moved 10 chunks to rank 1
  std::vector<P2pOp> ops = {op(true, 1, 100), op(false, 2, 0), op(true, 1, 1),
                            op(false, 1, 64), op(true, 3, 65)};
  EXPECT_EQ(numberChunks(ops, 64, sent, received),
            (std::vector<uint64_t>{10, 0, 12, 0, 0}));
  EXPECT_EQ(sent, (std::vector<uint64_t>{0, 13, 0, 2}));
  EXPECT_EQ(received, (std::vector<uint64_t>{0, 1, 1, 0}));
  EXPECT_EQ(p2pChunks(0, 64), 1u);
  EXPECT_EQ(p2pChunks(64, 64), 1u);
  EXPECT_EQ(p2pChunks(65, 64), 2u);
}

// Groups and plain calls mixed, every message longer than a ring: rank 0's
// group holds a receive that waits on rank 1 and two sends rank 2 needs
// first. NCCL completes this (a group's operations all run at once); so
// must sdma, whose group is one launch.
TEST(PointToPoint, AGroupsOperationsRunTogether) {
  auto errors = job(
      3, 1 << 20,
      [](Communicator &comm, int rank, Error &e) {
        const size_t n = 3000;
        auto fill = [&](int tag) {
          std::vector<uint8_t> v(n);
          for (size_t i = 0; i < n; ++i)
            v[i] = uint8_t(tag * 31 + i * 7);
          return v;
        };
        std::vector<uint8_t> a = fill(1), b = fill(2), x(n), y(n);
        if (rank == 0) {
          if (!comm.sendRecv({{false, 1, x.data(), n},
                              {true, 2, a.data(), n},
                              {true, 2, b.data(), n}},
                             nullptr, e))
            return false;
          return x == fill(3) || (e.message = "rank 0 got other bytes", false);
        }
        if (rank == 2) {
          if (!comm.sendRecv({{false, 0, x.data(), n}, {false, 0, y.data(), n}},
                             nullptr, e))
            return false;
          if (x != fill(1) || y != fill(2))
            return e.message = "rank 2 got other bytes", false;
          std::vector<uint8_t> c = fill(4);
          return comm.sendRecv({{true, 1, c.data(), n}}, nullptr, e);
        }
        std::vector<uint8_t> got(n), c = fill(3);
        if (!comm.sendRecv({{false, 2, got.data(), n}}, nullptr, e) ||
            !comm.sendRecv({{true, 0, c.data(), n}}, nullptr, e))
          return false;
        return got == fill(4) || (e.message = "rank 1 got other bytes", false);
      },
      [](CommOptions &o, int) {
        o.p2pChunkBytes = 256;
        o.timeoutMs = 5000;
      });
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(PointToPoint, AGroupOfMoreThanALaunchHoldsIsRefused) {
  auto errors = job(2, 1 << 20, [](Communicator &comm, int rank, Error &e) {
    std::vector<PeerOp> ops;
    std::vector<char> buffer(kP2pMaxOps + 1);
    for (int i = 0; i <= kP2pMaxOps; ++i)
      ops.push_back({true, 1 - rank, buffer.data() + i, 1});
    Error why;
    if (comm.sendRecv(ops, nullptr, why) ||
        why.message != "a group of 129 sends and receives; at most 128 run "
                       "together on one communicator")
      return e.message = why.message, false;
    // Nothing ran: the communicator is healthy and still works.
    char in = 0, out = char(rank + 7);
    return comm.sendRecv({{true, 1 - rank, &out, 1}, {false, 1 - rank, &in, 1}},
                         nullptr, e) &&
           (in == char(8 - rank) || (e.message = "wrong byte", false));
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

TEST(PointToPoint, MessagesCrossLaunchesCallsAndRings) {
  // 40 messages from every rank to the next in one group (one launch), then
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
      [](CommOptions &o, int) { o.p2pChunkBytes = 256; });
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
}

// Buffers at every alignment the copy distinguishes (16-, 8-, 4-byte units
// after a byte head, or bytes), sizes across chunk boundaries; the bytes
// around each receive buffer stay untouched.
TEST(PointToPoint, MisalignedBuffersAndTheirNeighbours) {
  auto errors = job(
      2, 1 << 20,
      [](Communicator &comm, int rank, Error &e) {
        int peer = 1 - rank;
        for (size_t from : {0, 1, 4, 8, 12})
          for (size_t to : {0, 3, 4, 8, 12})
            for (size_t n : {size_t(5), size_t(255), size_t(1000)}) {
              std::vector<uint8_t> out(n + 32), in(n + 64, 0x5A);
              for (size_t i = 0; i < out.size(); ++i)
                out[i] = uint8_t(rank * 101 + i * 13 + from);
              if (!comm.sendRecv({{true, peer, out.data() + from, n},
                                  {false, peer, in.data() + 16 + to, n}},
                                 nullptr, e))
                return false;
              for (size_t i = 0; i < in.size(); ++i) {
                bool inside = i >= 16 + to && i < 16 + to + n;
                uint8_t want =
                    inside
                        ? uint8_t(peer * 101 + (i - 16 - to + from) * 13 + from)
                        : 0x5A;
                if (in[i] != want)
                  return e.message = "from " + std::to_string(from) + " to " +
                                     std::to_string(to) + " n " +
                                     std::to_string(n) + ": byte " +
                                     std::to_string(i),
                         false;
              }
            }
        return true;
      },
      [](CommOptions &o, int) { o.p2pChunkBytes = 64; });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
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
      [](CommOptions &o, int) { o.timeoutMs = 300; });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

// The kernel the GPUs run, compiled as they compile it (no GPU needed):
// NVRTC for an H100/H200 and hipRTC (HIP 5.2) for an MI200, where each is
// installed.
TEST(PointToPoint, KernelCompilesForNvidiaAndAmd) {
  expectKernelBuilds(p2pKernelSource(), "sdma_p2p");
}
