//===- CudaCeExecutor.cpp - a DMA plan on CUDA streams --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaCeExecutor.h"
#include "cuda/CeCopyKernel.h"
#include "exec/DmaQueueSchedule.h"
#include "exec/DmaQueueWalk.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

#define SDMA_CU(call, ...)                                                     \
  if (!check(driver_.call(__VA_ARGS__), #call, error))                         \
  return false

constexpr unsigned kWaitGeq = 0;           // CU_STREAM_WAIT_VALUE_GEQ
constexpr unsigned kStreamNonBlocking = 1; // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventNoTiming = 2;     // CU_EVENT_DISABLE_TIMING

CudaCeExecutor::CudaCeExecutor(const Driver &driver, const Plan &plan,
                               const CudaOptions &options, const CeOptions &ce)
    : driver_(driver), plan_(plan), options_(options), ce_(ce),
      devices_(driver) {}

bool CudaCeExecutor::check(CUresult result, const char *call,
                           std::string &error) {
  if (result == 0)
    return true;
  error = driver_.describe(call, result);
  return false;
}

std::unique_ptr<CudaCeExecutor>
CudaCeExecutor::create(const Plan &plan, const CudaOptions &options,
                       std::string &error, const CeOptions &ce) {
  const Driver *driver = Driver::get(error);
  if (!driver)
    return nullptr;
  if (!driver->cuStreamWriteValue64 || !driver->cuStreamWaitValue64) {
    error = "the CUDA driver has no 64-bit stream memory operations";
    return nullptr;
  }
  if (ce.batch && !driver->cuMemcpyBatchAsync) {
    error = "the CUDA driver has no cuMemcpyBatchAsync_v2 (CUDA 13 or newer "
            "is needed for batched copies)";
    return nullptr;
  }
  if (ce.graph &&
      (!driver->cuStreamBeginCapture || !driver->cuStreamEndCapture ||
       !driver->cuGraphInstantiateWithFlags || !driver->cuGraphLaunch ||
       !driver->cuGraphExecDestroy || !driver->cuGraphDestroy)) {
    error = "the CUDA driver lacks stream capture or graph entry points";
    return nullptr;
  }
  if (ce.kernelTrigger && ce.graph) {
    error = "kernel-triggered copies cannot be replayed from a graph: each "
            "run waits for its own trigger value";
    return nullptr;
  }
  if (ce.batch && ce.graph) {
    error = "batched copies cannot be replayed from a graph: the CUDA driver "
            "refuses cuMemcpyBatchAsync while a stream is being captured";
    return nullptr;
  }
  // The enqueue order, or the deadlock, before touching the GPU.
  DmaScheduleOptions scheduleOptions;
  scheduleOptions.valueWaits = ce.valueWaits;
  std::optional<DmaSchedule> schedule =
      scheduleDmaQueues(plan, error, scheduleOptions);
  if (!schedule)
    return nullptr;
  std::unique_ptr<CudaCeExecutor> e(
      new CudaCeExecutor(*driver, plan, options, ce));
  e->schedule_ = std::make_unique<DmaSchedule>(std::move(*schedule));
  if (!e->devices_.init(plan.ranks, options.devices, options.device, error) ||
      !e->createStreams(error))
    return nullptr;
  if (ce.localCopyKernel) {
    e->copyKernel_ = std::make_unique<CopyListKernel>(*driver);
    if (!e->copyKernel_->load(e->devices_, options.cacheDirectory, error))
      return nullptr;
  }
  // Flags (value waits only), and how far each one counts per run.
  e->notifiesPerRun_ = notifiesPerRun(plan);
  e->flags_.assign(plan.ranks, 0);
  for (int r = 0; r < plan.ranks; ++r)
    if (!e->devices_.alloc(r, e->flags_[r], plan.flags * 8, error))
      return nullptr;
  return e;
}

bool CudaCeExecutor::createStreams(std::string &error) {
  // Non-blocking streams: work on the legacy default stream (synchronous
  // copies and memsets, here or elsewhere in the process) neither waits for
  // them nor makes them wait.
  if (!devices_.use(0, error))
    return false;
  SDMA_CU(cuStreamCreate, &main_, kStreamNonBlocking);
  SDMA_CU(cuEventCreate, &fork_, kEventNoTiming);
  // Each queue on its rank's GPU, and each event on its recorder's.
  streams_.assign(plan_.streams.size(), nullptr);
  joins_.assign(plan_.streams.size(), nullptr);
  for (size_t q = 0; q < plan_.streams.size(); ++q) {
    if (!devices_.use(plan_.streams[q].rank, error))
      return false;
    SDMA_CU(cuStreamCreate, &streams_[q], kStreamNonBlocking);
    SDMA_CU(cuEventCreate, &joins_[q], kEventNoTiming);
  }
  events_.assign(schedule_->eventQueue.size(), nullptr);
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (!devices_.use(plan_.streams[schedule_->eventQueue[ev]].rank, error))
      return false;
    SDMA_CU(cuEventCreate, &events_[ev], kEventNoTiming);
  }
  resets_.assign(plan_.ranks, nullptr);
  for (int r = 0; r < plan_.ranks; ++r) {
    if (!devices_.use(r, error))
      return false;
    SDMA_CU(cuEventCreate, &resets_[r], kEventNoTiming);
  }
  return true;
}

void CudaCeExecutor::destroyGraph() {
  if (graphExec_)
    driver_.cuGraphExecDestroy(graphExec_);
  if (graph_)
    driver_.cuGraphDestroy(graph_);
  graphExec_ = nullptr;
  graph_ = nullptr;
}

bool CudaCeExecutor::usable(std::string &error) const {
  if (!stuck_)
    return true;
  error = std::string("this executor is unusable: ") + kStuckNote;
  return false;
}

std::string CudaCeExecutor::description() const {
  return std::string("the plan's queues as CUDA streams (") +
         (ce_.graph   ? "graph"
          : ce_.batch ? "batch"
                      : "plain") +
         (ce_.valueWaits ? ", value waits" : "") +
         (ce_.kernelTrigger ? ", kernel-triggered" : "") +
         (ce_.localCopyKernel ? ", device-local copies as one kernel per run"
                              : "") +
         "), " +
         (options_.devices.size() > 1
              ? "ranks spread over GPUs"
              : "all ranks on one GPU (there, device copies run on the SMs)") +
         "; CUDA-event times, median";
}

CudaCeExecutor::~CudaCeExecutor() {
  if (devices_.devices().empty())
    return;
  std::string ignored;
  // A run still going after the timeout is as stuck as one wait() gave up
  // on: synchronising with it would block the caller (and the process's
  // exit) for good.
  if (!stuck_ && !idle(options_.timeoutNs, ignored))
    stuck_ = true;
  if (stuck_) {
    // Deliberately leaked: destroying a stream, freeing memory or releasing
    // the context that a blocked stream uses can block too, so a stuck
    // executor touches nothing and the process can still exit.
    if (copyKernel_)
      copyKernel_->abandon();
    devices_.abandon();
    return;
  }
  destroyGraph();
  for (size_t q = 0; q < streams_.size(); ++q) {
    devices_.use(plan_.streams[q].rank, ignored);
    if (streams_[q])
      driver_.cuStreamDestroy_v2(streams_[q]);
    if (joins_[q])
      driver_.cuEventDestroy_v2(joins_[q]);
  }
  for (size_t ev = 0; ev < events_.size(); ++ev)
    if (events_[ev] &&
        devices_.use(plan_.streams[schedule_->eventQueue[ev]].rank, ignored))
      driver_.cuEventDestroy_v2(events_[ev]);
  for (size_t r = 0; r < resets_.size(); ++r)
    if (resets_[r] && devices_.use(r, ignored))
      driver_.cuEventDestroy_v2(resets_[r]);
  devices_.use(0, ignored);
  if (fork_)
    driver_.cuEventDestroy_v2(fork_);
  if (main_)
    driver_.cuStreamDestroy_v2(main_);
  // Device memory and contexts go with devices_.
}

bool CudaCeExecutor::idle(uint64_t timeoutNs, std::string &error) {
  if (!main_ || !devices_.use(0, error))
    return !main_;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeoutNs);
  for (;;) {
    CUresult result = driver_.cuStreamQuery(main_);
    if (result != CUDA_ERROR_NOT_READY)
      return check(result, "cuStreamQuery", error);
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::yield();
  }
}

