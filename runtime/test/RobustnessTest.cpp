//===- RobustnessTest.cpp - what the runtime refuses instead of crashing --===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Sizes that wrap, allocations beyond the memory budget, self-copies (legal
// no-ops) and partial overlaps (errors), every flag slot the packet loader
// allows, echoes cut short, linear duplicate checks, typed profiles, and a
// replay of every committed fuzz input through FuzzTargets.h.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"
#include "format/JsonFields.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/MemoryBudget.h"

#include "Base64.h"
#include <chrono>
#include <cstdlib>
#include <dirent.h>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace sdma::rt;
using json = nlohmann::ordered_json;
using sdma::rt::test::base64;

namespace {

/// One rank, buffer "buf" of `chunks` chunks, one queue running `ops` then
/// notifying its completion flag.
json onePlan(json ops, int64_t chunks = 4) {
  ops.push_back({{"op", "notify"}, {"rank", 0}, {"flag", 1}});
  return {
      {"format", "sdma.plan"},
      {"version", 1},
      {"schedule", "t"},
      {"ranks", 1},
      {"collective", nullptr},
      {"buffers", json::array({{{"name", "buf"}, {"chunks", chunks}}})},
      {"engines", 1},
      {"flags", 3},
      {"prelaunch", false},
      {"done", json::array({1})},
      {"streams", json::array({{{"rank", 0}, {"engine", 0}, {"ops", ops}}})}};
}

json slice(int64_t offset, int64_t count, const char *buffer = "buf") {
  return {
      {"rank", 0}, {"buffer", buffer}, {"offset", offset}, {"count", count}};
}

std::optional<Plan> parsePlan(const json &plan, std::string &error) {
  return Plan::parse(plan.dump(), error);
}

/// A packet plan of `ranks` ranks (buffer "buf", 4 chunks each) and one
/// queue on rank 0 holding `image` with `relocs`.
json packetPlan(int ranks, int64_t flags, json done,
                const std::vector<uint32_t> &image, json relocs) {
  return {{"format", "sdma.packets"},
          {"version", 2},
          {"program", "t"},
          {"target",
           {{"name", "gfx942"},
            {"count_bits", 30},
            {"max_copy_bytes", 1 << 30},
            {"swap", true},
            {"max_swap_bytes", 0x3fffffe0},
            {"nop_count", true}}},
          {"ranks", ranks},
          {"collective", nullptr},
          {"buffers", json::array({{{"name", "buf"}, {"chunks", 4}}})},
          {"flags", flags},
          {"timestamps", 0},
          {"chunk_align", 64},
          {"max_chunk_bytes", 4096},
          {"done", done},
          {"queues", json::array({{{"rank", 0},
                                   {"engine", 0},
                                   {"dwords", image.size()},
                                   {"image", base64(image)},
                                   {"relocs", relocs}}})}};
}

json chunkReloc(int dword, int64_t chunk) {
  return {{"dword", dword},
          {"kind", "chunk"},
          {"buffer", "buf"},
          {"rank", 0},
          {"chunk", chunk}};
}
json flagReloc(int dword, int rank, int64_t slot) {
  return {{"dword", dword}, {"kind", "flag"}, {"rank", rank}, {"slot", slot}};
}
json countReloc(int dword, int64_t chunks) {
  return {{"dword", dword}, {"kind", "count"}, {"chunks", chunks}};
}

/// COPY_LINEAR of `chunks` chunks from buf@c`from` to buf@c`to` (rank 0),
/// then ATOMIC +1 on rank 0's completion flag.
json packetCopy(int64_t chunks, int64_t from, int64_t to) {
  std::vector<uint32_t> image = {0x00000001, 0, 0, 0, 0, 0, 0, 0x5e00000a,
                                 0,          0, 1, 0, 0, 0, 0};
  return packetPlan(1, 3, json::array({1}), image,
                    json::array({countReloc(1, chunks), chunkReloc(3, from),
                                 chunkReloc(5, to), flagReloc(8, 0, 1)}));
}

bool runPackets(const json &text, size_t chunk, std::string &error,
                PacketSimStats *stats = nullptr) {
  std::optional<PacketPlan> plan = PacketPlan::parse(text.dump(), error);
  EXPECT_TRUE(plan) << error;
  if (!plan)
    return false;
  std::optional<HostMemory> memory =
      HostMemory::create(plan->layout(), chunk, error);
  EXPECT_TRUE(memory) << error;
  if (!memory)
    return false;
  fillInputs(plan->layout(), *memory);
  return simulatePackets(*plan, *memory, {}, error, stats);
}

} // namespace

