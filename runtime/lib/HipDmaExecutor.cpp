//===- HipDmaExecutor.cpp - a DMA plan on HIP streams (AMD) ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "HipDmaExecutor.h"
#include "DmaQueueSchedule.h"
#include "DmaQueueWalk.h"
#include "HipApi.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::hip;

struct HipDmaExecutor::State {
  const HipApi *api = nullptr;
  Plan plan;
  HipOptions options;
  std::vector<int> ordinals; // per device group
  int ranksPerDevice = 1;
  std::vector<void *> buffers, flags, staging; // [r * B + b], [r], [q]
  std::vector<hipStream_t> streams;            // [q]
  std::vector<hipEvent_t> joins;               // [q]
  DmaSchedule schedule;
  std::vector<hipEvent_t> events; // [schedule event]
  hipStream_t main = nullptr;
  hipEvent_t fork = nullptr;
  std::vector<std::vector<int64_t>> perRun;
  size_t chunkBytes = 0, capacity = 0, stagingChunk = 0;
  uint64_t epoch = 0;
  bool stuck = false; // a run did not finish within the timeout

  bool usable(std::string &error) const {
    if (stuck)
      error = "this executor is unusable: its streams stay blocked on the "
              "GPU";
    return !stuck;
  }

  int deviceOf(int rank) const { return ordinals[rank / ranksPerDevice]; }
  bool check(hipError_t result, const char *call, std::string &error) const {
    if (result == hipSuccess)
      return true;
    error = api->describe(call, result);
    return false;
  }
  bool use(int rank, std::string &error) const {
    return check(api->hipSetDevice(deviceOf(rank)), "hipSetDevice", error);
  }
  void *slice(const Slice &s) const {
    return static_cast<char *>(
               buffers[s.rank * plan.buffers.size() + s.buffer]) +
           s.offset * chunkBytes;
  }
  bool alloc(int rank, void *&ptr, size_t bytes, std::string &error) {
    return use(rank, error) &&
           check(api->hipMalloc(&ptr, std::max<size_t>(bytes, 1)), "hipMalloc",
                 error) &&
           check(api->hipMemset(ptr, 0, bytes), "hipMemset", error);
  }
  bool createStreams(std::string &error);
  bool enqueueRun(size_t q, size_t begin, size_t end, uint64_t epoch,
                  std::string &error);
  /// Polls the main stream until it is idle or `timeoutNs` passes (false,
  /// error left empty).
  bool idle(uint64_t timeoutNs, std::string &error) const;
  void release(int rank, void *&ptr) {
    std::string ignored;
    if (ptr && use(rank, ignored))
      (void)api->hipFree(ptr);
    ptr = nullptr;
  }
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
  s.ordinals = options.devices;
  if (s.ordinals.empty())
    s.ordinals.push_back(options.device);
  for (int ordinal : s.ordinals)
    if (ordinal < 0 || ordinal >= count) {
      error = "GPU " + std::to_string(ordinal) + " does not exist (" +
              std::to_string(count) + " visible)";
      return nullptr;
    }
  int numDevices = std::min<int>(s.ordinals.size(), plan.ranks);
  s.ordinals.resize(numDevices);
  s.ranksPerDevice = (plan.ranks + numDevices - 1) / numDevices;
  auto fail = [&](hipError_t r, const char *call) {
    error = api->describe(call, r);
    return nullptr;
  };
  for (int a : s.ordinals)
    for (int b : s.ordinals) {
      if (a == b)
        continue;
      int can = 0;
      if (hipError_t r = api->hipDeviceCanAccessPeer(&can, a, b))
        return fail(r, "hipDeviceCanAccessPeer");
      if (!can) {
        error = "GPU " + std::to_string(a) + " cannot access GPU " +
                std::to_string(b) + " (no peer access)";
        return nullptr;
      }
      if (hipError_t r = api->hipSetDevice(a))
        return fail(r, "hipSetDevice");
      hipError_t r = api->hipDeviceEnablePeerAccess(b, 0);
      if (r != hipSuccess && r != hipErrorPeerAccessAlreadyEnabled)
        return fail(r, "hipDeviceEnablePeerAccess");
    }
  if (!s.createStreams(error))
    return nullptr;
  s.perRun = notifiesPerRun(plan);
  s.flags.assign(plan.ranks, nullptr);
  for (int r = 0; r < plan.ranks; ++r)
    if (!s.alloc(r, s.flags[r], plan.flags * 8, error))
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
  if (s.stuck)
    return;
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
    s.release(s.plan.streams[q].rank, s.staging[q]);
  }
  size_t B = s.plan.buffers.size();
  for (size_t i = 0; i < s.buffers.size(); ++i)
    s.release(i / B, s.buffers[i]);
  for (int r = 0; r < static_cast<int>(s.flags.size()); ++r)
    s.release(r, s.flags[r]);
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
  size_t B = s.plan.buffers.size();
  if (chunkBytes > s.capacity) {
    for (int d = 0; d < static_cast<int>(s.ordinals.size()); ++d) {
      if (!s.use(d * s.ranksPerDevice, error))
        return false;
      SDMA_HIP(hipDeviceSynchronize);
    }
    for (size_t i = 0; i < s.buffers.size(); ++i)
      s.release(i / B, s.buffers[i]);
    s.buffers.assign(s.plan.ranks * B, nullptr);
    for (int r = 0; r < s.plan.ranks; ++r)
      for (size_t b = 0; b < B; ++b)
        if (!s.alloc(r, s.buffers[r * B + b],
                     s.plan.buffers[b].chunks * chunkBytes, error))
          return false;
    s.capacity = chunkBytes;
  }
  for (size_t q = 0; q < s.plan.streams.size(); ++q) {
    int64_t largest = 0;
    for (const Command &c : s.plan.streams[q].commands)
      if (c.kind == Command::Kind::Swap)
        largest = std::max(largest, c.slices[0].count);
    if (!largest || chunkBytes <= s.stagingChunk)
      continue;
    int rank = s.plan.streams[q].rank;
    s.release(rank, s.staging[q]);
    if (!s.alloc(rank, s.staging[q], largest * chunkBytes, error))
      return false;
  }
  s.stagingChunk = std::max(s.stagingChunk, chunkBytes);
  s.chunkBytes = chunkBytes;
  return true;
}