bool CudaCeExecutor::prepare(size_t chunkBytes, std::string &error) {
  if (!wait(error) || !devices_.use(0, error))
    return false;
  std::vector<int64_t> chunks;
  for (const Buffer &buffer : plan_.buffers)
    chunks.push_back(buffer.chunks);
  if (!devices_.allocateBuffers(chunks, chunkBytes, error))
    return false;
  // A staging buffer per queue for its largest swap, on the queue's GPU.
  staging_.resize(plan_.streams.size(), 0);
  for (size_t q = 0; q < plan_.streams.size(); ++q) {
    int64_t largest = 0;
    for (const Command &c : plan_.streams[q].commands)
      if (c.kind == Command::Kind::Swap)
        largest = std::max(largest, c.slices[0].count);
    if (!largest || chunkBytes <= stagingChunkBytes_)
      continue;
    if (!devices_.release(staging_[q], error) ||
        !devices_.alloc(plan_.streams[q].rank, staging_[q],
                        largest * chunkBytes, error))
      return false;
  }
  stagingChunkBytes_ = std::max(stagingChunkBytes_, chunkBytes);
  bool changed = chunkBytes != chunkBytes_;
  chunkBytes_ = chunkBytes;
  if (ce_.graph && (changed || !graphExec_))
    return capture(error);
  return true;
}

