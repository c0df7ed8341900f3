//===- AlltoAllvCheckTest.cpp - the all-to-allv check finds what is wrong
//--===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// checkAlltoAllv on memory written by hand: the outputs an all-to-allv must
// leave pass; a wrong byte, a wrong receive count, and a row written where
// nobody sent one are each found and named.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace sdma::rt;

namespace {

/// 3 ranks, packed or slots: input, output (3 chunks each), send and
/// receive count tables.
Plan plan(bool packed) {
  Plan p;
  p.schedule = "test";
  p.ranks = 3;
  p.hasQueues = false;
  p.buffers = {{"input", 3},
               {"output", 3},
               {"send_counts", 3, true},
               {"recv_counts", 3, true}};
  Collective c;
  c.kind = packed ? "all_to_allv_packed" : "all_to_allv";
  c.input = 0;
  c.output = 1;
  c.sendCounts = 2;
  c.recvCounts = 3;
  p.collective = c;
  return p;
}

int64_t entry(const HostMemory &m, int r, int b, int i) {
  int64_t v;
  std::memcpy(&v, m.buffer(r, b) + i * 8, 8);
  return v;
}

/// What a correct run leaves, from the send counts in `m`.
void perform(const Plan &p, HostMemory &m, bool packed) {
  size_t chunk = m.chunkBytes();
  for (int r = 0; r < p.ranks; ++r) {
    int64_t at = 0;
    for (int s = 0; s < p.ranks; ++s) {
      int64_t n = entry(m, s, 2, r), from = r, to = s;
      if (packed) {
        from = 0;
        for (int q = 0; q < r; ++q)
          from += entry(m, s, 2, q);
        to = at;
        at += n;
      }
      std::memcpy(m.buffer(r, 1) + to * chunk, m.buffer(s, 0) + from * chunk,
                  n * chunk);
      std::memcpy(m.buffer(r, 3) + s * 8, &n, 8);
    }
  }
}

} // namespace

TEST(AlltoAllvCheck, CorrectOutputsPassAndEachFaultIsNamed) {
  for (bool packed : {false, true})
    for (const char *shape : {"uniform", "zeros", "skewed", "random"}) {
      Plan p = plan(packed);
      std::string error;
      std::optional<HostMemory> m = HostMemory::create(p, 16, error);
      ASSERT_TRUE(m) << error;
      CountPattern counts;
      counts.shape = shape;
      counts.seed = 7;
      fillInputs(p, *m, counts);
      perform(p, *m, packed);
      CheckResult ok = checkOutputs(p, *m);
      EXPECT_EQ(ok.wrongBytes, 0u) << shape << ": " << ok.firstWrong;
      EXPECT_GT(ok.checkedBytes, 0u);
    }
  Plan p = plan(true);
  std::string error;
  std::optional<HostMemory> m = HostMemory::create(p, 16, error);
  ASSERT_TRUE(m);
  fillInputs(p, *m); // uniform: every row of every output arrives
  perform(p, *m, true);
  m->buffer(2, 1)[16 + 3] ^= 1; // rank 2's row 1 (from rank 1), byte 3
  CheckResult bad = checkOutputs(p, *m);
  EXPECT_EQ(bad.wrongBytes, 1u);
  EXPECT_NE(bad.firstWrong.find("rank 2, output row 1 byte 3"),
            std::string::npos)
      << bad.firstWrong;
  EXPECT_NE(bad.firstWrong.find("of rank 1's input"), std::string::npos);
  // A receive count that is not what was sent.
  perform(p, *m, true);
  int64_t wrongCount = 5;
  std::memcpy(m->buffer(0, 3) + 2 * 8, &wrongCount, 8);
  bad = checkOutputs(p, *m);
  EXPECT_EQ(bad.firstWrong,
            "rank 0's receive count from rank 2 is 5, rank 2 sent 1");
  // Nothing sent to rank 0 from rank 2, but its row was written anyway.
  fillInputs(p, *m, CountPattern{"skewed", 1});
  perform(p, *m, true);
  m->buffer(1, 1)[2 * 16] = 0x42;
  bad = checkOutputs(p, *m);
  EXPECT_EQ(bad.firstWrong,
            "rank 1, output row 2 was written, but no rank sent a row there");
}