TEST(CheckedMath, RefusesWhatWraps) {
  EXPECT_EQ(checkedMul(uint64_t(1) << 40, uint64_t(1) << 24), std::nullopt);
  EXPECT_EQ(checkedMul(uint64_t(1) << 20, uint64_t(1) << 24), uint64_t(1)
                                                                  << 44);
  EXPECT_EQ(checkedAdd(UINT64_MAX, 1), std::nullopt);
  CheckedSize size;
  size.addProduct({uint64_t(1) << 40, uint64_t(1) << 24}).add(5);
  EXPECT_FALSE(size.valid());
}

TEST(HostMemory, SizesThatWrapAreRefusedBeforeAllocating) {
  // 2^40 chunks x 16 MiB wraps to 0 bytes in 64 bits: refused, not a
  // 0-byte buffer that the first copy overwrites past.
  std::string error;
  std::optional<Plan> plan = parsePlan(
      onePlan(json::array({{{"op", "copy"},
                            {"src", slice(0, 1)},
                            {"dst", slice((int64_t(1) << 40) - 1, 1)}}}),
              int64_t(1) << 40),
      error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(HostMemory::bytesNeeded(*plan, 16 << 20), std::nullopt);
  EXPECT_FALSE(HostMemory::create(*plan, 16 << 20, error));
  EXPECT_EQ(error, "host memory for 1 ranks' buffers and flags at "
                   "16777216-byte chunks needs more than 2^64 bytes, more "
                   "than the memory budget of " +
                       MemoryBudget::describe(MemoryBudget().bytes) +
                       " (set SDMA_MEMORY_BUDGET or --memory-budget)");
}

TEST(HostMemory, BudgetExceededNamesWhatHowMuchAndTheBudget) {
  std::string error;
  std::optional<Plan> plan = parsePlan(onePlan(json::array()), error);
  ASSERT_TRUE(plan) << error;
  MemoryBudget budget{uint64_t(1) << 20};
  // 4 chunks x 1 MiB + flags > 1 MiB.
  EXPECT_FALSE(HostMemory::create(*plan, 1 << 20, error, budget));
  EXPECT_NE(error.find("host memory for 1 ranks' buffers and flags at "
                       "1048576-byte chunks needs 4 MiB ("),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("more than the memory budget of 1 MiB (1048576 "
                       "bytes)"),
            std::string::npos)
      << error;
  std::optional<HostMemory> small =
      HostMemory::create(*plan, 1024, error, budget);
  ASSERT_TRUE(small) << error;
  EXPECT_EQ(small->totalBytes(), *HostMemory::bytesNeeded(*plan, 1024));
  EXPECT_FALSE(HostMemory::create(*plan, 0, error));
  EXPECT_EQ(error, "the chunk size must be at least 1 byte");
}

TEST(HostMemory, HugeFlagCountsAreCountedToo) {
  // 65536 ranks x 2^20 flags x 8 bytes = 512 GiB of flags alone.
  json plan = onePlan(json::array());
  plan["ranks"] = 65536;
  plan["flags"] = 1 << 20;
  plan["done"] = json::array();
  for (int r = 0; r < 65536; ++r)
    plan["done"].push_back(r == 0 ? 1 : 0);
  std::string error;
  std::optional<Plan> parsed = parsePlan(plan, error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_FALSE(HostMemory::create(*parsed, 1, error, MemoryBudget{1 << 30}));
  EXPECT_NE(error.find("needs 512 GiB"), std::string::npos) << error;
}

TEST(MemoryBudget, ParsesBytesWithSuffixes) {
  EXPECT_EQ(MemoryBudget::parseBytes("4096"), 4096u);
  EXPECT_EQ(MemoryBudget::parseBytes("512M"), uint64_t(512) << 20);
  EXPECT_EQ(MemoryBudget::parseBytes("16g"), uint64_t(16) << 30);
  EXPECT_EQ(MemoryBudget::parseBytes("1KiB"), 1024u);
  EXPECT_EQ(MemoryBudget::parseBytes("2T"), uint64_t(2) << 40);
  for (const char *bad : {"", "0", "-1", "1.5G", "G", "12Q", "16E",
                          "99999999999999999999", "17179869184G"})
    EXPECT_EQ(MemoryBudget::parseBytes(bad), std::nullopt) << bad;
}

TEST(MemoryBudget, ComesFromTheEnvironment) {
  std::string error;
  setenv("SDMA_MEMORY_BUDGET", "3M", 1);
  std::optional<MemoryBudget> budget = MemoryBudget::fromEnvironment(error);
  ASSERT_TRUE(budget) << error;
  EXPECT_EQ(budget->bytes, uint64_t(3) << 20);
  EXPECT_EQ(MemoryBudget().bytes, uint64_t(3) << 20);
  setenv("SDMA_MEMORY_BUDGET", "lots", 1);
  EXPECT_FALSE(MemoryBudget::fromEnvironment(error));
  EXPECT_EQ(error, "SDMA_MEMORY_BUDGET='lots' is not a positive byte count "
                   "(e.g. 4096, 512M, 16G)");
  EXPECT_EQ(MemoryBudget().bytes, MemoryBudget::machineBytes());
  unsetenv("SDMA_MEMORY_BUDGET");
  budget = MemoryBudget::fromEnvironment(error);
  ASSERT_TRUE(budget);
  EXPECT_EQ(budget->bytes, MemoryBudget::machineBytes());
  EXPECT_GT(MemoryBudget::machineBytes(), 0u);
}

TEST(Simulator, AdversarialStagingCountsAgainstTheBudget) {
  std::string error;
  std::optional<Plan> plan = parsePlan(
      onePlan(json::array(
          {{{"op", "copy"}, {"src", slice(0, 2)}, {"dst", slice(2, 2)}}})),
      error);
  ASSERT_TRUE(plan) << error;
  std::optional<HostMemory> memory = HostMemory::create(*plan, 4096, error);
  ASSERT_TRUE(memory) << error;
  SimulatorOptions options;
  options.adversarial = true;
  options.budget.bytes = memory->totalBytes() + 4096; // staging needs 8192
  EXPECT_FALSE(simulate(*plan, *memory, options, error));
  EXPECT_EQ(error.rfind("the adversarial simulation (host memory plus each "
                        "queue's staged command) needs ",
                        0),
            0u)
      << error;
  options.budget.bytes += 4096;
  EXPECT_TRUE(simulate(*plan, *memory, options, error)) << error;
}

TEST(Plan, ExactSelfCopiesAreAcceptedAndRunAsNoOps) {
  std::string error;
  json ops =
      json::array({{{"op", "copy"}, {"src", slice(1, 2)}, {"dst", slice(1, 2)}},
                   {{"op", "swap"}, {"a", slice(0, 1)}, {"b", slice(0, 1)}},
                   {{"op", "bcast"},
                    {"src", slice(3, 1)},
                    {"dst", json::array({slice(3, 1), slice(0, 1)})}}});
  std::optional<Plan> plan = parsePlan(onePlan(ops), error);
  ASSERT_TRUE(plan) << error;
  const std::vector<Command> &commands = plan->streams[0].commands;
  EXPECT_TRUE(commands[0].isNoOp());
  EXPECT_TRUE(commands[1].isNoOp());
  EXPECT_FALSE(commands[2].isNoOp()); // writes chunk 0
  for (bool adversarial : {false, true}) {
    std::optional<HostMemory> memory = HostMemory::create(*plan, 8, error);
    ASSERT_TRUE(memory) << error;
    for (int i = 0; i < 32; ++i)
      memory->buffer(0, 0)[i] = static_cast<uint8_t>(i);
    SimulatorOptions options;
    options.adversarial = adversarial;
    ASSERT_TRUE(simulate(*plan, *memory, options, error)) << error;
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(memory->buffer(0, 0)[i], i < 8 ? 24 + i : i) << i;
  }
}

TEST(Plan, PartialOverlapIsRejectedWithItsPath) {
  std::string error;
  EXPECT_FALSE(parsePlan(
      onePlan(json::array(
          {{{"op", "copy"}, {"src", slice(0, 2)}, {"dst", slice(1, 2)}}})),
      error));
  EXPECT_EQ(error, "invalid plan: $.streams[0].ops[0]: src rank 0 buf[0, 2) "
                   "and dst rank 0 buf[1, 3) overlap partially (slices of "
                   "one command must be disjoint or identical)");
  EXPECT_FALSE(parsePlan(
      onePlan(json::array({{{"op", "bcast"},
                            {"src", slice(0, 2)},
                            {"dst", json::array({slice(2, 2), slice(3, 2)})}}}),
              6),
      error));
  EXPECT_EQ(error, "invalid plan: $.streams[0].ops[0]: dst[0] rank 0 buf[2, "
                   "4) and dst[1] rank 0 buf[3, 5) overlap partially (slices "
                   "of one command must be disjoint or identical)");
  // A plan built in code is held to the same rule before it runs.
  std::optional<Plan> plan = parsePlan(
      onePlan(json::array(
          {{{"op", "copy"}, {"src", slice(0, 2)}, {"dst", slice(2, 2)}}})),
      error);
  ASSERT_TRUE(plan) << error;
  plan->streams[0].commands[0].slices[1].offset = 1;
  std::optional<HostMemory> memory = HostMemory::create(*plan, 8, error);
  ASSERT_TRUE(memory);
  EXPECT_FALSE(simulate(*plan, *memory, {}, error));
  EXPECT_EQ(error, "invalid plan t: $.streams[0].ops[0]: slices overlap "
                   "partially");
}

TEST(Plan, InconsistentCollectiveSizesAreRejected) {
  json plan = onePlan(json::array());
  plan["buffers"] = json::array(
      {{{"name", "buf"}, {"chunks", 4}}, {{"name", "out"}, {"chunks", 3}}});
  plan["collective"] = {
      {"kind", "all_gather"}, {"input", "buf"}, {"output", "out"}};
  std::string error;
  EXPECT_FALSE(parsePlan(plan, error));
  EXPECT_EQ(error, "invalid plan: $.collective: all_gather over 1 ranks needs "
                   "an input of 4 and an output of 4 chunks, but \"buf\" has "
                   "4 and \"out\" 3");
  // checkOutputs on a plan built in code with such sizes reports, not
  // divides by zero.
  plan["collective"] = nullptr;
  std::optional<Plan> parsed = parsePlan(plan, error);
  ASSERT_TRUE(parsed) << error;
  parsed->ranks = 1;
  parsed->collective = Collective{"all_to_all", 0, 0, 0};
  parsed->buffers[0].chunks = 0;
  std::optional<HostMemory> memory = HostMemory::create(*parsed, 8, error);
  ASSERT_TRUE(memory) << error;
  CheckResult check = checkOutputs(*parsed, *memory);
  EXPECT_EQ(check.wrongBytes, 1u);
  EXPECT_EQ(check.firstWrong, "the collective's output has fewer chunks than "
                              "the plan has ranks");
}

TEST(Plan, LongNamesAreEchoedCut) {
  std::string name(1 << 20, 'n');
  std::string error;
  EXPECT_FALSE(
      parsePlan(onePlan(json::array({{{"op", "copy"},
                                      {"src", slice(0, 1, name.c_str())},
                                      {"dst", slice(1, 1)}}})),
                error));
  EXPECT_EQ(error, "invalid plan: $.streams[0].ops[0].src.buffer: unknown "
                   "buffer \"" +
                       std::string(64, 'n') + "... (1048576 bytes)\"");
  json plan = onePlan(json::array());
  plan["buffers"].push_back({{"name", "buf"}, {"chunks", 1}});
  plan["buffers"][0]["name"] = plan["buffers"][1]["name"] = name + "\n";
  EXPECT_FALSE(parsePlan(plan, error));
  EXPECT_EQ(error, "invalid plan: $.buffers[1].name: buffer \"" +
                       std::string(64, 'n') +
                       "... (1048577 bytes)\" appears twice");
  plan = onePlan(json::array());
  plan["collective"] = {{"kind", std::string(100, 'k') + "\x01"},
                        {"input", "buf"},
                        {"output", "buf"}};
  EXPECT_FALSE(parsePlan(plan, error));
  EXPECT_EQ(error, "invalid plan: $.collective.kind: unknown collective \"" +
                       std::string(64, 'k') + "... (101 bytes)\"");
  EXPECT_EQ(sdma::rt::jsonfields::echo("a\nb"), "a?b");
}

TEST(Plan, TwoHundredThousandQueuesLoadInLinearTime) {
  // 4 ranks x 50,000 engines, no commands: the duplicate check hashes, so
  // this takes a fraction of a second (8.5 s when it compared every pair).
  json plan = onePlan(json::array());
  plan["ranks"] = 4;
  plan["engines"] = 50000;
  plan["done"] = json::array({0, 0, 0, 0});
  json streams = json::array();
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 50000; ++e)
      streams.push_back({{"rank", r}, {"engine", e}, {"ops", json::array()}});
  plan["streams"] = streams;
  std::string text = plan.dump(), error;
  auto start = std::chrono::steady_clock::now();
  std::optional<Plan> parsed = Plan::parse(text, error);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->streams.size(), 200000u);
  EXPECT_LT(seconds, 5.0);
  // The one duplicate, last of 200,001, is found and named.
  plan["streams"].push_back(streams[123456]);
  EXPECT_FALSE(Plan::parse(plan.dump(), error));
  EXPECT_EQ(error, "invalid plan: $.streams[200000]: a second queue for rank "
                   "2 engine 23456");
}

