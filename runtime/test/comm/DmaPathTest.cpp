//===- DmaPathTest.cpp - the communicator's DMA path on the CPU device ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The CPU device's DMA engines (CpuDmaKernel.h) under the call protocol of
// DmaProgram.h, on a hand-made two-rank plan (rank 0 copies its chunk into
// rank 1 and notifies it; rank 1 waits, then copies it on): ranks as
// threads over plain memory run three calls back to back with random
// delays, every byte checked, flags back at 0 and the run counter advanced
// after each; a poll nobody notifies times out naming the flag (and the
// notifier rank); ranks whose call tags differ stop before a byte moves;
// an abort stops a wait at once; the launch table decodes;
// the GPUs' sync kernel compiles for sm_90 and gfx90a. The GPU path's
// command sequence (GpuDmaKernel.h) over a recording GpuDmaOps that runs a
// batch's copies in reverse order: independent copies go as one batch, a
// copy reading a pending one's bytes, a notify, a swap and the queue's end
// issue the batch first, and the bytes match one copy at a time.
//
//===----------------------------------------------------------------------===//

#include "comm/DmaProgram.h"
#include "comm/DmaSyncKernel.h"
#include "comm/GpuDmaKernel.h"
#include "comm/KernelBuilds.h"
#include "host/CpuDmaKernel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::test;

namespace {

constexpr int kRanks = 2;
constexpr size_t kChunk = 100;

Slice slice(int rank, int buffer) {
  Slice s;
  s.rank = rank;
  s.buffer = buffer;
  s.offset = 0;
  s.count = 1;
  return s;
}

/// Rank 0: copy a@0 -> b@1, notify rank 1's flag 2. Rank 1: poll flag 2
/// >= 1, copy b@1 -> a@1.
Plan twoRankPlan() {
  Plan plan;
  plan.schedule = "relay";
  plan.ranks = kRanks;
  plan.engines = 1;
  plan.flags = 3;
  plan.buffers = {Buffer{"a", 1}, Buffer{"b", 1}};
  plan.done = {0, 0};
  Stream first, second;
  first.rank = 0;
  second.rank = 1;
  Command copy;
  copy.kind = Command::Kind::Copy;
  copy.slices[0] = slice(0, 0);
  copy.slices[1] = slice(1, 1);
  Command notify;
  notify.kind = Command::Kind::Notify;
  notify.target = 1;
  notify.flag = 2;
  first.commands = {copy, notify};
  Command poll;
  poll.kind = Command::Kind::Poll;
  poll.flag = 2;
  poll.value = 1;
  Command relay;
  relay.kind = Command::Kind::Copy;
  relay.slices[0] = slice(1, 1);
  relay.slices[1] = slice(1, 0);
  second.commands = {poll, relay};
  plan.streams = {first, second};
  return plan;
}

std::shared_ptr<const DmaProgram> programFor(int rank,
                                             Plan plan = twoRankPlan()) {
  DmaProgram program;
  program.plan = std::move(plan);
  program.variant = "pcpy";
  program.rank = rank;
  program.queues = {size_t(rank)};
  DmaScheduleOptions options;
  options.process = {0, 1};
  options.self = rank;
  options.valueWaits = true;
  std::string error;
  std::optional<DmaSchedule> schedule =
      scheduleDmaQueues(program.plan, error, options);
  EXPECT_TRUE(schedule) << error;
  if (schedule)
    program.schedule = std::move(*schedule);
  return std::make_shared<const DmaProgram>(std::move(program));
}

/// Every rank's memory and control words, as a heap would hold them.
struct Job {
  std::vector<std::vector<char>> a, b;
  unsigned long long flags[kRanks][3] = {};
  unsigned int sync[kRanks][2] = {};
  unsigned long long epochs[kRanks][2] = {};
  unsigned long long arrive[kRanks][2 * kRanks] = {};
  unsigned long long record[kRanks][8] = {};
  unsigned long long tags[kRanks][kRanks] = {};
  uint64_t callTag[kRanks] = {7, 7};

  Job() : a(kRanks, std::vector<char>(kChunk)), b(a) {}

