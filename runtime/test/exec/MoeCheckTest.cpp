//===- MoeCheckTest.cpp - the MoE pair's check finds what is wrong --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// checkMoe on memory written by hand: what all_to_allv_2d (dispatch into
// padded expert-major rows) and its _offset (combine) must leave passes;
// a wrong byte, a wrong receive count and a padding row written are each
// found and named; a layout that cannot fit is refused with the reason.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace sdma::rt;

namespace {

constexpr int R = 4, E = 2, A = 2;

Plan plan(bool dispatch) {
  Plan p;
  p.schedule = "test";
  p.ranks = R;
  p.hasQueues = false;
  p.buffers = {{"input", R},
               {"output", R},
               {"send_counts", (dispatch ? 1 : 2) * E * R, true},
               {"recv_counts", E * R, true}};
  Collective c;
  c.kind = dispatch ? "all_to_allv_2d" : "all_to_allv_2d_offset";
  c.input = 0;
  c.output = 1;
  c.sendCounts = 2;
  c.recvCounts = 3;
  c.experts = E;
  c.majorAlign = A;
  p.collective = c;
  return p;
}

int64_t get(const HostMemory &m, int r, int b, int i) {
  int64_t v;
  std::memcpy(&v, m.buffer(r, b) + i * 8, 8);
  return v;
}
void set(HostMemory &m, int r, int b, int i, int64_t v) {
  std::memcpy(m.buffer(r, b) + i * 8, &v, 8);
}

/// A correct run, written straight from the definition.
void perform(const Plan &p, HostMemory &m, bool dispatch) {
  size_t chunk = m.chunkBytes();
  auto move = [&](int from, int64_t src, int to, int64_t dst, int64_t n) {
    std::memcpy(m.buffer(to, 1) + dst * chunk, m.buffer(from, 0) + src * chunk,
                n * chunk);
  };
  for (int me = 0; me < R; ++me) {
    int64_t at = 0;
    if (dispatch) {
      for (int e = 0; e < E; ++e) {
        int64_t start = at;
        for (int r = 0; r < R; ++r) {
          int64_t n = get(m, r, 2, me * E + e), src = 0;
          for (int i = 0; i < me * E + e; ++i)
            src += get(m, r, 2, i);
          move(r, src, me, at, n);
          set(m, me, 3, e * R + r, n);
          at += n;
        }
        at = start + std::max<int64_t>(A, (at - start + A - 1) / A * A);
      }
      continue;
    }
    for (int q = 0; q < R; ++q)
      for (int e = 0; e < E; ++e) {
        int64_t n = get(m, q, 2, e * R + me);
        move(q, get(m, q, 2, E * R + e * R + me), me, at, n);
        set(m, me, 3, q * E + e, n);
        at += n;
      }
  }
}

} // namespace

TEST(MoeCheck, CorrectOutputsPassAndEachFaultIsNamed) {
  for (bool dispatch : {true, false})
    for (const char *shape : {"uniform", "zeros", "skewed", "random"}) {
      Plan p = plan(dispatch);
      std::string error;
      std::optional<HostMemory> m = HostMemory::create(p, 8, error);
      ASSERT_TRUE(m) << error;
      fillInputs(p, *m, CountPattern{shape, 3});
      perform(p, *m, dispatch);
      CheckResult ok = checkOutputs(p, *m);
      EXPECT_EQ(ok.wrongBytes, 0u) << shape << ": " << ok.firstWrong;
      EXPECT_GT(ok.checkedBytes, 0u);
    }
  Plan p = plan(true);
  std::string error;
  std::optional<HostMemory> m = HostMemory::create(p, 8, error);
  ASSERT_TRUE(m);
  // uniform: every rank sends one row to expert (r + p) mod 2 of each p,
  // thinned to fit: rank 0 gets 2 rows for each expert, no padding.
  fillInputs(p, *m);
  perform(p, *m, true);
  ASSERT_EQ(checkOutputs(p, *m).wrongBytes, 0u);
  m->buffer(0, 1)[8 + 5] ^= 1; // rank 0's row 1, byte 5
  CheckResult bad = checkOutputs(p, *m);
  EXPECT_EQ(bad.wrongBytes, 1u);
  EXPECT_NE(bad.firstWrong.find("rank 0, output row 1 byte 5"),
            std::string::npos)
      << bad.firstWrong;
  perform(p, *m, true);
  set(*m, 1, 3, 0, 7);
  bad = checkOutputs(p, *m);
  EXPECT_EQ(bad.firstWrong.rfind("rank 1's receive count [0] is 7", 0), 0u)
      << bad.firstWrong;
  // skewed: only rank 0 receives; rank 1's padding rows must stay as they
  // were.
  fillInputs(p, *m, CountPattern{"skewed", 1});
  perform(p, *m, true);
  m->buffer(1, 1)[0] = 0x42;
  bad = checkOutputs(p, *m);
  EXPECT_EQ(bad.firstWrong,
            "rank 1, output row 0 was written, but no segment lies there");
  // Five experts of two rows cannot fit four rows, even empty.
  p.collective->experts = 5;
  std::string why;
  EXPECT_TRUE(moeCounts(p, CountPattern{}, &why).empty());
  EXPECT_NE(why.find("need 10 rows even when empty"), std::string::npos) << why;
}