TEST(PacketSimulator, SelfCopyIsANoOpAndPartialOverlapAFault) {
  std::string error;
  PacketSimStats stats;
  EXPECT_TRUE(runPackets(packetCopy(2, 1, 1), 64, error, &stats)) << error;
  EXPECT_EQ(stats.bytesMoved, 0u);
  EXPECT_TRUE(runPackets(packetCopy(2, 0, 2), 64, error, &stats)) << error;
  EXPECT_EQ(stats.bytesMoved, 128u);
  EXPECT_FALSE(runPackets(packetCopy(2, 0, 1), 64, error));
  EXPECT_EQ(error, "rank 0 engine 0, packet at byte 0x0000: COPY_LINEAR "
                   "source and destination overlap");
}

TEST(PacketSimulator, EveryFlagSlotTheLoaderAllowsHasItsOwnAddress) {
  // Rank 0 adds 1 to its flag slot 2^17 + 1: with 2^17 slots per rank's
  // region that was rank 1's completion flag, and a program that never
  // completed rank 1 was reported a success.
  std::vector<uint32_t> image = {0x5e00000a, 0, 0, 1, 0, 0, 0, 0};
  json plan = packetPlan(2, (1 << 17) + 2, json::array({0, 1}), image,
                         json::array({flagReloc(1, 0, (1 << 17) + 1)}));
  std::string error;
  EXPECT_FALSE(runPackets(plan, 64, error));
  EXPECT_EQ(error, "rank 1: completion flag ended at 0, expected 1");
  // The last slot of the most the loader allows works, and polls see it.
  image = {0x5e00000a, 0, 0, 1, 0,          0,          0,          0,
           0xd0000008, 0, 0, 1, 0xffffffff, 0x0fff000a, 0x5e00000a, 0,
           0,          1, 0, 0, 0,          0};
  plan = packetPlan(
      2, kMaxPacketFlags, json::array({1, 0}), image,
      json::array({flagReloc(1, 0, kMaxPacketFlags - 1),
                   flagReloc(9, 0, kMaxPacketFlags - 1), flagReloc(15, 0, 1)}));
  EXPECT_TRUE(runPackets(plan, 64, error)) << error;
  plan["flags"] = kMaxPacketFlags + 1;
  EXPECT_FALSE(PacketPlan::parse(plan.dump(), error));
  EXPECT_EQ(error, "invalid packet plan: $.flags: value 1048577 is out of "
                   "range [2, 1048576]");
}

