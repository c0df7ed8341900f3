//===- RingPathTest.cpp - kernel-submitted DMA on the CPU device ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The CPU device's kernel-submitted DMA path (CpuRingKernel.h) under the
// call protocol of DmaProgram.h, on the compiler's own plan and gfx942
// packets of the 4-rank ring all-gather (plans/ring-host.json and
// plans/ring-host.packets.json, kept current by plans-up-to-date.test):
// ranks as threads over plain memory run calls back to back with random
// delays, every byte checked, flags back at 0 and the run counter advanced;
// rings of 64 bytes (a few packets) make every writer wrap and wait for
// ring space within a call; a poll nobody notifies times out naming its
// flag and the rank that should have notified it; an abort stops the
// engines and the writer at once; packets that are not the plan's, a ring
// too small and a prelaunched plan are refused.
//
//===----------------------------------------------------------------------===//

#include "comm/DmaProgram.h"
#include "host/CpuRingKernel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

using namespace sdma::rt;

namespace {

constexpr int kRanks = 4;
constexpr size_t kChunk = 64;

PacketPlan ringPackets() {
  std::string error;
  std::optional<PacketPlan> p = PacketPlan::load(
      std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/ring-host.packets.json",
      error);
  EXPECT_TRUE(p) << error;
  return p ? std::move(*p) : PacketPlan();
}

std::shared_ptr<DmaProgram> programFor(int rank, std::string &error) {
  std::optional<Plan> plan = Plan::load(
      std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/ring-host.json", error);
  if (!plan)
    return nullptr;
  auto program = std::make_shared<DmaProgram>();
  program->plan = std::move(*plan);
  program->variant = "pcpy";
  program->rank = rank;
  if (!program->attachPackets(ringPackets(), error))
    return nullptr;
  return program;
}

/// Every rank's memory and control words, as a heap would hold them.
struct Job {
  std::vector<std::vector<char>> input, output;
  unsigned long long flags[kRanks][10] = {};
  unsigned int sync[kRanks][2] = {};
  unsigned long long epochs[kRanks][2] = {};
  unsigned long long arrive[kRanks][2 * kRanks] = {};
  unsigned long long record[kRanks][8] = {};
  unsigned long long tags[kRanks][kRanks] = {};

  Job()
      : input(kRanks, std::vector<char>(kChunk)),
        output(kRanks, std::vector<char>(kRanks * kChunk)) {}

  /// The launch table rank `rank` passes (Launcher::table's layout).
  KernelLaunch launch(int rank, uint64_t timeoutMs) {
    auto w = [](const void *p) { return reinterpret_cast<uint64_t>(p); };
    std::vector<uint64_t> t;
    for (int r = 0; r < kRanks; ++r) {
      t.push_back(w(input[r].data()));
      t.push_back(w(output[r].data()));
    }
    for (int r = 0; r < kRanks; ++r)
      t.push_back(w(flags[r]));
    for (int r = 0; r < kRanks; ++r)
      t.push_back(w(sync[r]));
    t.push_back(w(record[rank]));
    t.push_back(timeoutMs * 1000000ull);
    t.push_back(w(epochs[rank]));
    for (int r = 0; r < kRanks; ++r)
      t.push_back(w(arrive[r]));
    for (int i = 0; i < 6; ++i)
      t.push_back(0); // errorMirror, rowBytes, counts
    t.push_back(7);   // the call tag
    for (int r = 0; r < kRanks; ++r)
      t.push_back(w(tags[r]));
    KernelLaunch l;
    l.table = std::move(t);
    l.chunkBytes = kChunk;
    l.programRank = rank;
    return l;
  }
};

/// Rank `r`'s kernel with rings of `ringBytes`, its writer from the kernel
/// cache in `cache` ("": compiled apart).
std::unique_ptr<CommKernel> kernelFor(int r, uint64_t ringBytes,
                                      std::string &error,
                                      const std::string &cache = "") {
  std::shared_ptr<DmaProgram> program = programFor(r, error);
  if (!program)
    return nullptr;
  return createCpuRingKernel(program, ringBytes, "", cache, error);
}

} // namespace

TEST(RingPath, PacketsOfTheRingAttach) {
  std::string error;
  std::shared_ptr<DmaProgram> program = programFor(2, error);
  ASSERT_TRUE(program) << error;
  EXPECT_EQ(program->packetQueues, (std::vector<size_t>{4, 5}));
  EXPECT_EQ(program->flagSlots(), 10);
  EXPECT_EQ(program->packetBaseAlign, 1u);
  EXPECT_EQ(program->submission(), ", kernel-submitted gfx942 packets");
  // Rank 1's engine 0 notifies rank 2's flag 4 (the listing's flag@r2[4]).
  EXPECT_EQ(program->notifiers(2, 4), std::vector<int>{1});
  EXPECT_EQ(program->packetRefusal(64, 256), "");
  EXPECT_NE(
      program->packetRefusal(size_t(1) << 27, 256)
          .find("exceeds the 67108864 bytes the gfx942 packets were split for"),
      std::string::npos);
}

TEST(RingPath, PacketsThatAreNotThePlansAreRefused) {
  std::string error;
  std::shared_ptr<DmaProgram> program = programFor(0, error);
  ASSERT_TRUE(program) << error;
  PacketPlan other = ringPackets();
  other.buffers[1].chunks = 3;
  EXPECT_FALSE(program->attachPackets(other, error));
  EXPECT_NE(error.find("buffer 1 is 'output' of 3 chunks, in the DMA plan "
                       "'output' of 4"),
            std::string::npos)
      << error;
  PacketPlan timed = ringPackets();
  timed.timestamps = 2;
  EXPECT_FALSE(program->attachPackets(timed, error));
  EXPECT_NE(error.find("they write timestamps"), std::string::npos) << error;
  // A queue that waits for the host's launch flag (a prelaunched plan).
  PacketPlan prelaunched = ringPackets();
  prelaunched.queues[0].relocations[0].slot = kLaunchFlag;
  EXPECT_FALSE(program->attachPackets(prelaunched, error));
  EXPECT_NE(error.find("queue 0:0: it waits for a launch flag"),
            std::string::npos)
      << error;
}

TEST(RingPath, ARingSmallerThanTwoPacketsIsRefused) {
  std::string error;
  std::shared_ptr<DmaProgram> program = programFor(0, error);
  ASSERT_TRUE(program) << error;
  EXPECT_FALSE(createCpuRingKernel(program, 32, "", "", error));
  EXPECT_NE(error.find("a ring of 32 bytes"), std::string::npos) << error;
  EXPECT_FALSE(createCpuRingKernel(program, 96, "", "", error));
}

TEST(RingPath, BackToBackCallsWithDelaysAndFullRingsMoveEveryByte) {
  Job job;
  std::unique_ptr<CommKernel> kernels[kRanks];
  std::string error;
  // One cached writer object for every rank, as ranks that are threads of
  // one process load it: each writer thread keeps its own rank's hooks.
  const std::string cache = ::testing::TempDir() + "sdma-ring-path-cache";
  for (int r = 0; r < kRanks; ++r) {
    kernels[r] = kernelFor(r, 64, error, cache);
    ASSERT_TRUE(kernels[r]) << error;
  }
  std::mt19937 random(11);
  for (int call = 0; call < 4; ++call) {
    for (int r = 0; r < kRanks; ++r) {
      for (size_t i = 0; i < kChunk; ++i)
        job.input[r][i] = char(call * 31 + r * 7 + i);
      job.output[r].assign(kRanks * kChunk, 0);
    }
    std::string errors[kRanks];
    bool ok[kRanks] = {};
    std::vector<std::thread> ranks;
    for (int r = 0; r < kRanks; ++r)
      ranks.emplace_back([&, r, delay = int(random() % 20)] {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        ok[r] = kernels[r]->launch(job.launch(r, 10000), errors[r]);
      });
    for (std::thread &t : ranks)
      t.join();
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_TRUE(ok[r]) << "rank " << r << " call " << call << ": "
                         << errors[r];
      EXPECT_EQ(job.epochs[r][0], uint64_t(call + 1));
      EXPECT_EQ(job.record[r][0], 0u);
      for (int s = 0; s < 10; ++s)
        EXPECT_EQ(job.flags[r][s], 0u) << "rank " << r << " flag " << s;
      for (int from = 0; from < kRanks; ++from)
        EXPECT_EQ(
            std::vector<char>(job.output[r].begin() + from * kChunk,
                              job.output[r].begin() + (from + 1) * kChunk),
            job.input[from])
            << "call " << call << ": rank " << r << "'s chunk from " << from;
    }
  }
}