bool CudaCeExecutor::capture(std::string &error) {
  destroyGraph();
  if (!devices_.use(0, error))
    return false;
  SDMA_CU(cuStreamBeginCapture, main_, CU_STREAM_CAPTURE_MODE_RELAXED);
  std::string enqueueError;
  bool enqueued = enqueue(0, /*resetFlags=*/true, enqueueError);
  CUgraph graph = nullptr;
  if (!devices_.use(0, error))
    return false;
  CUresult ended = driver_.cuStreamEndCapture(main_, &graph);
  if (!enqueued) {
    if (graph)
      driver_.cuGraphDestroy(graph);
    error = "capturing the plan into a CUDA graph: " + enqueueError;
    return false;
  }
  if (!check(ended, "cuStreamEndCapture", error))
    return false;
  graph_ = graph;
  SDMA_CU(cuGraphInstantiateWithFlags, &graphExec_, graph_, 0);
  return true;
}

// The operations of one queue run on its stream. Copies that may run
// unordered wait in `pending` (the batch rule of DmaQueueSchedule.h): peer
// copies for one cuMemcpyBatchAsync (batch mode), device-local ones for one
// copy-list launch (localCopyKernel); anything else is issued at once. A
// copy that conflicts with a pending one, a swap, a notify, a poll and the
// run's end issue what is pending first, so a copy only ever overtakes
// copies it does not touch.
struct CudaCeExecutor::RunSink {
  CudaCeExecutor &e;
  size_t q;
  CUstream s;
  int rank;
  size_t device; // index in devices_
  std::string &error;
  std::vector<PendingCopy> pending;
  std::vector<CUdeviceptr> dsts, srcs; // batched peer copies
  std::vector<size_t> sizes;
  std::vector<CopyListEntry> local; // device-local copies

  bool copyNow(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return e.check(e.driver_.cuMemcpyDtoDAsync_v2(dst, src, bytes, s),
                   "cuMemcpyDtoDAsync", error);
  }
  bool flush() {
    bool ok = true;
    if (dsts.size() == 1) {
      ok = copyNow(dsts[0], srcs[0], sizes[0]);
    } else if (!dsts.empty()) {
      MemcpyAttributes attributes;
      attributes.srcLocId = attributes.dstLocId =
          e.devices_.devices()[device].ordinal;
      attributes.flags = e.ce_.preferCopyEngines ? 1 : 0;
      size_t index = 0;
      ok = e.check(e.driver_.cuMemcpyBatchAsync(dsts.data(), srcs.data(),
                                                sizes.data(), dsts.size(),
                                                &attributes, &index, 1, s),
                   "cuMemcpyBatchAsync", error);
    }
    if (ok && !local.empty())
      ok = e.copyKernel_->launch(device, s, local, error);
    pending.clear();
    dsts.clear();
    srcs.clear();
    sizes.clear();
    local.clear();
    return ok;
  }
  bool copy(const Slice &dst, const Slice &src) {
    size_t bytes = src.count * e.chunkBytes_;
    auto onQueueGpu = [&](const Slice &slice) {
      return static_cast<size_t>(e.devices_.indexOf(slice.rank)) == device;
    };
    bool isLocal = e.copyKernel_ && onQueueGpu(dst) && onQueueGpu(src);
    if ((!mayJoinBatch(pending, dst, src) ||
         (isLocal && local.size() == kCopyListMax)) &&
        !flush())
      return false;
    if (isLocal) {
      local.push_back({e.slice(dst), e.slice(src), bytes});
    } else if (e.ce_.batch) {
      dsts.push_back(e.slice(dst));
      srcs.push_back(e.slice(src));
      sizes.push_back(bytes);
    } else {
      // Issued now, ahead of the pending copies: it touches none of them.
      return copyNow(e.slice(dst), e.slice(src), bytes);
    }
    pending.push_back({dst, src});
    return true;
  }
  bool swap(const Slice &a, const Slice &b) {
    // Three ordered copies through the staging buffer: never batched.
    size_t bytes = a.count * e.chunkBytes_;
    return flush() && copyNow(e.staging_[q], e.slice(a), bytes) &&
           copyNow(e.slice(a), e.slice(b), bytes) &&
           copyNow(e.slice(b), e.staging_[q], bytes);
  }
  bool notify(int target, int flag, uint64_t value) {
    return flush() && e.check(e.driver_.cuStreamWriteValue64(
                                  s, e.flags_[target] + flag * 8, value, 0),
                              "cuStreamWriteValue64", error);
  }
  bool poll(int flag, uint64_t value) {
    return flush() &&
           e.check(e.driver_.cuStreamWaitValue64(s, e.flags_[rank] + flag * 8,
                                                 value, kWaitGeq),
                   "cuStreamWaitValue64", error);
  }
};

