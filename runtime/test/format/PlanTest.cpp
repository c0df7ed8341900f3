//===- PlanTest.cpp - the runtime side of the plan contract ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Plan.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace sdma::rt;
using json = nlohmann::json;

static std::string readPlan(const std::string &name) {
  std::ifstream file(std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(Plan, LoadsACompiledPlan) {
  std::string error;
  std::optional<Plan> plan = Plan::parse(readPlan("ring.json"), error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(plan->schedule, "all_gather_ring");
  EXPECT_EQ(plan->ranks, 4);
  EXPECT_TRUE(plan->prelaunch);
  ASSERT_EQ(plan->buffers.size(), 2u);
  EXPECT_EQ(plan->buffers[1].name, "output");
  EXPECT_EQ(plan->buffers[1].chunks, 4);
  ASSERT_TRUE(plan->collective);
  EXPECT_EQ(plan->collective->kind, "all_gather");
  EXPECT_EQ(plan->collective->input, 0);
  EXPECT_EQ(plan->collective->output, 1);
  ASSERT_FALSE(plan->streams.empty());
  // Prelaunch: every queue starts with a poll on the launch flag.
  for (const Stream &stream : plan->streams) {
    ASSERT_FALSE(stream.commands.empty());
    EXPECT_EQ(stream.commands[0].kind, Command::Kind::Poll);
    EXPECT_EQ(stream.commands[0].flag, kLaunchFlag);
  }
}

TEST(Plan, MissingFileIsNamed) {
  std::string error;
  EXPECT_FALSE(Plan::load("/nonexistent/plan.json", error));
  EXPECT_EQ(error, "/nonexistent/plan.json: cannot open plan file");
}

TEST(Plan, RejectsGarbage) {
  std::string error;
  EXPECT_FALSE(Plan::parse("{\"format\": \"sdma.plan\", \"vers", error));
  EXPECT_EQ(error, "plan is not valid JSON");
  EXPECT_FALSE(Plan::parse(std::string("\x00\xff\x13", 3), error));
  EXPECT_FALSE(Plan::parse("[]", error));
  EXPECT_EQ(error, "invalid plan: $: expected an object");
}

/// One corruption of a valid plan and the error it must produce.
struct Corruption {
  const char *name;
  void (*mutate)(json &);
  const char *error;
};

class PlanCorruption : public ::testing::TestWithParam<Corruption> {};

TEST_P(PlanCorruption, IsRejectedWithItsPath) {
  json plan = json::parse(readPlan("ring.json"));
  GetParam().mutate(plan);
  std::string error;
  EXPECT_FALSE(Plan::parse(plan.dump(), error));
  EXPECT_EQ(error, std::string("invalid plan: ") + GetParam().error);
}

static json &firstCopy(json &plan) {
  for (json &stream : plan["streams"])
    for (json &op : stream["ops"])
      if (op["op"] == "copy")
        return op;
  throw std::runtime_error("no copy");
}

INSTANTIATE_TEST_SUITE_P(
    Plan, PlanCorruption,
    ::testing::Values(
        Corruption{"format", [](json &p) { p["format"] = "other"; },
                   "$.format: not an sdma plan"},
        Corruption{"version", [](json &p) { p["version"] = 2; },
                   "$.version: plan version 2 but this runtime reads version "
                   "1: recompile the schedule with a matching sdma"},
        Corruption{"no_ranks", [](json &p) { p.erase("ranks"); },
                   "$: missing \"ranks\""},
        Corruption{"ranks_type", [](json &p) { p["ranks"] = "4"; },
                   "$.ranks: expected an integer"},
        Corruption{"ranks_zero", [](json &p) { p["ranks"] = 0; },
                   "$.ranks: value 0 is out of range [1, 65536]"},
        Corruption{"absurd_chunks",
                   [](json &p) { p["buffers"][0]["chunks"] = 1e300; },
                   "$.buffers[0].chunks: expected an integer"},
        Corruption{"huge_chunks",
                   [](json &p) {
                     p["buffers"][0]["chunks"] = 18446744073709551615ull;
                   },
                   "$.buffers[0].chunks: value 18446744073709551615 is out "
                   "of range [1, 1099511627776]"},
        Corruption{"duplicate_buffer",
                   [](json &p) { p["buffers"][1]["name"] = "input"; },
                   "$.buffers[1].name: buffer \"input\" appears twice"},
        Corruption{"unknown_collective",
                   [](json &p) { p["collective"]["kind"] = "all_sum"; },
                   "$.collective.kind: unknown collective \"all_sum\""},
        Corruption{"rank_out_of_range",
                   [](json &p) { firstCopy(p)["dst"]["rank"] = 4; },
                   "$.streams[0].ops[2].dst.rank: value 4 is out of range "
                   "[0, 3]"},
        Corruption{"slice_out_of_bounds",
                   [](json &p) { firstCopy(p)["dst"]["offset"] = 4; },
                   "$.streams[0].ops[2].dst.offset: value 4 is out of range "
                   "[0, 3]"},
        Corruption{"slice_too_long",
                   [](json &p) { firstCopy(p)["dst"]["count"] = 9; },
                   "$.streams[0].ops[2].dst.count: value 9 is out of range "
                   "[1, 4]"},
        Corruption{"unknown_buffer",
                   [](json &p) { firstCopy(p)["src"]["buffer"] = "nope"; },
                   "$.streams[0].ops[2].src.buffer: unknown buffer \"nope\""},
        Corruption{"size_mismatch",
                   [](json &p) {
                     firstCopy(p)["src"] = {{"rank", 0},
                                            {"buffer", "output"},
                                            {"offset", 0},
                                            {"count", 2}};
                   },
                   "$.streams[0].ops[2]: slices differ in size"},
        Corruption{"unknown_op", [](json &p) { firstCopy(p)["op"] = "memset"; },
                   "$.streams[0].ops[2].op: unknown command \"memset\""},
        Corruption{"flag_out_of_range",
                   [](json &p) { p["streams"][0]["ops"][0]["flag"] = 99; },
                   "$.streams[0].ops[0].flag: value 99 is out of range [0, "
                   "9]"},
        Corruption{"wrong_done", [](json &p) { p["done"][2] = 7; },
                   "$.done[2]: says 7 completions but the queues send 4"},
        Corruption{"foreign_command",
                   [](json &p) { firstCopy(p)["src"]["rank"] = 2; },
                   "$.streams[0].ops[2]: a queue of rank 0 issues a command "
                   "of rank 2"},
        // A pull is its destination's: rank 0's own copy marked a pull
        // belongs to the queue of its destination's rank.
        Corruption{"foreign_pull",
                   [](json &p) {
                     firstCopy(p)["dst"]["rank"] = 1;
                     firstCopy(p)["pull"] = true;
                   },
                   "$.streams[0].ops[2]: a queue of rank 0 issues a command "
                   "of rank 1 (a pull: its destination's)"},
        Corruption{"pull_not_boolean",
                   [](json &p) { firstCopy(p)["pull"] = 1; },
                   "$.streams[0].ops[2].pull: expected true or false"},
        // Only a copy is issued by its destination: "pull" on anything
        // else would be read as a push.
        Corruption{"pull_on_swap",
                   [](json &p) {
                     json &c = firstCopy(p);
                     json swap = {{"op", "swap"},
                                  {"a", c["src"]},
                                  {"b", c["dst"]},
                                  {"pull", true}};
                     c = swap;
                   },
                   "$.streams[0].ops[2].pull: a swap cannot be a pull (only "
                   "a copy is issued by its destination's rank)"},
        Corruption{"pull_on_bcast",
                   [](json &p) {
                     json &c = firstCopy(p);
                     json bcast = {{"op", "bcast"},
                                   {"src", c["src"]},
                                   {"dst", json::array({c["dst"], c["dst"]})},
                                   {"pull", false}};
                     c = bcast;
                   },
                   "$.streams[0].ops[2].pull: a bcast cannot be a pull (only "
                   "a copy is issued by its destination's rank)"},
        Corruption{"pull_on_poll",
                   [](json &p) { p["streams"][0]["ops"][0]["pull"] = true; },
                   "$.streams[0].ops[0].pull: a poll cannot be a pull (only "
                   "a copy is issued by its destination's rank)"},
        Corruption{"duplicate_queue",
                   [](json &p) { p["streams"].push_back(p["streams"][0]); },
                   "$.streams[8]: a second queue for rank 0 engine 0"}),
    [](const ::testing::TestParamInfo<Corruption> &info) {
      return std::string(info.param.name);
    });