TEST(PacketSimulator, TimestampSlotsCountAgainstTheBudget) {
  std::vector<uint32_t> image = {0x5e00000a, 0, 0, 1, 0, 0, 0, 0};
  json plan = packetPlan(64, 3, json::array(), image,
                         json::array({flagReloc(1, 0, 1)}));
  for (int r = 0; r < 64; ++r)
    plan["done"].push_back(r == 0 ? 1 : 0);
  plan["timestamps"] = 1 << 20; // 64 ranks x 32 MiB
  std::string error;
  std::optional<PacketPlan> packets = PacketPlan::parse(plan.dump(), error);
  ASSERT_TRUE(packets) << error;
  std::optional<HostMemory> memory =
      HostMemory::create(packets->layout(), 64, error);
  ASSERT_TRUE(memory) << error;
  PacketSimOptions options;
  options.budget.bytes = 64 << 20;
  EXPECT_FALSE(simulatePackets(*packets, *memory, options, error));
  EXPECT_NE(error.find("the packet simulation of t (host memory, decoded "
                       "packets, timestamp slots) needs 2 GiB"),
            std::string::npos)
      << error;
}

TEST(Profiles, TypedFieldsAreRejectedWithTheirPath) {
  std::string error;
  EXPECT_FALSE(
      NvTimingProfile::parse("{\"target\": 5, \"executors\": {}}", error));
  EXPECT_EQ(error, "invalid timing profile: $.target: expected a string");
  std::string dma = R"({"format": "sdma.dma-timing", "version": 1,
      "target": 5, "sources": {}, "parameters": {}})";
  EXPECT_FALSE(DmaTimingProfile::parse(dma, error));
  EXPECT_EQ(error, "invalid dma timing profile: $.target: expected a string");
  dma = R"({"format": "sdma.dma-timing", "version": 1, "target": "x",
      "sources": {}, "parameters": {"control_us": 1, "schedule_us": 1,
      "engine_startup_us": 1, "per_command_us": 1, "engine_atomic_us": 1,
      "host_sync_us": 1, "engine_GBps": 1, "link_GBps": 1,
      "engines_per_gpu": "many"}})";
  EXPECT_FALSE(DmaTimingProfile::parse(dma, error));
  EXPECT_EQ(error, "invalid dma timing profile: "
                   "$.parameters.engines_per_gpu: expected an integer");
  std::string key(1000, '7');
  EXPECT_FALSE(NvTimingProfile::parse(
      "{\"target\": \"t\", \"executors\": {}, \"by_devices\": {\"" + key +
          "\": {}}}",
      error));
  EXPECT_EQ(error, "invalid timing profile: $.by_devices." +
                       std::string(64, '7') +
                       "... (1000 bytes): expected a GPU count as the key");
  // The committed profiles load.
  for (const char *name : {"mi300x-sdma.json", "h200-nvidia.json"}) {
    std::string path =
        std::string(SDMA_RUNTIME_TEST_DIR) + "/../profiles/" + name;
    if (std::string(name).find("mi300x") != std::string::npos)
      EXPECT_TRUE(DmaTimingProfile::load(path, error)) << error;
    else
      EXPECT_TRUE(NvTimingProfile::load(path, error)) << error;
  }
}