bool CudaCeExecutor::enqueueRun(size_t q, size_t begin, size_t end,
                                uint64_t epoch, std::string &error) {
  int rank = plan_.streams[q].rank;
  RunSink sink{
      *this, q, streams_[q], rank, static_cast<size_t>(devices_.indexOf(rank)),
      error};
  return walkCommands(plan_, *schedule_, q, begin, end, epoch, notifiesPerRun_,
                      sink) &&
         sink.flush();
}

bool CudaCeExecutor::enqueue(uint64_t epoch, bool resetFlags,
                             std::string &error) {
  if (!devices_.use(0, error))
    return false;
  SDMA_CU(cuEventRecord, fork_, main_);
  size_t current = 0; // the GPU whose context is current
  auto use = [&](size_t q) {
    size_t d = devices_.indexOf(plan_.streams[q].rank);
    if (d == current)
      return true;
    current = d;
    return devices_.useDevice(d, error);
  };
  for (size_t q = 0; q < plan_.streams.size(); ++q) {
    if (!use(q))
      return false;
    SDMA_CU(cuStreamWaitEvent, streams_[q], fork_, 0);
    // Prelaunched behind the trigger a kernel writes: run n waits for n + 1.
    if (ce_.kernelTrigger)
      SDMA_CU(cuStreamWaitValue64, streams_[q],
              flags_[plan_.streams[q].rank] + kLaunchFlag * 8, epoch + 1,
              kWaitGeq);
  }
  // Interleaved so that every event is recorded before it is waited for.
  for (const DmaStep &step : schedule_->steps) {
    size_t q = step.queue;
    if (!use(q))
      return false;
    switch (step.kind) {
    case DmaStep::Kind::Run:
      if (!enqueueRun(q, step.begin, step.end, epoch, error))
        return false;
      break;
    case DmaStep::Kind::Record:
      SDMA_CU(cuEventRecord, events_[step.event], streams_[q]);
      break;
    case DmaStep::Kind::Wait:
      SDMA_CU(cuStreamWaitEvent, streams_[q], events_[step.event], 0);
      break;
    }
  }
  return join(resetFlags, error);
}

bool CudaCeExecutor::join(bool resetFlags, std::string &error) {
  for (size_t q = 0; q < plan_.streams.size(); ++q) {
    if (!devices_.use(plan_.streams[q].rank, error))
      return false;
    SDMA_CU(cuEventRecord, joins_[q], streams_[q]);
  }
  std::vector<CUevent> ends = joins_;
  if (resetFlags && schedule_->usesFlags) {
    // Once every queue is done, each rank's flags go back to zero on a
    // stream of that rank's GPU.
    std::vector<bool> reset(plan_.ranks, false);
    for (size_t q = 0; q < plan_.streams.size(); ++q) {
      int r = plan_.streams[q].rank;
      if (reset[r])
        continue;
      reset[r] = true;
      if (!devices_.use(r, error))
        return false;
      for (CUevent join : joins_)
        SDMA_CU(cuStreamWaitEvent, streams_[q], join, 0);
      // The launch flag only grows (kernel triggers count runs).
      SDMA_CU(cuMemsetD8Async, flags_[r] + 8, 0, (plan_.flags - 1) * 8,
              streams_[q]);
      SDMA_CU(cuEventRecord, resets_[r], streams_[q]);
      ends.push_back(resets_[r]);
    }
  }
  if (!devices_.use(0, error))
    return false;
  for (CUevent end : ends)
    SDMA_CU(cuStreamWaitEvent, main_, end, 0);
  return true;
}

// The streams do not block with the legacy default stream that
// CudaDeviceSet's synchronous copies use: wait for the launched runs first.
bool CudaCeExecutor::upload(const HostMemory &memory, std::string &error) {
  return wait(error) && devices_.upload(memory, error);
}

bool CudaCeExecutor::download(HostMemory &memory, std::string &error) {
  return wait(error) && devices_.download(memory, error);
}

