//===- HipDmaExecutor.cpp - a DMA plan on HIP streams (AMD) ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "hip/HipDmaExecutor.h"
#include "exec/DmaQueueSchedule.h"
#include "exec/DmaQueueWalk.h"
#include "hip/HipApi.h"
#include "hip/HipDeviceSet.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::hip;

struct HipDmaExecutor::State {
  const HipApi *api = nullptr;
  Plan plan;
  HipOptions options;
  std::unique_ptr<HipDeviceSet> devices; // ranks on GPUs, buffers
  std::vector<void *> flags, staging;    // [r], [q]
  std::vector<hipStream_t> streams;      // [q]
  std::vector<hipEvent_t> joins;         // [q]
  DmaSchedule schedule;
  std::vector<hipEvent_t> events; // [schedule event]
  hipStream_t main = nullptr;
  hipEvent_t fork = nullptr;
  std::vector<std::vector<int64_t>> perRun;
  size_t chunkBytes = 0, stagingChunk = 0;
  uint64_t epoch = 0;
  bool stuck = false; // a run did not finish within the timeout

  bool usable(std::string &error) const {
    if (stuck)
      error = "this executor is unusable: its streams stay blocked on the "
              "GPU";
    return !stuck;
  }

  bool check(hipError_t result, const char *call, std::string &error) const {
    if (result == hipSuccess)
      return true;
    error = api->describe(call, result);
    return false;
  }
  bool use(int rank, std::string &error) const {
    return devices->use(rank, error);
  }
  void *slice(const Slice &s) const {
    return static_cast<char *>(devices->buffer(s.rank, s.buffer)) +
           s.offset * chunkBytes;
  }
  bool createStreams(std::string &error);
  bool enqueueRun(size_t q, size_t begin, size_t end, uint64_t epoch,
                  std::string &error);
  /// Polls the main stream until it is idle or `timeoutNs` passes (false,
  /// error left empty).
  bool idle(uint64_t timeoutNs, std::string &error) const;
};