TEST(LdstCpuExecutor, RefusesFlagsBeyondTheBudgetBeforeCompiling) {
  std::string text =
      "// sdma-ldst: {\"format\":\"sdma.ldst\",\"version\":2,\"schedule\":"
      "\"ag\",\"ranks\":65536,\"entry\":\"sdma_ldst\",\"flag_slots\":1048576,"
      "\"buffers\":[{\"name\":\"in\",\"chunks\":1}],\"collective\":null}\n";
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::parse(text, error);
  ASSERT_TRUE(program) << error;
  LdstCpuOptions options;
  options.budget.bytes = uint64_t(1) << 30;
  options.compiler = "/nonexistent/c++"; // never reached
  EXPECT_FALSE(LdstCpuExecutor::create(*program, options, error));
  EXPECT_EQ(error.rfind("the flag slots of 65536 ranks needs 512 GiB", 0), 0u)
      << error;
}

TEST(Fuzz, CommittedInputsReplayCleanly) {
  // Every input the fuzzer ever crashed on, and the seeds, through every
  // target (as scripts/fuzz-runtime.sh runs them, without sanitizers here).
  std::vector<std::string> dirs = {
      std::string(SDMA_RUNTIME_TEST_DIR) + "/../../test/fuzz/runtime-inputs",
      std::string(SDMA_RUNTIME_TEST_DIR) + "/plans",
      std::string(SDMA_RUNTIME_TEST_DIR) + "/../profiles"};
  int replayed = 0;
  for (const std::string &dir : dirs) {
    DIR *d = opendir(dir.c_str());
    ASSERT_TRUE(d) << dir;
    while (dirent *entry = readdir(d)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..")
        continue;
      std::ifstream file(dir + "/" + name, std::ios::binary);
      std::stringstream text;
      text << file.rdbuf();
      for (uint64_t variant : {0, 9, 10})
        EXPECT_EQ(sdma::fuzz::fuzzOne(text.str(), "", variant), "")
            << dir << "/" << name;
      ++replayed;
    }
    closedir(d);
  }
  EXPECT_GE(replayed, 10);
}
