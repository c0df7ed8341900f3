//===- NodePlanTest.cpp - the runtime side of the node plan ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The node plan reader refuses what the runtime could not run safely: each
// test breaks one field of a valid plan and expects the error naming it.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/NodePlan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace sdma::rt;
using json = nlohmann::json;

namespace {

/// All-gather over 2 nodes of 2 ranks, as --sdma-to-node-plan writes it
/// (one transfer each way on rail 0, node parts abridged).
json validPlan() {
  auto slice = [](int rank, const char *buffer, int offset) {
    return json{
        {"rank", rank}, {"buffer", buffer}, {"offset", offset}, {"count", 1}};
  };
  return json{
      {"format", "sdma.node-plan"},
      {"version", 1},
      {"schedule", "ag"},
      {"ranks", 4},
      {"local_ranks", 2},
      {"nodes", 2},
      {"collective",
       {{"kind", "all_gather"}, {"input", "input"}, {"output", "output"}}},
      {"buffers", json::array({{{"name", "input"}, {"chunks", 1}},
                               {{"name", "output"}, {"chunks", 4}}})},
      {"phases",
       json::array(
           {{{"kind", "network"},
             {"transfers", json::array({{{"src", slice(0, "input", 0)},
                                         {"dst", slice(2, "output", 0)}},
                                        {{"src", slice(2, "input", 0)},
                                         {"dst", slice(0, "output", 2)}}})}},
            {{"kind", "local"},
             {"schedules", json::array({"sdma.schedule @n0 ...", ""})}}})}};
}

std::string refusal(const json &plan) {
  std::string error;
  EXPECT_FALSE(NodePlan::parse(plan.dump(), error));
  return error;
}

} // namespace

TEST(NodePlan, ReadsAValidPlan) {
  std::string error;
  std::optional<NodePlan> plan = NodePlan::parse(validPlan().dump(), error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(plan->nodes, 2);
  EXPECT_EQ(plan->localRanks, 2);
  ASSERT_EQ(plan->phases.size(), 2u);
  ASSERT_TRUE(plan->phases[0].network);
  ASSERT_EQ(plan->phases[0].transfers.size(), 2u);
  EXPECT_EQ(plan->phases[0].transfers[1].dst.rank, 0);
  EXPECT_EQ(plan->phases[0].transfers[1].dst.offset, 2);
  EXPECT_FALSE(plan->phases[1].network);
  EXPECT_EQ(plan->phases[1].schedules[1], "");
  ASSERT_TRUE(plan->collective);
  EXPECT_EQ(plan->collective->kind, "all_gather");
}

TEST(NodePlan, RefusesAShapeThatDoesNotMultiply) {
  json plan = validPlan();
  plan["nodes"] = 3;
  EXPECT_NE(refusal(plan).find("nodes x local_ranks is not ranks"),
            std::string::npos);
}

TEST(NodePlan, RefusesATransferWithinOneNode) {
  json plan = validPlan();
  plan["phases"][0]["transfers"][0]["dst"]["rank"] = 1;
  EXPECT_NE(refusal(plan).find("ranks 0 and 1 are on one node"),
            std::string::npos);
}

TEST(NodePlan, RefusesASliceOutsideItsBuffer) {
  json plan = validPlan();
  plan["phases"][0]["transfers"][1]["dst"]["offset"] = 4;
  std::string error = refusal(plan);
  EXPECT_NE(error.find("$.phases[0].transfers[1].dst"), std::string::npos)
      << error;
}

TEST(NodePlan, RefusesSidesOfDifferentSizes) {
  json plan = validPlan();
  plan["phases"][0]["transfers"][0]["dst"]["count"] = 2;
  EXPECT_NE(refusal(plan).find("the two sides differ in size"),
            std::string::npos);
}

TEST(NodePlan, RefusesALocalPhaseWithoutOneSchedulePerNode) {
  json plan = validPlan();
  plan["phases"][1]["schedules"] = json::array({"x"});
  EXPECT_NE(refusal(plan).find("expected one schedule per node (2)"),
            std::string::npos);
}

TEST(NodePlan, RefusesAnUnknownPhaseKindAndVersion) {
  json plan = validPlan();
  plan["phases"][0]["kind"] = "teleport";
  EXPECT_NE(refusal(plan).find("expected \"local\" or \"network\""),
            std::string::npos);
  plan = validPlan();
  plan["version"] = 2;
  EXPECT_NE(refusal(plan).find("version"), std::string::npos);
  EXPECT_NE(refusal(json::array()).find("node plan"), std::string::npos);
}