TEST(RingPath, APollNobodyNotifiesTimesOutNamingTheFlagAndTheNotifier) {
  Job job;
  std::string error;
  std::unique_ptr<CommKernel> kernel = kernelFor(1, 4096, error);
  ASSERT_TRUE(kernel) << error;
  // Every other rank "arrived" at the entry barrier (tag written), then
  // never ran a packet.
  for (int r = 0; r < kRanks; ++r) {
    job.arrive[1][r] = r != 1;
    job.tags[1][r] = 7;
  }
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(kernel->launch(job.launch(1, 200), error));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(job.record[1][0], 1u);
  EXPECT_EQ(job.record[1][1], 1u);
  // Rank 1's engine 0 ran its first packets (its own chunk to rank 2,
  // after flag 5 from its engine 3), then polls flag 2 for rank 0's chunk.
  EXPECT_EQ(int64_t(job.record[1][2]), dmaFlagSlot(2));
  EXPECT_EQ(job.record[1][3], 1u);
  EXPECT_EQ(job.record[1][4], 0u);
  EXPECT_EQ(std::vector<char>(job.output[2].begin() + kChunk,
                              job.output[2].begin() + 2 * kChunk),
            job.input[1])
      << "rank 1's chunk reached rank 2 before the wait";
  std::shared_ptr<DmaProgram> program = programFor(1, error);
  ASSERT_TRUE(program) << error;
  EXPECT_EQ(program->notifiers(1, 2), std::vector<int>{0});
  EXPECT_EQ(program->notifiers(1, 5), std::vector<int>{1});
}

