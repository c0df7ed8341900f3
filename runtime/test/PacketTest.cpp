//===- PacketTest.cpp - packet plans: loader, decoder, simulator ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Packet images here are written by hand from SDMA-PACKETS.md, not by the
// compiler's encoder: they test the decoder and simulator on their own.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Packets.h"

#include "Base64.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace sdma::rt;
using json = nlohmann::ordered_json;
using sdma::rt::test::base64;

namespace {
// Hand-encoded packets.
std::vector<uint32_t> copyLinear() { return {0x00000001, 0, 0, 0, 0, 0, 0}; }
std::vector<uint32_t> atomicAdd1() { return {0x5e00000a, 0, 0, 1, 0, 0, 0, 0}; }
std::vector<uint32_t> pollGe(uint32_t ref) {
  return {0xd0000008, 0, 0, ref, 0xffffffff, 0x0fff000a};
}

/// Two ranks, buffers in (1 chunk) and out (2 chunks), all-gather declared:
/// queue 0:0 copies in@0 to out@1 chunk 0 then adds 1 to rank 0's flag 1.
json twoRankPlan() {
  std::vector<uint32_t> image = copyLinear();
  for (uint32_t d : atomicAdd1())
    image.push_back(d);
  json relocs =
      json::array({{{"dword", 1}, {"kind", "count"}, {"chunks", 1}},
                   {{"dword", 3},
                    {"kind", "chunk"},
                    {"buffer", "in"},
                    {"rank", 0},
                    {"chunk", 0}},
                   {{"dword", 5},
                    {"kind", "chunk"},
                    {"buffer", "out"},
                    {"rank", 1},
                    {"chunk", 0}},
                   {{"dword", 8}, {"kind", "flag"}, {"rank", 0}, {"slot", 1}}});
  return {{"format", "sdma.packets"},
          {"version", 1},
          {"program", "t"},
          {"ranks", 2},
          {"collective", nullptr},
          {"buffers", json::array({{{"name", "in"}, {"chunks", 1}},
                                   {{"name", "out"}, {"chunks", 2}}})},
          {"flags", 3},
          {"timestamps", 0},
          {"chunk_align", 64},
          {"max_chunk_bytes", 4096},
          {"done", json::array({1, 0})},
          {"queues", json::array({{{"rank", 0},
                                   {"engine", 0},
                                   {"dwords", image.size()},
                                   {"image", base64(image)},
                                   {"relocs", relocs}}})}};
}

std::string loadError(const json &plan) {
  std::string error;
  EXPECT_FALSE(PacketPlan::parse(plan.dump(), error));
  return error;
}

std::string decodeError(const std::vector<uint32_t> &image) {
  std::vector<Packet> packets;
  std::string error;
  EXPECT_FALSE(decodePackets(image, packets, error));
  return error;
}

std::string simError(const json &text, size_t chunk) {
  std::string error;
  std::optional<PacketPlan> plan = PacketPlan::parse(text.dump(), error);
  EXPECT_TRUE(plan) << error;
  if (!plan)
    return error;
  HostMemory memory(plan->layout(), chunk);
  EXPECT_FALSE(simulatePackets(*plan, memory, {}, error));
  return error;
}
} // namespace

TEST(PacketDecoder, DecodesHandWrittenPackets) {
  std::vector<uint32_t> image = pollGe(1);
  for (uint32_t d : {0x08000001u, 0x3fu, 0u, 0x40u, 0u, 0x80u, 0u, 0xc0u, 0u})
    image.push_back(d);
  for (uint32_t d : {0x00020000u, 0u, 0u})
    image.push_back(d);
  std::vector<Packet> packets;
  std::string error;
  ASSERT_TRUE(decodePackets(image, packets, error)) << error;
  ASSERT_EQ(packets.size(), 3u);
  EXPECT_EQ(packets[0].kind, Packet::Kind::PollRegMem);
  EXPECT_EQ(packets[0].func, 5u);
  EXPECT_EQ(packets[0].retry, 0xfffu);
  EXPECT_EQ(packets[0].interval, 10u);
  EXPECT_EQ(packets[1].kind, Packet::Kind::CopyBroadcast);
  EXPECT_EQ(packets[1].bytes, 64u);
  EXPECT_EQ(packets[1].addr[2], 0xc0u);
  EXPECT_EQ(packets[2].kind, Packet::Kind::Nop);
  EXPECT_EQ(packets[2].size, 3u);
}

TEST(PacketDecoder, RejectsWhatItCannotRun) {
  EXPECT_NE(decodeError({0x00000003}).find("byte 0x0: unknown opcode 3"),
            std::string::npos);
  EXPECT_NE(decodeError({0x00000001, 0, 0}).find("truncated: needs 7 dwords"),
            std::string::npos);
  EXPECT_NE(decodeError({0x00000401, 0, 0, 0, 0, 0, 0}).find("COPY sub-op 4"),
            std::string::npos);
  EXPECT_NE(decodeError({0x0200000a, 0, 0, 0, 0, 0, 0, 0})
                .find("ATOMIC operation 1 is not supported"),
            std::string::npos);
  EXPECT_NE(decodeError({0x50000008, 0, 0, 0, 0, 0}).find("on a register"),
            std::string::npos);
  EXPECT_NE(decodeError({0xf0000008, 0, 0, 0, 0, 0})
                .find("compare function 7 is undefined"),
            std::string::npos);
  EXPECT_NE(decodeError({0x0000000d, 0, 0}).find("TIMESTAMP sub-op 0"),
            std::string::npos);
  // The error names the failing packet's offset, after good ones.
  std::vector<uint32_t> image = copyLinear();
  image.push_back(0x000000ff);
  EXPECT_NE(decodeError(image).find("byte 0x1c: unknown opcode 255"),
            std::string::npos);
}