  /// The launch table rank `rank` passes (Launcher::table's layout).
  std::vector<uint64_t> table(int rank, uint64_t timeoutMs) {
    auto w = [](const void *p) { return reinterpret_cast<uint64_t>(p); };
    std::vector<uint64_t> t;
    for (int r = 0; r < kRanks; ++r) {
      t.push_back(w(a[r].data()));
      t.push_back(w(b[r].data()));
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
    t.push_back(callTag[rank]);
    for (int r = 0; r < kRanks; ++r)
      t.push_back(w(tags[r]));
    return t;
  }

  KernelLaunch launch(int rank, uint64_t timeoutMs) {
    KernelLaunch l;
    l.table = table(rank, timeoutMs);
    l.chunkBytes = kChunk;
    l.programRank = rank;
    return l;
  }
};

} // namespace

TEST(DmaPath, TableDecodes) {
  Job job;
  LaunchTable t;
  std::string error;
  ASSERT_TRUE(LaunchTable::decode(job.table(1, 7), kRanks, 2, t, error))
      << error;
  EXPECT_EQ(t.buffers[3], job.b[1].data());
  EXPECT_EQ(t.flags[1], job.flags[1]);
  EXPECT_EQ(t.error, job.record[1]);
  EXPECT_EQ(t.timeoutNs, 7000000u);
  EXPECT_EQ(t.epochs, job.epochs[1]);
  EXPECT_EQ(t.arrive[0], job.arrive[0]);
  EXPECT_EQ(t.errorMirror, nullptr);
  std::vector<uint64_t> short_ = job.table(1, 7);
  short_.pop_back();
  LaunchTable bad;
  EXPECT_FALSE(LaunchTable::decode(short_, kRanks, 2, bad, error));
  EXPECT_EQ(t.callTag, 7u);
  EXPECT_EQ(t.tags[1], job.tags[1]);
  EXPECT_NE(error.find("a kernel table of 21 words"), std::string::npos)
      << error;
}

TEST(DmaPath, BackToBackCallsWithDelaysMoveEveryByte) {
  Job job;
  std::unique_ptr<CommKernel> kernels[kRanks] = {
      createCpuDmaKernel(programFor(0)), createCpuDmaKernel(programFor(1))};
  std::mt19937 random(7);
  for (int call = 0; call < 3; ++call) {
    for (size_t i = 0; i < kChunk; ++i)
      job.a[0][i] = char(call * 31 + i);
    job.a[1].assign(kChunk, 0);
    int delays[kRanks] = {int(random() % 20), int(random() % 20)};
    std::string errors[kRanks];
    bool ok[kRanks] = {false, false};
    std::vector<std::thread> ranks;
    for (int r = 0; r < kRanks; ++r)
      ranks.emplace_back([&, r] {
        std::this_thread::sleep_for(std::chrono::milliseconds(delays[r]));
        ok[r] = kernels[r]->launch(job.launch(r, 10000), errors[r]);
      });
    for (std::thread &t : ranks)
      t.join();
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_TRUE(ok[r]) << "rank " << r << " call " << call << ": "
                         << errors[r];
      EXPECT_EQ(job.epochs[r][0], uint64_t(call + 1));
      EXPECT_EQ(job.record[r][0], 0u);
    }
    EXPECT_EQ(job.a[1], job.a[0]) << "call " << call;
    EXPECT_EQ(job.b[1], job.a[0]) << "call " << call;
    // Reset by their owner after the exit barrier.
    EXPECT_EQ(job.flags[1][2], 0u);
  }
}

TEST(DmaPath, APollNobodyNotifiesTimesOutNamingTheFlag) {
  Job job;
  std::shared_ptr<const DmaProgram> program = programFor(1);
  EXPECT_EQ(program->notifiers(1, 2), std::vector<int>{0});
  // Rank 0 "arrived" at the entry barrier (its tag written), then never
  // notified.
  job.arrive[1][0] = 1;
  job.tags[1][0] = job.callTag[0];
  std::string error;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(createCpuDmaKernel(program)->launch(job.launch(1, 100), error));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(job.record[1][0], 1u);
  EXPECT_EQ(job.record[1][1], 1u);
  EXPECT_EQ(int64_t(job.record[1][2]), dmaFlagSlot(2));
  EXPECT_EQ(job.record[1][3], 1u);
  EXPECT_EQ(job.record[1][4], 0u);
  EXPECT_EQ(job.a[1], std::vector<char>(kChunk, 0)) << "nothing relayed";
}

TEST(DmaPath, AnEntryBarrierNobodyReachesNamesTheRank) {
  Job job;
  std::string error;
  EXPECT_FALSE(
      createCpuDmaKernel(programFor(0))->launch(job.launch(0, 100), error));
  EXPECT_EQ(int64_t(job.record[0][2]), -2);
  EXPECT_EQ(job.record[0][3], PeerWait::encode(1, 1))
      << "rank 1 did not start run 0 (its first arrival, awaited)";
  EXPECT_EQ(job.record[0][4], 0u) << "no arrival of rank 1 seen";
  EXPECT_EQ(job.b[1], std::vector<char>(kChunk, 0)) << "nothing written";
}