TEST(RingPath, AnAbortStopsTheEnginesAndTheWriterAtOnce) {
  Job job;
  std::string error;
  std::unique_ptr<CommKernel> kernel = kernelFor(2, 64, error);
  ASSERT_TRUE(kernel) << error;
  for (int r = 0; r < kRanks; ++r) {
    job.arrive[2][r] = 1;
    job.tags[2][r] = 7;
  }
  std::thread abort([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    __atomic_store_n(&job.record[2][0], 0xABABABABABABABABull,
                     __ATOMIC_SEQ_CST);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(kernel->launch(job.launch(2, 60000), error));
  abort.join();
  // Long before the timeout (60 s): every engine and writer saw the abort.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RingPath, APacketOutsideTheCallsMemoryStopsItsEngineNamingTheQueue) {
  std::string error;
  std::shared_ptr<DmaProgram> program = programFor(0, error);
  ASSERT_TRUE(program) << error;
  // Rank 0's engine 3 copies its input to chunk 100 of its output (4
  // chunks): the address lies outside every buffer of the call.
  PacketPlan bad = ringPackets();
  for (Relocation &r : bad.queues[1].relocations)
    if (r.kind == Relocation::Kind::Chunk && r.buffer == 1)
      r.chunk = 100;
  ASSERT_TRUE(program->attachPackets(std::move(bad), error)) << error;
  std::unique_ptr<CommKernel> kernel =
      createCpuRingKernel(program, 4096, "", "", error);
  ASSERT_TRUE(kernel) << error;
  Job job;
  for (int r = 0; r < kRanks; ++r) {
    job.arrive[0][r] = r != 0;
    job.tags[0][r] = 7;
  }
  EXPECT_FALSE(kernel->launch(job.launch(0, 2000), error));
  EXPECT_EQ(job.record[0][0], 1u);
  EXPECT_EQ(int64_t(job.record[0][2]), kDmaPacketFaultSlot);
  EXPECT_EQ(job.record[0][3], 1u) << "queue 1 (rank 0, engine 3)";
  EXPECT_EQ(job.record[0][4], 0u) << "its first packet, at ring offset 0";
}

#ifdef SDMA_HAVE_HIP
#include "hip/HipRingKernel.h"
#include "sdma/runtime/Ring.h"

TEST(RingPath, TheHipDevicesWriterCompilesForAmdAndItsTargetFollowsTheGpu) {
  std::string error, why;
  EXPECT_EQ(sdmaPacketTargetOf("gfx942:sramecc+:xnack-", why), "gfx942");
  EXPECT_EQ(sdmaPacketTargetOf("gfx950", why), "gfx950");
  EXPECT_EQ(sdmaPacketTargetOf("gfx90a", why), "gfx9");
  EXPECT_EQ(sdmaPacketTargetOf("gfx1100", why), "");
  EXPECT_NE(why.find("gfx1100 has no SDMA packet profile"), std::string::npos)
      << why;
  std::shared_ptr<DmaProgram> program = programFor(3, error);
  ASSERT_TRUE(program) << error;
  std::optional<std::string> writer =
      emitCommunicatorRingWriter(*program->packets, error);
  ASSERT_TRUE(writer) << error;
  // The table holds the call's 4 x 2 buffers and 4 ranks' flags.
  EXPECT_NE(writer->find("#define SDMA_RING_TABLE_BUFS 8\n"
                         "#define SDMA_RING_TABLE_RANKS 4\n"),
            std::string::npos);
  EXPECT_NE(writer->find("sdma_ring_write_table"), std::string::npos);
  // hipRTC (HIP 5.2's builds gfx90a; it cannot build gfx942).
  std::string code;
  ASSERT_TRUE(compileRingWriterHipRtc(*writer, "gfx90a", code, error)) << error;
  EXPECT_GT(code.size(), 1000u);
}
#endif
