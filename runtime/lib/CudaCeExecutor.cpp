//===- CudaCeExecutor.cpp - a DMA plan on CUDA streams --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CudaCeExecutor.h"
#include "DmaQueueWalk.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

#define SDMA_CU(call, ...)                                                     \
  if (!check(driver_.call(__VA_ARGS__), #call, error))                         \
  return false

constexpr unsigned kWaitGeq = 0; // CU_STREAM_WAIT_VALUE_GEQ

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
  if (ce.batch && ce.graph) {
    error = "batched copies cannot be replayed from a graph: the CUDA driver "
            "refuses cuMemcpyBatchAsync while a stream is being captured";
    return nullptr;
  }
  std::unique_ptr<CudaCeExecutor> e(
      new CudaCeExecutor(*driver, plan, options, ce));
  if (!e->devices_.init(plan.ranks, options.devices, options.device, error))
    return nullptr;
  auto ok = [&](CUresult r, const char *call) {
    if (r == 0)
      return true;
    error = driver->describe(call, r);
    return false;
  };
  if (!e->devices_.use(0, error) ||
      !ok(driver->cuStreamCreate(&e->main_, 0), "cuStreamCreate") ||
      !ok(driver->cuEventCreate(&e->fork_, 2 /*disable timing*/),
          "cuEventCreate"))
    return nullptr;
  // Each queue on its rank's GPU.
  e->streams_.assign(plan.streams.size(), nullptr);
  e->joins_.assign(plan.streams.size(), nullptr);
  for (size_t q = 0; q < plan.streams.size(); ++q)
    if (!e->devices_.use(plan.streams[q].rank, error) ||
        !ok(driver->cuStreamCreate(&e->streams_[q], 0), "cuStreamCreate") ||
        !ok(driver->cuEventCreate(&e->joins_[q], 2), "cuEventCreate"))
      return nullptr;
  e->resets_.assign(plan.ranks, nullptr);
  for (int r = 0; r < plan.ranks; ++r)
    if (!e->devices_.use(r, error) ||
        !ok(driver->cuEventCreate(&e->resets_[r], 2), "cuEventCreate"))
      return nullptr;
  // Flags, and how far each one counts per run.
  e->notifiesPerRun_ = notifiesPerRun(plan);
  e->flags_.assign(plan.ranks, 0);
  for (int r = 0; r < plan.ranks; ++r)
    if (!e->devices_.alloc(r, e->flags_[r], plan.flags * 8, error))
      return nullptr;
  return e;
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

CudaCeExecutor::~CudaCeExecutor() {
  if (devices_.devices().empty())
    return;
  if (stuck_) {
    // Freeing or destroying anything a blocked stream uses can block too.
    devices_.abandon();
    return;
  }
  std::string ignored;
  if (main_ && devices_.use(0, ignored))
    driver_.cuStreamSynchronize(main_);
  destroyGraph();
  for (size_t q = 0; q < streams_.size(); ++q) {
    devices_.use(plan_.streams[q].rank, ignored);
    if (streams_[q])
      driver_.cuStreamDestroy_v2(streams_[q]);
    if (joins_[q])
      driver_.cuEventDestroy_v2(joins_[q]);
  }
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

bool CudaCeExecutor::prepare(size_t chunkBytes, std::string &error) {
  if (!usable(error) || !devices_.use(0, error))
    return false;
  SDMA_CU(cuStreamSynchronize, main_);
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

bool CudaCeExecutor::enqueueQueue(size_t q, uint64_t epoch,
                                  std::string &error) {
  CUstream s = streams_[q];
  const Stream &stream = plan_.streams[q];
  int ordinal = devices_.of(stream.rank).ordinal;
  // A pending batch of copies (batch mode), issued before the next sync.
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<size_t> sizes;
  auto copyAsync = [&](CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return check(driver_.cuMemcpyDtoDAsync_v2(dst, src, bytes, s),
                 "cuMemcpyDtoDAsync", error);
  };
  auto flush = [&] {
    if (dsts.empty())
      return true;
    bool ok;
    if (dsts.size() == 1) {
      ok = copyAsync(dsts[0], srcs[0], sizes[0]);
    } else {
      MemcpyAttributes attributes;
      attributes.srcLocId = attributes.dstLocId = ordinal;
      attributes.flags = ce_.preferCopyEngines ? 1 : 0;
      size_t index = 0;
      ok = check(driver_.cuMemcpyBatchAsync(dsts.data(), srcs.data(),
                                            sizes.data(), dsts.size(),
                                            &attributes, &index, 1, s),
                 "cuMemcpyBatchAsync", error);
    }
    dsts.clear();
    srcs.clear();
    sizes.clear();
    return ok;
  };
  struct Sink {
    CudaCeExecutor &e;
    size_t q;
    CUstream s;
    std::vector<CUdeviceptr> &dsts, &srcs;
    std::vector<size_t> &sizes;
    decltype(copyAsync) &copyNow;
    decltype(flush) &flushBatch;
    std::string &error;
    int rank;

    bool copy(const Slice &dst, const Slice &src) {
      size_t bytes = src.count * e.chunkBytes_;
      if (!e.ce_.batch)
        return copyNow(e.slice(dst), e.slice(src), bytes);
      dsts.push_back(e.slice(dst));
      srcs.push_back(e.slice(src));
      sizes.push_back(bytes);
      return true;
    }
    bool swap(const Slice &a, const Slice &b) {
      // Three ordered copies through the staging buffer: never batched.
      size_t bytes = a.count * e.chunkBytes_;
      return flushBatch() && copyNow(e.staging_[q], e.slice(a), bytes) &&
             copyNow(e.slice(a), e.slice(b), bytes) &&
             copyNow(e.slice(b), e.staging_[q], bytes);
    }
    bool notify(int target, int flag, uint64_t value) {
      return flushBatch() &&
             e.check(e.driver_.cuStreamWriteValue64(
                         s, e.flags_[target] + flag * 8, value, 0),
                     "cuStreamWriteValue64", error);
    }
    bool poll(int flag, uint64_t value) {
      return flushBatch() &&
             e.check(e.driver_.cuStreamWaitValue64(s, e.flags_[rank] + flag * 8,
                                                   value, kWaitGeq),
                     "cuStreamWaitValue64", error);
    }
  } sink{*this, q, s, dsts, srcs, sizes, copyAsync, flush, error, stream.rank};
  return walkQueue(plan_, q, epoch, notifiesPerRun_, sink) && flush();
}

bool CudaCeExecutor::enqueue(uint64_t epoch, bool resetFlags,
                             std::string &error) {
  if (!devices_.use(0, error))
    return false;
  SDMA_CU(cuEventRecord, fork_, main_);
  for (size_t q = 0; q < plan_.streams.size(); ++q) {
    if (!devices_.use(plan_.streams[q].rank, error))
      return false;
    SDMA_CU(cuStreamWaitEvent, streams_[q], fork_, 0);
    if (!enqueueQueue(q, epoch, error))
      return false;
    SDMA_CU(cuEventRecord, joins_[q], streams_[q]);
  }
  std::vector<CUevent> ends = joins_;
  if (resetFlags) {
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
      SDMA_CU(cuMemsetD8Async, flags_[r], 0, plan_.flags * 8, streams_[q]);
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

bool CudaCeExecutor::upload(const HostMemory &memory, std::string &error) {
  return usable(error) && devices_.upload(memory, error);
}

bool CudaCeExecutor::download(HostMemory &memory, std::string &error) {
  return usable(error) && devices_.download(memory, error);
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
  if (!usable(error) || !devices_.use(0, error))
    return false;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::nanoseconds(options_.timeoutNs);
  for (;;) {
    CUresult result = driver_.cuStreamQuery(main_);
    if (result != CUDA_ERROR_NOT_READY)
      return check(result, "cuStreamQuery", error);
    if (std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::yield();
  }
  // A stream blocked in cuStreamWaitValue64 cannot be released or drained
  // safely from the host (a release written through another stream can
  // queue behind the blocked one: tried, and it hung), so the executor only
  // names the unfinished queues, touching nothing that could block, and
  // refuses further use.
  std::string ignored, report;
  uint64_t epoch = ce_.graph || epoch_ == 0 ? 0 : epoch_ - 1;
  for (size_t q = 0; q < plan_.streams.size(); ++q)
    if (devices_.use(plan_.streams[q].rank, ignored) &&
        driver_.cuStreamQuery(streams_[q]) == CUDA_ERROR_NOT_READY)
      report += (report.empty() ? "" : "; ") +
                describeUnfinishedQueue(plan_, q, epoch, notifiesPerRun_);
  error = (report.empty() ? std::string("the run did not finish") : report) +
          " (timeout " + std::to_string(options_.timeoutNs / 1000000) +
          " ms); " + kStuckNote;
  stuck_ = true;
  return false;
}

bool CudaCeExecutor::time(int runs, std::vector<double> &microseconds,
                          std::string &error) {
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