// The streams do not block with the null stream that hipMemcpy uses: wait
// for the launched runs first.
bool HipDmaExecutor::upload(const HostMemory &memory, std::string &error) {
  State &s = *state_;
  if (!wait(error))
    return false;
  size_t B = s.plan.buffers.size();
  for (int r = 0; r < s.plan.ranks; ++r) {
    if (!s.use(r, error))
      return false;
    for (size_t b = 0; b < B; ++b)
      SDMA_HIP(hipMemcpy, s.buffers[r * B + b], memory.buffer(r, b),
               memory.bufferBytes(r, b), hipMemcpyHostToDevice);
  }
  for (int d = 0; d < static_cast<int>(s.ordinals.size()); ++d) {
    if (!s.use(d * s.ranksPerDevice, error))
      return false;
    SDMA_HIP(hipDeviceSynchronize);
  }
  return true;
}

bool HipDmaExecutor::download(HostMemory &memory, std::string &error) {
  State &s = *state_;
  if (!wait(error))
    return false;
  size_t B = s.plan.buffers.size();
  for (int r = 0; r < s.plan.ranks; ++r) {
    if (!s.use(r, error))
      return false;
    for (size_t b = 0; b < B; ++b)
      SDMA_HIP(hipMemcpy, memory.buffer(r, b), s.buffers[r * B + b],
               memory.bufferBytes(r, b), hipMemcpyDeviceToHost);
  }
  return true;
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
