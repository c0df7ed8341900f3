//===- PathChoiceTest.cpp - auto's pick between load/store and DMA --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// costModelPath (PathChoice.h) on the shipped H200 profile and a
// hand-made all-gather plan (each rank copies its chunk to every peer, one
// queue per peer, and to itself: the pcpy variant's shape). Where each
// rank has a GPU and the profile has a fit for that GPU count, small calls
// go to load/store and 64 MiB ones to the copy engines, matching what the
// profile's own measurements found (cost-model-h200.md: ce-pcpy best at
// 64 and 256 MiB on 2 GPUs); ranks sharing a GPU, a GPU count the profile
// was not fitted on and a profile that does not load keep load/store and
// say why.
//
//===----------------------------------------------------------------------===//

#include "comm/PathChoice.h"

#include <gtest/gtest.h>

using namespace sdma::rt;

namespace {

Plan allGather(int ranks) {
  Plan plan;
  plan.schedule = "all_gather_direct";
  plan.ranks = ranks;
  plan.engines = ranks;
  plan.buffers = {Buffer{"in", 1}, Buffer{"out", ranks}};
  plan.done.assign(size_t(ranks), 0);
  for (int r = 0; r < ranks; ++r)
    for (int p = 0; p < ranks; ++p) {
      Command copy;
      copy.kind = Command::Kind::Copy;
      copy.slices[0].rank = r;
      copy.slices[0].buffer = 0;
      copy.slices[0].offset = 0;
      copy.slices[0].count = 1;
      copy.slices[1].rank = p;
      copy.slices[1].buffer = 1;
      copy.slices[1].offset = r;
      copy.slices[1].count = 1;
      Stream stream;
      stream.rank = r;
      stream.engine = p;
      stream.commands = {copy};
      plan.streams.push_back(stream);
    }
  return plan;
}

/// The same all-gather with each rank's copies on one queue (b2b): where
/// batched copies (ce-batch) apply.
Plan allGatherOneQueue(int ranks) {
  Plan plan = allGather(ranks);
  std::vector<Stream> streams(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    streams[size_t(r)].rank = r;
  for (const Stream &s : plan.streams)
    for (const Command &c : s.commands)
      streams[size_t(s.rank)].commands.push_back(c);
  plan.streams = streams;
  plan.engines = 1;
  return plan;
}

NvTimingProfile shippedProfile() {
  std::string error;
  std::optional<NvTimingProfile> profile = NvTimingProfile::load(
      std::string(SDMA_RUNTIME_PROFILE_DIR) + "/h200-nvidia.json", error);
  EXPECT_TRUE(profile) << error;
  return profile ? *profile : NvTimingProfile{};
}

TEST(PathChoice, SmallCallsLoadStoreLargeOnesCopyEnginesOnTwoGpus) {
  NvTimingProfile profile = shippedProfile();
  Plan plan = allGather(2);
  PathChoice small =
      costModelPath(&profile, "", plan, "pcpy", 1024, /*ranks=*/2, 2);
  EXPECT_FALSE(small.dma) << small.why;
  EXPECT_NE(small.why.find("predicted on 2 GPUs"), std::string::npos)
      << small.why;
  PathChoice large =
      costModelPath(&profile, "", plan, "pcpy", 64u << 20, /*ranks=*/2, 2);
  EXPECT_TRUE(large.dma) << large.why;
  EXPECT_EQ(large.why.rfind("dma pcpy (auto: predicted on 2 GPUs", 0), 0u)
      << large.why;
  // The predictions in the reason are the profile's plus the
  // communicator's extra.
  std::optional<double> ldst =
      profile.predict(plan, 64u << 20, NvExecutor::Ldst, 2);
  ASSERT_TRUE(ldst);
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f us load/store",
                *ldst + profile.communicatorExtraFor(NvExecutor::Ldst));
  EXPECT_NE(large.why.find(text), std::string::npos) << large.why;
}

TEST(PathChoice, TheCommunicatorsExtraCostMovesTheSwitch) {
  NvTimingProfile profile = shippedProfile();
  Plan plan = allGather(2);
  ASSERT_TRUE(costModelPath(&profile, "", plan, "pcpy", 256u << 20, 2, 2).dma);
  // A DMA path that cost a millisecond more per call would never pay.
  profile.communicatorExtra[NvExecutor::Ce] = 1000;
  profile.communicatorExtra[NvExecutor::CeBatch] = 1000;
  EXPECT_FALSE(costModelPath(&profile, "", plan, "pcpy", 256u << 20, 2, 2).dma);
}

TEST(PathChoice, TheProfilesCommunicatorSectionIsChecked) {
  std::string error;
  const char *head = R"({"target": "t", "executors": {}, "communicator": )";
  EXPECT_TRUE(NvTimingProfile::parse(
      std::string(head) + R"({"ldst": 1.5, "ce": 20, "measured": "x"}})",
      error))
      << error;
  EXPECT_FALSE(
      NvTimingProfile::parse(std::string(head) + R"({"ce-graph": 1}})", error));
  EXPECT_NE(error.find("$.communicator.ce-graph"), std::string::npos) << error;
  EXPECT_FALSE(
      NvTimingProfile::parse(std::string(head) + R"({"ce": -1}})", error));
  EXPECT_NE(error.find("$.communicator.ce"), std::string::npos) << error;
  EXPECT_FALSE(
      NvTimingProfile::parse(std::string(head) + R"({"measured": 3}})", error));
  EXPECT_NE(error.find("$.communicator.measured"), std::string::npos) << error;
  EXPECT_FALSE(NvTimingProfile::parse(std::string(head) + "[1]}", error));
  EXPECT_NE(error.find("$.communicator"), std::string::npos) << error;
}

TEST(PathChoice, BatchedCopiesCountOnlyWhereThePathBatches) {
  NvTimingProfile profile = shippedProfile();
  auto engines = [](double us) {
    char text[48];
    std::snprintf(text, sizeof(text), "%.1f us copy engines", us);
    return std::string(text);
  };
  // At a size where the batch is predicted faster (the case that matters),
  // a path that does not batch is costed without it.
  bool seen = false;
  for (int gpus : {2, 4}) {
    Plan plan = allGatherOneQueue(gpus);
    ASSERT_TRUE(nvBatchApplies(plan));
    for (size_t chunk = 4096; chunk <= (256u << 20); chunk *= 4) {
      std::optional<double> ce =
          profile.predict(plan, chunk, NvExecutor::Ce, gpus);
      std::optional<double> batch =
          profile.predict(plan, chunk, NvExecutor::CeBatch, gpus);
      ASSERT_TRUE(ce && batch);
      double plain = *ce + profile.communicatorExtraFor(NvExecutor::Ce);
      double batched =
          *batch + profile.communicatorExtraFor(NvExecutor::CeBatch);
      if (batched >= plain)
        continue;
      seen = true;
      PathChoice off = costModelPath(&profile, "", plan, "b2b", chunk, gpus,
                                     gpus, /*batched=*/false);
      EXPECT_NE(off.why.find(engines(plain)), std::string::npos) << off.why;
      PathChoice on = costModelPath(&profile, "", plan, "b2b", chunk, gpus,
                                    gpus, /*batched=*/true);
      EXPECT_NE(on.why.find(engines(batched)), std::string::npos) << on.why;
    }
  }
  EXPECT_TRUE(seen) << "no size where batching is predicted faster";
}

TEST(PathChoice, TheSwitchPointIsMonotoneInSize) {
  // Once the engines win, they keep winning at larger chunks (the model is
  // affine in bytes, the engines' bandwidth term the smaller).
  NvTimingProfile profile = shippedProfile();
  for (int gpus : {2, 4}) {
    Plan plan = allGather(gpus);
    bool dma = false;
    for (size_t bytes = 1024; bytes <= (256u << 20); bytes *= 4) {
      PathChoice c =
          costModelPath(&profile, "", plan, "pcpy", bytes, gpus, gpus);
      EXPECT_TRUE(!dma || c.dma) << gpus << " GPUs, " << bytes << ": " << c.why;
      dma = c.dma;
    }
    EXPECT_TRUE(dma) << gpus << " GPUs: never the engines";
  }
}

TEST(PathChoice, RanksSharingAGpuStayOnLoadStore) {
  NvTimingProfile profile = shippedProfile();
  PathChoice c = costModelPath(&profile, "", allGather(4), "pcpy", 256u << 20,
                               /*ranks=*/4, /*devices=*/1);
  EXPECT_FALSE(c.dma);
  EXPECT_EQ(c.why, "ldst (auto: 4 ranks share 1 GPU(s): copies between ranks "
                   "of one GPU run on SMs either way; SDMA_PATH=dma forces "
                   "the DMA path)");
}

TEST(PathChoice, AGpuCountTheProfileWasNotFittedOnStaysOnLoadStore) {
  NvTimingProfile profile = shippedProfile();
  PathChoice c =
      costModelPath(&profile, "", allGather(8), "pcpy", 256u << 20, 8, 8);
  EXPECT_FALSE(c.dma);
  EXPECT_NE(c.why.find("is fitted on 1, 2, 4 GPU(s), not 8"), std::string::npos)
      << c.why;
}

TEST(PathChoice, AProfileThatDoesNotLoadIsNamed) {
  PathChoice c = costModelPath(nullptr, "$.executors: expected an object",
                               allGather(2), "pcpy", 64u << 20, 2, 2);
  EXPECT_FALSE(c.dma);
  EXPECT_EQ(c.why, "ldst (auto: the cost model does not load: $.executors: "
                   "expected an object)");
}

} // namespace
