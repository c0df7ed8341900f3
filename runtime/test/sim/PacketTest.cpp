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
#include <tuple>

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

/// $.target as the compiler writes it for `name` (Targets.h).
json target(const std::string &name) {
  bool gfx9 = name == "gfx9";
  return {{"name", name},
          {"count_bits", gfx9 ? 22 : 30},
          {"max_copy_bytes", gfx9 ? 1 << 22 : 1 << 30},
          {"swap", !gfx9},
          {"max_swap_bytes", gfx9 ? 0 : 0x3fffffe0},
          {"nop_count", !gfx9}};
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
          {"version", 2},
          {"program", "t"},
          {"target", target("gfx942")},
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
  // Version 1 plans (no target; built for gfx942's limits) are refused.
  json plan = twoRankPlan();
  plan["version"] = 1;
  plan.erase("target");
  EXPECT_NE(loadError(plan).find("$.version: packet plan version 1 but this "
                                 "runtime reads version 2: recompile"),
            std::string::npos)
      << loadError(plan);
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
  plan.erase("target");
  EXPECT_NE(loadError(plan).find("$: missing \"target\""), std::string::npos);
  plan = twoRankPlan();
  plan["target"]["max_copy_bytes"] = (1 << 22) + 1;
  plan["target"]["count_bits"] = 22;
  EXPECT_NE(loadError(plan).find("$.target.max_copy_bytes: value 4194305 is "
                                 "out of range [1, 4194304]"),
            std::string::npos);
  plan = twoRankPlan();
  plan["target"]["swap"] = false;
  EXPECT_NE(loadError(plan).find("$.target.max_swap_bytes: value 1073741792 "
                                 "is out of range [0, 0]"),
            std::string::npos);
  plan = twoRankPlan();
  plan["target"]["count_bits"] = 31;
  EXPECT_NE(loadError(plan).find("$.target.count_bits: value 31 is out of "
                                 "range [1, 30]"),
            std::string::npos);
  plan = twoRankPlan();
  plan["target"]["name"] = "";
  EXPECT_NE(loadError(plan).find("$.target.name: must be 1 to 64 characters"),
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

TEST(PacketSimulator, RefusesCountsBeyondThePlansTarget) {
  // gfx9 moves 4 MiB per packet: an 8 MiB chunk the program allows
  // (max_chunk_bytes) still cannot be one COPY_LINEAR there.
  json plan = twoRankPlan();
  plan["target"] = target("gfx9");
  plan["max_chunk_bytes"] = 8 << 20;
  EXPECT_NE(simError(plan, 8 << 20)
                .find("queue 0:0: relocation at dword 1: 1 chunks of 8388608 "
                      "bytes exceed the 4194304 bytes one packet moves on "
                      "target gfx9"),
            std::string::npos)
      << simError(plan, 8 << 20);
  // The same plan for gfx942 (1 GiB per packet) runs.
  plan["target"] = target("gfx942");
  std::string error;
  std::optional<PacketPlan> loaded = PacketPlan::parse(plan.dump(), error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->target.name, "gfx942");
  EXPECT_EQ(loaded->target.maxCopyBytes, 1 << 30);
  EXPECT_TRUE(loaded->target.swap);
  HostMemory memory(loaded->layout(), 8 << 20);
  EXPECT_TRUE(simulatePackets(*loaded, memory, {}, error)) << error;
}

TEST(PacketSimulator, BroadcastDestinationsShareTheirOffsetWithin32Bytes) {
  // Three ranks; rank 0 broadcasts in@r0 to out@r1 chunk `first` and out@r2
  // chunk `second`.
  auto plan = [](int first, int second) {
    json p = twoRankPlan();
    p["ranks"] = 3;
    p["chunk_align"] = 1;
    p["done"] = json::array({0, 0, 0});
    std::vector<uint32_t> image = {0x08000001u, 0, 0, 0, 0, 0, 0, 0, 0};
    p["queues"][0]["image"] = base64(image);
    p["queues"][0]["dwords"] = image.size();
    p["queues"][0]["relocs"] =
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
                      {"chunk", first}},
                     {{"dword", 7},
                      {"kind", "chunk"},
                      {"buffer", "out"},
                      {"rank", 2},
                      {"chunk", second}}});
    return p;
  };
  // 16-byte chunks one apart: offsets 0 and 16 within 32 bytes.
  std::string error = simError(plan(0, 1), 16);
  EXPECT_NE(error.find("rank 0 engine 0, packet at byte 0x0000: broadcast "
                       "destinations 0x"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(" are not at the same offset within 32 bytes"),
            std::string::npos)
      << error;
  // The same offset on both runs, 32-byte aligned or not (16 + 16, 24 +
  // 24, 0 + 32).
  for (auto [first, second, chunk] :
       {std::tuple{1, 1, 16}, {1, 1, 24}, {0, 1, 32}}) {
    std::optional<PacketPlan> loaded =
        PacketPlan::parse(plan(first, second).dump(), error);
    ASSERT_TRUE(loaded) << error;
    HostMemory memory(loaded->layout(), chunk);
    fillInputs(loaded->layout(), memory);
    EXPECT_TRUE(simulatePackets(*loaded, memory, {}, error))
        << first << " " << second << " " << chunk << ": " << error;
    EXPECT_EQ(std::memcmp(memory.buffer(1, 1) + first * chunk,
                          memory.buffer(0, 0), chunk),
              0);
    EXPECT_EQ(std::memcmp(memory.buffer(2, 1) + second * chunk,
                          memory.buffer(0, 0), chunk),
              0);
  }
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