TEST(DmaPath, RanksMakingDifferentCallsStopBeforeAnyByteMoves) {
  // Each rank's launch tags its call; rank 1's differs (another buffer
  // than the one agreed, say): both fail at the entry barrier, nothing
  // copied, each naming the other.
  Job job;
  job.callTag[1] = 8;
  std::unique_ptr<CommKernel> kernels[kRanks] = {
      createCpuDmaKernel(programFor(0)), createCpuDmaKernel(programFor(1))};
  std::string errors[kRanks];
  bool ok[kRanks] = {true, true};
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r)
    ranks.emplace_back([&, r] {
      ok[r] = kernels[r]->launch(job.launch(r, 10000), errors[r]);
    });
  for (std::thread &t : ranks)
    t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_FALSE(ok[r]) << "rank " << r;
    EXPECT_EQ(int64_t(job.record[r][2]), -4) << "rank " << r;
    EXPECT_EQ(job.record[r][3], uint64_t(1 - r)) << "the other rank";
  }
  EXPECT_EQ(job.b[1], std::vector<char>(kChunk, 0)) << "nothing written";
}

TEST(DmaPath, AnAbortStopsAWaitAtOnce) {
  Job job;
  job.arrive[1][0] = 1;
  job.tags[1][0] = job.callTag[0];
  std::thread abort([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    __atomic_store_n(&job.record[1][0], kAbortedStatus, __ATOMIC_SEQ_CST);
  });
  std::string error;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(
      createCpuDmaKernel(programFor(1))->launch(job.launch(1, 60000), error));
  abort.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(job.record[1][0], kAbortedStatus) << "the abort's record stays";
}

// The GPU DMA path's sync kernel (DmaSyncKernel.h), compiled as the GPUs
// compile it (no GPU needed): NVRTC for an H100/H200 and hipRTC for an
// MI200, where each is installed.
TEST(DmaPath, SyncKernelCompilesForNvidiaAndAmd) {
  expectKernelBuilds(kDmaSyncKernelSource, "sdma_dma_sync");
}