#define SDMA_HIP(call, ...)                                                    \
  if (!s.check(s.api->call(__VA_ARGS__), #call, error))                        \
  return false

bool HipDmaExecutor::State::createStreams(std::string &error) {
  State &s = *this;
  // Non-blocking streams: the null stream's synchronous copies and memsets
  // neither wait for them nor make them wait.
  if (!use(0, error))
    return false;
  SDMA_HIP(hipStreamCreateWithFlags, &main, hipStreamNonBlocking);
  SDMA_HIP(hipEventCreateWithFlags, &fork, hipEventDisableTiming);
  streams.assign(plan.streams.size(), nullptr);
  joins.assign(plan.streams.size(), nullptr);
  for (size_t q = 0; q < plan.streams.size(); ++q) {
    if (!use(plan.streams[q].rank, error))
      return false;
    SDMA_HIP(hipStreamCreateWithFlags, &streams[q], hipStreamNonBlocking);
    SDMA_HIP(hipEventCreateWithFlags, &joins[q], hipEventDisableTiming);
  }
  // Each event on the GPU of the queue that records it.
  events.assign(schedule.eventQueue.size(), nullptr);
  for (size_t e = 0; e < events.size(); ++e) {
    if (!use(plan.streams[schedule.eventQueue[e]].rank, error))
      return false;
    SDMA_HIP(hipEventCreateWithFlags, &events[e], hipEventDisableTiming);
  }
  return true;
}

bool HipDmaExecutor::State::idle(uint64_t timeoutNs, std::string &error) const {
  if (!main || !use(0, error))
    return !main;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeoutNs);
  for (;;) {
    hipError_t result = api->hipStreamQuery(main);
    if (result != hipErrorNotReady)
      return check(result, "hipStreamQuery", error);
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::yield();
  }
}

HipDmaExecutor::HipDmaExecutor(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

std::unique_ptr<HipDmaExecutor>
HipDmaExecutor::create(const Plan &plan, const HipOptions &options,
                       std::string &error) {
  int count = 0;
  const HipApi *api = HipApi::withDevices(count, error);
  if (!api)
    return nullptr;
  // The enqueue order, or the deadlock, before touching the GPU.
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, error);
  if (!schedule)
    return nullptr;
  auto state = std::make_unique<State>();
  State &s = *state;
  s.api = api;
  s.plan = plan;
  s.schedule = std::move(*schedule);
  s.options = options;
  s.devices = std::make_unique<HipDeviceSet>(*api);
  if (!s.devices->init(plan.ranks, options.devices, options.device, error))
    return nullptr;
  if (!s.createStreams(error))
    return nullptr;
  s.perRun = notifiesPerRun(plan);
  s.flags.assign(plan.ranks, nullptr);
  for (int r = 0; r < plan.ranks; ++r)
    if (!s.devices->alloc(r, s.flags[r], plan.flags * 8, error))
      return nullptr;
  s.staging.assign(plan.streams.size(), nullptr);
  return std::unique_ptr<HipDmaExecutor>(new HipDmaExecutor(std::move(state)));
}

HipDmaExecutor::~HipDmaExecutor() {
  State &s = *state_;
  std::string ignored;
  // A run still going after the timeout is as stuck as one wait() gave up
  // on: synchronising with it would block the caller for good.
  if (!s.stuck && !s.idle(s.options.timeoutNs, ignored))
    s.stuck = true;
  // Deliberately leaked: freeing or destroying what a blocked stream uses
  // could block too, and the process must still be able to exit.
  if (s.stuck) {
    s.devices->abandon();
    return;
  }
  for (size_t e = 0; e < s.events.size(); ++e)
    if (s.events[e] &&
        s.use(s.plan.streams[s.schedule.eventQueue[e]].rank, ignored))
      (void)s.api->hipEventDestroy(s.events[e]);
  for (size_t q = 0; q < s.streams.size(); ++q) {
    s.use(s.plan.streams[q].rank, ignored);
    if (s.streams[q])
      (void)s.api->hipStreamDestroy(s.streams[q]);
    if (s.joins[q])
      (void)s.api->hipEventDestroy(s.joins[q]);
  }
  // Buffers, flags and staging go with the device set.
  if (s.use(0, ignored)) {
    if (s.fork)
      (void)s.api->hipEventDestroy(s.fork);
    if (s.main)
      (void)s.api->hipStreamDestroy(s.main);
  }
}

bool HipDmaExecutor::prepare(size_t chunkBytes, std::string &error) {
  State &s = *state_;
  if (!wait(error))
    return false;
  std::vector<int64_t> chunks;
  for (const Buffer &buffer : s.plan.buffers)
    chunks.push_back(buffer.chunks);
  if (!s.devices->allocateBuffers(chunks, chunkBytes, error))
    return false;
  for (size_t q = 0; q < s.plan.streams.size(); ++q) {
    int64_t largest = 0;
    for (const Command &c : s.plan.streams[q].commands)
      if (c.kind == Command::Kind::Swap)
        largest = std::max(largest, c.slices[0].count);
    if (!largest || chunkBytes <= s.stagingChunk)
      continue;
    int rank = s.plan.streams[q].rank;
    if (!s.devices->release(s.staging[q], error) ||
        !s.devices->alloc(rank, s.staging[q], largest * chunkBytes, error))
      return false;
  }
  s.stagingChunk = std::max(s.stagingChunk, chunkBytes);
  s.chunkBytes = chunkBytes;
  return true;
}

// The streams do not block with the null stream that hipMemcpy uses: wait
// for the launched runs first.
bool HipDmaExecutor::upload(const HostMemory &memory, std::string &error) {
  return wait(error) && state_->devices->upload(memory, error);
}

bool HipDmaExecutor::download(HostMemory &memory, std::string &error) {
  return wait(error) && state_->devices->download(memory, error);
}

bool HipDmaExecutor::State::enqueueRun(size_t q, size_t begin, size_t end,
                                       uint64_t epoch, std::string &error) {
  struct Sink {
    State &s;
    size_t q;
    hipStream_t stream;
    int rank;
    std::string &error;
    bool memcpy(void *dst, const void *src, size_t bytes) {
      return s.check(s.api->hipMemcpyAsync(dst, src, bytes,
                                           hipMemcpyDeviceToDevice, stream),
                     "hipMemcpyAsync", error);
    }
    bool copy(const Slice &dst, const Slice &src) {
      return memcpy(s.slice(dst), s.slice(src), src.count * s.chunkBytes);
    }
    bool swap(const Slice &a, const Slice &b) {
      size_t bytes = a.count * s.chunkBytes;
      return memcpy(s.staging[q], s.slice(a), bytes) &&
             memcpy(s.slice(a), s.slice(b), bytes) &&
             memcpy(s.slice(b), s.staging[q], bytes);
    }
    bool notify(int target, int flag, uint64_t value) {
      return s.check(s.api->hipStreamWriteValue64(
                         stream,
                         static_cast<char *>(s.flags[target]) + flag * 8, value,
                         0),
                     "hipStreamWriteValue64", error);
    }
    bool poll(int flag, uint64_t value) {
      return s.check(s.api->hipStreamWaitValue64(
                         stream, static_cast<char *>(s.flags[rank]) + flag * 8,
                         value, hipStreamWaitValueGte, ~uint64_t(0)),
                     "hipStreamWaitValue64", error);
    }
  } sink{*this, q, streams[q], plan.streams[q].rank, error};
  return walkCommands(plan, schedule, q, begin, end, epoch, perRun, sink);
}

bool HipDmaExecutor::launch(std::string &error) {
  State &s = *state_;
  if (!s.usable(error))
    return false;
  if (!s.chunkBytes) {
    error = "launch before prepare()";
    return false;
  }
  uint64_t epoch = s.epoch++;
  if (!s.use(0, error))
    return false;
  SDMA_HIP(hipEventRecord, s.fork, s.main);
  for (size_t q = 0; q < s.plan.streams.size(); ++q) {
    if (!s.use(s.plan.streams[q].rank, error))
      return false;
    SDMA_HIP(hipStreamWaitEvent, s.streams[q], s.fork, 0);
  }
  // Interleaved so that every event is recorded before it is waited for.
  for (const DmaStep &step : s.schedule.steps) {
    size_t q = step.queue;
    if (!s.use(s.plan.streams[q].rank, error))
      return false;
    switch (step.kind) {
    case DmaStep::Kind::Run:
      if (!s.enqueueRun(q, step.begin, step.end, epoch, error))
        return false;
      break;
    case DmaStep::Kind::Record:
      SDMA_HIP(hipEventRecord, s.events[step.event], s.streams[q]);
      break;
    case DmaStep::Kind::Wait:
      SDMA_HIP(hipStreamWaitEvent, s.streams[q], s.events[step.event], 0);
      break;
    }
  }
  for (size_t q = 0; q < s.plan.streams.size(); ++q) {
    if (!s.use(s.plan.streams[q].rank, error))
      return false;
    SDMA_HIP(hipEventRecord, s.joins[q], s.streams[q]);
  }
  if (!s.use(0, error))
    return false;
  for (hipEvent_t join : s.joins)
    SDMA_HIP(hipStreamWaitEvent, s.main, join, 0);
  return true;
}

bool HipDmaExecutor::wait(std::string &error) {
  State &s = *state_;
  if (!s.usable(error))
    return false;
  std::string failure;
  if (s.idle(s.options.timeoutNs, failure))
    return true;
  if (!failure.empty()) {
    error = failure; // a failed run, not a timeout
    return false;
  }
  // As in the CUDA executor: a stream blocked in a value wait cannot be
  // released safely from the host, so name the unfinished queues without
  // touching anything that could block, and refuse further use.
  std::string ignored, report;
  uint64_t epoch = s.epoch ? s.epoch - 1 : 0;
  for (size_t q = 0; q < s.plan.streams.size(); ++q)
    if (s.use(s.plan.streams[q].rank, ignored) &&
        s.api->hipStreamQuery(s.streams[q]) == hipErrorNotReady)
      report += (report.empty() ? "" : "; ") +
                describeUnfinishedQueue(s.plan, s.schedule, q, epoch, s.perRun);
  error = (report.empty() ? std::string("the run did not finish") : report) +
          " (timeout " + std::to_string(s.options.timeoutNs / 1000000) +
          " ms); its streams stay blocked on the GPU, so it cannot be used "
          "again";
  s.stuck = true;
  return false;
}

bool HipDmaExecutor::time(int runs, std::vector<double> &microseconds,
                          std::string &error) {
  State &s = *state_;
  if (!s.use(0, error))
    return false;
  hipEvent_t start = nullptr, stop = nullptr;
  SDMA_HIP(hipEventCreateWithFlags, &start, hipEventDefault);
  SDMA_HIP(hipEventCreateWithFlags, &stop, hipEventDefault);
  bool ok = true;
  microseconds.clear();
  for (int i = 0; i < runs && ok; ++i) {
    float ms = 0;
    ok =
        s.use(0, error) &&
        s.check(s.api->hipEventRecord(start, s.main), "hipEventRecord",
                error) &&
        launch(error) && s.use(0, error) &&
        s.check(s.api->hipEventRecord(stop, s.main), "hipEventRecord", error) &&
        wait(error) &&
        s.check(s.api->hipEventElapsedTime(&ms, start, stop),
                "hipEventElapsedTime", error);
    if (ok)
      microseconds.push_back(ms * 1000.0);
  }
  (void)s.api->hipEventDestroy(start);
  (void)s.api->hipEventDestroy(stop);
  return ok;
}
