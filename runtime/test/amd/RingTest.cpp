//===- RingTest.cpp - ring writer batches and emission --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Queues built by hand (packets from SDMA-PACKETS.md, relocations as the
// encoder writes them): which packets may enter a ring in any order, and
// what the emitted writer does with them. The end-to-end runs (every
// schedule through simulated rings, injected faults) are lit tests
// (test/ring).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Ring.h"

#include <gtest/gtest.h>

using namespace sdma::rt;

namespace {
/// Builds a queue packet by packet.
struct QueueBuilder {
  PacketQueue q;
  /// COPY_LINEAR (swap: COPY_LINEAR_SWAP) of `chunks` chunks from (rank,
  /// buffer, chunk) `src` to `dst`.
  QueueBuilder &copy(std::tuple<int, int, int64_t> src,
                     std::tuple<int, int, int64_t> dst, int64_t chunks = 1,
                     bool swap = false) {
    size_t at = q.image.size();
    q.image.insert(q.image.end(),
                   {swap ? 0x00000901u : 0x00000001u, 0, 0, 0, 0, 0, 0});
    Relocation count;
    count.kind = Relocation::Kind::Count;
    count.dword = at + 1;
    count.chunks = chunks;
    q.relocations.push_back(count);
    for (auto [dword, slice] : {std::pair{3, src}, std::pair{5, dst}}) {
      Relocation r;
      r.dword = at + dword;
      std::tie(r.rank, r.buffer, r.chunk) = slice;
      q.relocations.push_back(r);
    }
    return *this;
  }
  QueueBuilder &atomic(int rank, int64_t slot) {
    size_t at = q.image.size();
    q.image.insert(q.image.end(), {0x5e00000au, 0, 0, 1, 0, 0, 0, 0});
    Relocation r;
    r.kind = Relocation::Kind::Flag;
    r.dword = at + 1;
    r.rank = rank;
    r.slot = slot;
    q.relocations.push_back(r);
    return *this;
  }
  std::vector<size_t> batches() {
    std::vector<Packet> packets;
    std::string error;
    EXPECT_TRUE(decodePackets(q.image, packets, error)) << error;
    return ringBatches(q, packets);
  }
};

using Batches = std::vector<size_t>;
} // namespace

TEST(RingBatches, IndependentCopiesShareABatch) {
  // An all-to-all's copies: distinct destinations, one signal after.
  QueueBuilder b;
  b.copy({0, 0, 0}, {0, 1, 0})
      .copy({0, 0, 1}, {1, 1, 0})
      .copy({0, 0, 2}, {2, 1, 0});
  b.atomic(0, 1);
  EXPECT_EQ(b.batches(), (Batches{0, 0, 0, 1}));
}

TEST(RingBatches, ACopyThatReadsAnEarlierOnesOutputStaysBehindIt) {
  // The all-gather ring's b2b queue: its own chunk in, then forwarded.
  QueueBuilder b;
  b.copy({0, 0, 0}, {0, 1, 0})
      .copy({0, 1, 0}, {1, 1, 0})
      .copy({0, 0, 1}, {2, 1, 5});
  EXPECT_EQ(b.batches(), (Batches{0, 1, 1}));
  // Overlapping chunk ranges (not just equal starts) conflict.
  QueueBuilder c;
  c.copy({0, 0, 0}, {0, 1, 2}, 4).copy({0, 1, 5}, {1, 1, 0});
  EXPECT_EQ(c.batches(), (Batches{0, 1}));
  // Reads of the same bytes do not.
  QueueBuilder d;
  d.copy({0, 0, 0}, {1, 1, 0}, 4).copy({0, 0, 0}, {2, 1, 0}, 4);
  EXPECT_EQ(d.batches(), (Batches{0, 0}));
  // Writes of the same bytes do (the later one must win).
  QueueBuilder e;
  e.copy({0, 0, 0}, {1, 1, 0}).copy({0, 0, 1}, {1, 1, 0});
  EXPECT_EQ(e.batches(), (Batches{0, 1}));
}

TEST(RingBatches, SwapsWriteBothOperandsAndSignalsEndBatches) {
  QueueBuilder b;
  b.copy({0, 0, 0}, {1, 0, 0}, 1, /*swap=*/true).copy({1, 0, 0}, {2, 1, 0});
  EXPECT_EQ(b.batches(), (Batches{0, 1}));
  QueueBuilder c;
  c.copy({0, 0, 0}, {1, 1, 0}).atomic(1, 2).copy({0, 0, 1}, {2, 1, 0});
  EXPECT_EQ(c.batches(), (Batches{0, 1, 2}));
}

TEST(RingWriter, EmitsOneBarrierPerBatchAndNamesItsTarget) {
  PacketPlan plan;
  plan.program = "handmade";
  plan.target.name = "gfx942";
  plan.target.nopCount = true;
  plan.ranks = 2;
  plan.buffers = {Buffer{"input", 4}, Buffer{"output", 4}};
  QueueBuilder b;
  b.copy({0, 0, 0}, {0, 1, 0}).copy({0, 1, 0}, {1, 1, 0}).atomic(1, 1);
  b.q.rank = 0;
  plan.queues = {b.q};
  std::string error;
  std::optional<std::string> text =
      emitRingWriter(plan, RingFault::None, error);
  ASSERT_TRUE(text) << error;
  size_t barriers = 0;
  for (size_t at = 0;
       (at = text->find("SDMA_SYNC();", at)) != std::string::npos; ++at)
    ++barriers;
  EXPECT_EQ(barriers, 2u); // batches {copy}, {copy}, {atomic}
  EXPECT_NE(text->find("(target gfx942)"), std::string::npos);
  EXPECT_NE(text->find("#define SDMA_RING_NOP_COUNT 1"), std::string::npos);
  EXPECT_EQ(text->find("#define SDMA_RING_FAULT"), std::string::npos);
  // The chunk relocation as an expression: rank 1's output (index 3).
  EXPECT_NE(text->find("sdma_ring_chunk(a, 3u, 0ull)"), std::string::npos);

  // Queues out of rank order cannot be indexed by rank.
  PacketQueue other = b.q;
  other.rank = 1;
  plan.queues = {other, b.q};
  EXPECT_FALSE(emitRingWriter(plan, RingFault::None, error));
  EXPECT_NE(error.find("not grouped by rank"), std::string::npos) << error;
}

TEST(RingWriter, ParsesFaultNames) {
  EXPECT_EQ(parseRingFault("race"), RingFault::Race);
  EXPECT_EQ(parseRingFault("early-doorbell"), RingFault::EarlyDoorbell);
  EXPECT_EQ(parseRingFault("no-pad"), RingFault::NoPad);
  EXPECT_EQ(parseRingFault("none"), RingFault::None);
  EXPECT_FALSE(parseRingFault("late"));
}
