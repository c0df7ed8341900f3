//===- GroupLaunchTest.cpp - a group's rounds on one stream ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// streamConflict: ranks of one job on one stream that would start in
// different launches of a group's round (each waiting for a peer queued
// behind it) are refused with their names, and only they.
//
//===----------------------------------------------------------------------===//

#include "comm/GroupLaunch.h"

#include <gtest/gtest.h>

using namespace sdma::rt;

namespace {

int streamA, streamB; // two distinct stream handles
int gpu0, gpu1;       // two streams' domains (CUDA contexts)

TEST(GroupLaunchStreams, RanksOfOneJobInTwoLaunchesOnOneStreamAreRefused) {
  std::string why =
      streamConflict({{0, 7, 0, &streamA, true}, {1, 7, 1, &streamA, true}});
  EXPECT_NE(why.find("ranks 0 and 1 of one job are on one stream"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("a stream of its own"), std::string::npos) << why;
}

TEST(GroupLaunchStreams, OneHandleOnTwoGpusIsTwoStreams) {
  // The legacy default stream (null) of two GPUs: one handle, two streams.
  EXPECT_EQ(streamConflict({{0, 7, 0, nullptr, true, &gpu0},
                            {1, 7, 1, nullptr, true, &gpu1}}),
            "");
  uint64_t job = 0;
  std::string why = streamConflict(
      {{0, 7, 0, nullptr, true, &gpu0}, {1, 7, 1, nullptr, true, &gpu0}}, &job);
  EXPECT_NE(why.find("ranks 0 and 1"), std::string::npos) << why;
  EXPECT_EQ(job, 7u);
  // A kernel that does not name its domain is compared with every one.
  EXPECT_NE(streamConflict({{0, 7, 0, &streamA, true, nullptr},
                            {1, 7, 1, &streamA, true, &gpu1}}),
            "");
}

TEST(GroupLaunchStreams, TheClashingPairIsNamedAmongOthers) {
  std::string why = streamConflict({{0, 7, 0, &streamA, true},
                                    {0, 7, 1, &streamA, true},
                                    {1, 7, 2, &streamB, true},
                                    {2, 7, 3, &streamB, true}});
  EXPECT_NE(why.find("ranks 2 and 3"), std::string::npos) << why;
}

TEST(GroupLaunchStreams, OneLaunchOtherStreamsOrJobsOrACpuDeviceAreFine) {
  // One launch for both ranks.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, &streamA, true}, {0, 7, 1, &streamA, true}}),
      "");
  // A stream each.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, &streamA, true}, {1, 7, 1, &streamB, true}}),
      "");
  // Two jobs: neither waits for the other.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, &streamA, true}, {1, 8, 1, &streamA, true}}),
      "");
  // A device whose launch runs before it returns queues nothing.
  EXPECT_EQ(
      streamConflict({{0, 7, 0, nullptr, false}, {1, 7, 1, nullptr, false}}),
      "");
  EXPECT_EQ(streamConflict({}), "");
}

} // namespace