TEST(PacketPlan, LoaderNamesWhatIsWrong) {
  json plan = twoRankPlan();
  plan["version"] = 2;
  EXPECT_NE(loadError(plan).find("$.version: packet plan version 2"),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"][0]["image"] = "not base64!";
  EXPECT_NE(loadError(plan).find("$.queues[0].image: not valid base64"),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"][0]["dwords"] = 14;
  EXPECT_NE(loadError(plan).find("holds 60 bytes but \"dwords\" says 14"),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"][0]["relocs"][1]["dword"] = 14;
  EXPECT_NE(loadError(plan).find("$.queues[0].relocs[1].dword: value 14 is "
                                 "out of range [0, 13]"),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"][0]["relocs"][2]["buffer"] = "nope";
  EXPECT_NE(loadError(plan).find("relocs[2].buffer: unknown buffer \"nope\""),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"][0]["relocs"][0]["kind"] = "magic";
  EXPECT_NE(loadError(plan).find("unknown relocation \"magic\""),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"][0]["relocs"][3] = {
      {"dword", 8}, {"kind", "timestamp"}, {"rank", 0}, {"index", 0}};
  EXPECT_NE(loadError(plan).find("a timestamp relocation in a plan with no "
                                 "slots"),
            std::string::npos);
  plan = twoRankPlan();
  plan["queues"].push_back(plan["queues"][0]);
  EXPECT_NE(loadError(plan).find("a second queue for rank 0 engine 0"),
            std::string::npos);
  plan = twoRankPlan();
  plan["chunk_align"] = 48;
  EXPECT_NE(loadError(plan).find("$.chunk_align: must be a power of two"),
            std::string::npos);
  std::string error;
  EXPECT_FALSE(PacketPlan::parse("{", error));
  EXPECT_EQ(error, "packet plan is not valid JSON");
}

TEST(PacketSimulator, RunsAndPatches) {
  std::string error;
  std::optional<PacketPlan> plan =
      PacketPlan::parse(twoRankPlan().dump(), error);
  ASSERT_TRUE(plan) << error;
  Plan layout = plan->layout();
  HostMemory memory(layout, 128);
  fillInputs(layout, memory);
  PacketSimStats stats;
  ASSERT_TRUE(simulatePackets(*plan, memory, {}, error, &stats)) << error;
  EXPECT_EQ(std::memcmp(memory.buffer(1, 1), memory.buffer(0, 0), 128), 0);
  EXPECT_EQ(memory.flags(0)[kDoneFlag], 1u);
  EXPECT_EQ(stats.packets, 2u);
  EXPECT_EQ(stats.bytesMoved, 128u);
}

TEST(PacketSimulator, RefusesChunkSizesTheProgramCannotTake) {
  EXPECT_NE(simError(twoRankPlan(), 96)
                .find("chunk size 96 is not a multiple "
                      "of 64"),
            std::string::npos);
  EXPECT_NE(simError(twoRankPlan(), 8192)
                .find("exceeds the 4096 bytes the program was split for"),
            std::string::npos);
}

TEST(PacketSimulator, ReportsAWaitThatNeverCompletes) {
  json plan = twoRankPlan();
  std::vector<uint32_t> image = pollGe(1);
  for (uint32_t d : copyLinear())
    image.push_back(d);
  plan["queues"][0]["image"] = base64(image);
  plan["queues"][0]["dwords"] = image.size();
  plan["queues"][0]["relocs"] =
      json::array({{{"dword", 1}, {"kind", "flag"}, {"rank", 0}, {"slot", 2}},
                   {{"dword", 7}, {"kind", "count"}, {"chunks", 1}},
                   {{"dword", 9},
                    {"kind", "chunk"},
                    {"buffer", "in"},
                    {"rank", 0},
                    {"chunk", 0}},
                   {{"dword", 11},
                    {"kind", "chunk"},
                    {"buffer", "out"},
                    {"rank", 1},
                    {"chunk", 0}}});
  EXPECT_NE(simError(plan, 64).find(
                "a wait never completes: rank 0 engine 0 (packet at byte "
                "0x0000) polls flag@r0[2] ge 1 but it stays at 0"),
            std::string::npos);
}

TEST(PacketSimulator, ReportsBadAddressesAndShortCompletion) {
  // A raw (unrelocated) source address points at nothing.
  json plan = twoRankPlan();
  plan["queues"][0]["relocs"].erase(1);
  EXPECT_NE(simError(plan, 64).find("rank 0 engine 0, packet at byte 0x0000: "
                                    "COPY_LINEAR address 0x0 (+64 bytes) is "
                                    "below every buffer"),
            std::string::npos);
  // The count relocated for two chunks runs past the 1-chunk input.
  plan = twoRankPlan();
  plan["queues"][0]["relocs"][0]["chunks"] = 2;
  EXPECT_NE(simError(plan, 64).find("runs past the end of buffer \"in\" of "
                                    "rank 0 (64 bytes)"),
            std::string::npos);
  // The plan promises a completion on rank 1 that never comes.
  plan = twoRankPlan();
  plan["done"] = json::array({1, 1});
  EXPECT_NE(simError(plan, 64).find("rank 1: completion flag ended at 0, "
                                    "expected 1"),
            std::string::npos);
}