bool CudaCeExecutor::launch(std::string &error) {
  if (!usable(error))
    return false;
  if (!chunkBytes_) {
    error = "launch before prepare()";
    return false;
  }
  if (ce_.graph) {
    if (!devices_.use(0, error))
      return false;
    SDMA_CU(cuGraphLaunch, graphExec_, main_);
    return true;
  }
  return enqueue(epoch_++, /*resetFlags=*/false, error);
}

bool CudaCeExecutor::wait(std::string &error) {
  if (!usable(error))
    return false;
  std::string failure;
  if (idle(options_.timeoutNs, failure))
    return true;
  if (!failure.empty()) {
    error = failure; // a failed run (a GPU fault), not a timeout
    return false;
  }
  // A stream blocked in cuStreamWaitValue64 (a value wait: its notifier is
  // outside this process, or CeOptions::valueWaits) cannot be released or
  // drained safely from the host (a release written through another stream
  // can queue behind the blocked one: tried, and it hung), so the executor
  // only names the unfinished queues, touching nothing that could block,
  // and refuses further use. Event waits always follow their record in
  // enqueue order, so they do not get here unless the GPU stalls.
  std::string ignored, report;
  uint64_t epoch = ce_.graph || epoch_ == 0 ? 0 : epoch_ - 1;
  for (size_t q = 0; q < plan_.streams.size(); ++q)
    if (devices_.use(plan_.streams[q].rank, ignored) &&
        driver_.cuStreamQuery(streams_[q]) == CUDA_ERROR_NOT_READY)
      report +=
          (report.empty() ? "" : "; ") +
          describeUnfinishedQueue(plan_, *schedule_, q, epoch, notifiesPerRun_);
  if (ce_.kernelTrigger)
    report += (report.empty() ? "" : "; ") +
              std::string("each queue first waits for its rank's launch flag "
                          "to reach ") +
              std::to_string(epoch_) + " (the kernel trigger)";
  error = (report.empty() ? std::string("the run did not finish") : report) +
          " (timeout " + std::to_string(options_.timeoutNs / 1000000) +
          " ms); " + kStuckNote;
  stuck_ = true;
  return false;
}

bool CudaCeExecutor::kernelTrigger(int rank, uint64_t &flag, uint64_t &value,
                                   std::string &error) const {
  if (!ce_.kernelTrigger || rank < 0 || rank >= plan_.ranks || !epoch_) {
    error = !ce_.kernelTrigger ? "this executor was made without kernel "
                                 "triggers (CeOptions::kernelTrigger)"
            : !epoch_          ? "no run launched yet"
                      : "rank " + std::to_string(rank) + " is not a rank";
    return false;
  }
  flag = flags_[rank] + kLaunchFlag * 8;
  value = epoch_;
  return true;
}

bool CudaCeExecutor::deviceBuffer(int rank, int buffer, uint64_t &address,
                                  std::string &error) const {
  if (!chunkBytes_ || rank < 0 || rank >= plan_.ranks || buffer < 0 ||
      buffer >= static_cast<int>(plan_.buffers.size())) {
    error = !chunkBytes_ ? "deviceBuffer before prepare()"
                         : "no buffer " + std::to_string(buffer) + " of rank " +
                               std::to_string(rank);
    return false;
  }
  address = devices_.buffer(rank, buffer);
  return true;
}

bool CudaCeExecutor::time(int runs, std::vector<double> &microseconds,
                          std::string &error) {
  if (ce_.kernelTrigger) {
    error = "time() cannot run kernel-triggered copies: nothing would "
            "trigger them (launch, run the triggering kernel, then wait)";
    return false;
  }
  if (!devices_.use(0, error))
    return false;
  CUevent start = nullptr, stop = nullptr;
  SDMA_CU(cuEventCreate, &start, 0);
  SDMA_CU(cuEventCreate, &stop, 0);
  bool ok = true;
  microseconds.clear();
  for (int i = 0; i < runs && ok; ++i) {
    float ms = 0;
    ok = devices_.use(0, error) &&
         check(driver_.cuEventRecord(start, main_), "cuEventRecord", error) &&
         launch(error) && devices_.use(0, error) &&
         check(driver_.cuEventRecord(stop, main_), "cuEventRecord", error) &&
         wait(error) &&
         check(driver_.cuEventElapsedTime(&ms, start, stop),
               "cuEventElapsedTime", error);
    if (ok)
      microseconds.push_back(ms * 1000.0);
  }
  devices_.use(0, error);
  driver_.cuEventDestroy_v2(start);
  driver_.cuEventDestroy_v2(stop);
  return ok;
}