namespace {

/// GpuDmaOps over host memory that logs what it is asked to do: a copy
/// runs at once, a batch's copies in reverse order (a batch is unordered);
/// the sync kernel's operations are only logged.
class RecordingOps : public GpuDmaOps {
public:
  RecordingOps(std::vector<std::string> &log, bool batches)
      : log_(log), batches_(batches) {}
  ~RecordingOps() override {
    for (char *p : owned_)
      delete[] p;
  }
  bool activate(std::string &) override { return true; }
  bool createStream(void *&stream, std::string &) override {
    stream = this;
    return true;
  }
  void destroyStream(void *) override {}
  bool createEvent(void *&event, std::string &) override {
    event = this;
    return true;
  }
  void destroyEvent(void *) override {}
  bool record(void *, void *, std::string &) override { return true; }
  bool waitEvent(void *, void *, std::string &) override { return true; }
  bool copy(char *dst, const char *src, size_t bytes, void *,
            std::string &) override {
    log_.push_back("copy");
    std::memmove(dst, src, bytes);
    return true;
  }
  bool mayBatch(void *, bool &may, std::string &) override {
    may = batches_;
    return true;
  }
  bool copyBatch(const std::vector<DmaCopy> &copies, void *,
                 std::string &) override {
    log_.push_back("batch " + std::to_string(copies.size()));
    for (auto c = copies.rbegin(); c != copies.rend(); ++c)
      std::memmove(c->dst, c->src, c->bytes);
    return true;
  }
  bool allocate(size_t bytes, char *&ptr, std::string &) override {
    ptr = new char[bytes];
    owned_.push_back(ptr);
    return true;
  }
  void release(char *) override {}
  bool sync(void *, const DmaSyncArgs &, DmaSyncOp op, int, uint64_t,
            std::string &) override {
    static const char *const names[] = {"enter", "exit", "poll", "notify"};
    log_.push_back(names[int(op)]);
    return true;
  }

private:
  std::vector<std::string> &log_;
  bool batches_;
  std::vector<char *> owned_;
};

Command copyCommand(Slice dst, Slice src) {
  Command c;
  c.kind = Command::Kind::Copy;
  c.slices[0] = src;
  c.slices[1] = dst;
  return c;
}

Slice chunk(int rank, int buffer, int64_t offset) {
  Slice s = slice(rank, buffer);
  s.offset = offset;
  return s;
}

/// Rank 0's one queue, over chunks of 25 bytes (four to a buffer; buffer
/// 0 "a", 1 "b"): two independent copies; a copy reading the first one's
/// destination, and one independent of it; a notify; a copy; a swap.
/// Rank 1's queue stays twoRankPlan's.
Plan batchPlan() {
  Plan plan = twoRankPlan();
  Stream &q = plan.streams[0];
  Command notify = q.commands[1];
  Command swap;
  swap.kind = Command::Kind::Swap;
  swap.slices[0] = chunk(0, 0, 3);
  swap.slices[1] = chunk(0, 1, 3);
  q.commands = {copyCommand(chunk(1, 1, 0), chunk(0, 0, 0)),
                copyCommand(chunk(1, 1, 1), chunk(0, 0, 1)),
                copyCommand(chunk(1, 0, 0), chunk(1, 1, 0)),
                copyCommand(chunk(1, 0, 3), chunk(0, 0, 3)),
                notify,
                copyCommand(chunk(1, 1, 3), chunk(1, 1, 1)),
                swap};
  return plan; // rank 1's queue polls the notify (else it is none)
}

/// Rank 0's queue: a copy; one writing the first one's source; one
/// independent of both; one writing the bytes the third writes.
Plan hazardPlan() {
  Plan plan = twoRankPlan();
  plan.streams[0].commands = {copyCommand(chunk(1, 1, 0), chunk(0, 0, 0)),
                              copyCommand(chunk(0, 0, 0), chunk(0, 1, 0)),
                              copyCommand(chunk(1, 1, 2), chunk(0, 0, 1)),
                              copyCommand(chunk(1, 1, 2), chunk(0, 0, 2)),
                              plan.streams[0].commands[1]};
  return plan;
}

/// Runs `plan`'s rank 0 through GpuDmaKernel: its log, and every byte of
/// both ranks' buffers after it.
std::vector<std::string> runBatchPlan(bool option, bool opsBatch,
                                      std::vector<char> &bytes,
                                      Plan plan = batchPlan()) {
  std::vector<std::string> log;
  std::string error;
  std::unique_ptr<CommKernel> kernel =
      createGpuDmaKernel(std::make_unique<RecordingOps>(log, opsBatch),
                         programFor(0, std::move(plan)), option, error);
  EXPECT_TRUE(kernel) << error;
  if (!kernel)
    return log;
  Job job;
  for (int r = 0; r < kRanks; ++r)
    for (size_t i = 0; i < kChunk; ++i) {
      job.a[r][i] = char(1 + r * 101 + i);
      job.b[r][i] = char(50 + r * 71 + i * 3);
    }
  KernelLaunch launch = job.launch(0, 1000);
  launch.chunkBytes = 25;
  EXPECT_TRUE(kernel->launch(launch, error)) << error;
  bytes.clear();
  for (int r = 0; r < kRanks; ++r) {
    bytes.insert(bytes.end(), job.a[r].begin(), job.a[r].end());
    bytes.insert(bytes.end(), job.b[r].begin(), job.b[r].end());
  }
  return log;
}

} // namespace

TEST(DmaPath, GpuQueuesBatchIndependentCopiesAndKeepTheOrderThatMatters) {
  std::vector<char> oneByOne, batched;
  EXPECT_EQ(runBatchPlan(true, false, oneByOne),
            (std::vector<std::string>{"enter", "copy", "copy", "copy", "copy",
                                      "notify", "copy", "copy", "copy", "copy",
                                      "exit"}))
      << "a stream the vendor cannot batch on (captured): one by one";
  // Copy 3 reads what copy 1 writes: the first batch ends before it.
  EXPECT_EQ(runBatchPlan(true, true, batched),
            (std::vector<std::string>{"enter", "batch 2", "batch 2", "notify",
                                      "copy", "copy", "copy", "copy", "exit"}));
  EXPECT_EQ(batched, oneByOne) << "the batches reordered dependent copies";
  std::vector<char> off;
  EXPECT_EQ(runBatchPlan(false, true, off).size(), 11u)
      << "SDMA_DMA_BATCH=0: one by one";
  EXPECT_EQ(off, oneByOne);
}

// A copy that writes what a pending copy reads, or writes what one writes,
// ends the batch before it too.
TEST(DmaPath, GpuQueuesNeverBatchAWriteAfterReadOrAWriteAfterWrite) {
  std::vector<char> oneByOne, batched;
  runBatchPlan(false, true, oneByOne, hazardPlan());
  EXPECT_EQ(runBatchPlan(true, true, batched, hazardPlan()),
            (std::vector<std::string>{"enter", "copy", "batch 2", "copy",
                                      "notify", "exit"}));
  EXPECT_EQ(batched, oneByOne) << "the batches reordered dependent copies";
}
