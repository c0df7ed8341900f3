//===- CudaCeExecutor.cpp - a DMA plan on CUDA streams --------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CudaCeExecutor.h"

#include <algorithm>

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
                       std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver)
    return nullptr;
  if (!driver->cuStreamWriteValue64 || !driver->cuStreamWaitValue64) {
    error = "the CUDA driver has no 64-bit stream memory operations";
    return nullptr;
  }
  std::unique_ptr<CudaCeExecutor> e(new CudaCeExecutor(*driver, plan, options));
  auto ok = [&](CUresult r, const char *call) {
    if (r == 0)
      return true;
    error = driver->describe(call, r);
    return false;
  };
  if (!ok(driver->cuDeviceGet(&e->device_, options.device), "cuDeviceGet") ||
      !ok(driver->cuDevicePrimaryCtxRetain(&e->context_, e->device_),
          "cuDevicePrimaryCtxRetain") ||
      !ok(driver->cuCtxSetCurrent(e->context_), "cuCtxSetCurrent") ||
      !ok(driver->cuStreamCreate(&e->main_, 0), "cuStreamCreate") ||
      !ok(driver->cuEventCreate(&e->fork_, 2 /*disable timing*/),
          "cuEventCreate"))
    return nullptr;
  e->streams_.assign(plan.streams.size(), nullptr);
  e->joins_.assign(plan.streams.size(), nullptr);
  for (size_t q = 0; q < plan.streams.size(); ++q)
    if (!ok(driver->cuStreamCreate(&e->streams_[q], 0), "cuStreamCreate") ||
        !ok(driver->cuEventCreate(&e->joins_[q], 2), "cuEventCreate"))
      return nullptr;
  // Flags, and how far each one counts per run.
  e->notifiesPerRun_.assign(plan.ranks, std::vector<int64_t>(plan.flags, 0));
  for (const Stream &stream : plan.streams)
    for (const Command &command : stream.commands)
      if (command.kind == Command::Kind::Notify)
        ++e->notifiesPerRun_[command.target][command.flag];
  e->flags_.assign(plan.ranks, 0);
  for (int r = 0; r < plan.ranks; ++r)
    if (!ok(driver->cuMemAlloc_v2(&e->flags_[r], plan.flags * 8),
            "cuMemAlloc") ||
        !ok(driver->cuMemsetD8_v2(e->flags_[r], 0, plan.flags * 8),
            "cuMemsetD8"))
      return nullptr;
  return e;
}

CudaCeExecutor::~CudaCeExecutor() {
  if (!context_)
    return;
  driver_.cuCtxSetCurrent(context_);
  if (main_)
    driver_.cuStreamSynchronize(main_);
  for (auto *list : {&buffers_, &flags_, &staging_})
    for (CUdeviceptr p : *list)
      if (p)
        driver_.cuMemFree_v2(p);
  for (CUstream s : streams_)
    if (s)
      driver_.cuStreamDestroy_v2(s);
  for (CUevent e : joins_)
    if (e)
      driver_.cuEventDestroy_v2(e);
  if (fork_)
    driver_.cuEventDestroy_v2(fork_);
  if (main_)
    driver_.cuStreamDestroy_v2(main_);
  driver_.cuDevicePrimaryCtxRelease_v2(device_);
}

bool CudaCeExecutor::prepare(size_t chunkBytes, std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  if (chunkBytes > capacity_) {
    SDMA_CU(cuStreamSynchronize, main_);
    for (auto *list : {&buffers_, &staging_})
      for (CUdeviceptr p : *list)
        if (p)
          SDMA_CU(cuMemFree_v2, p);
    size_t numBuffers = plan_.buffers.size();
    buffers_.assign(plan_.ranks * numBuffers, 0);
    for (int r = 0; r < plan_.ranks; ++r)
      for (size_t b = 0; b < numBuffers; ++b) {
        size_t bytes = plan_.buffers[b].chunks * chunkBytes;
        SDMA_CU(cuMemAlloc_v2, &buffers_[r * numBuffers + b], bytes);
        SDMA_CU(cuMemsetD8_v2, buffers_[r * numBuffers + b], 0, bytes);
      }
    // A staging buffer per queue for its largest swap.
    staging_.assign(plan_.streams.size(), 0);
    for (size_t q = 0; q < plan_.streams.size(); ++q) {
      int64_t largest = 0;
      for (const Command &c : plan_.streams[q].commands)
        if (c.kind == Command::Kind::Swap)
          largest = std::max(largest, c.slices[0].count);
      if (largest)
        SDMA_CU(cuMemAlloc_v2, &staging_[q], largest * chunkBytes);
    }
    capacity_ = chunkBytes;
  }
  chunkBytes_ = chunkBytes;
  return true;
}

bool CudaCeExecutor::upload(const HostMemory &memory, std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  size_t numBuffers = plan_.buffers.size();
  for (int r = 0; r < plan_.ranks; ++r)
    for (size_t b = 0; b < numBuffers; ++b)
      SDMA_CU(cuMemcpyHtoD_v2, buffers_[r * numBuffers + b],
              memory.buffer(r, b), memory.bufferBytes(r, b));
  return true;
}

bool CudaCeExecutor::download(HostMemory &memory, std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  size_t numBuffers = plan_.buffers.size();
  for (int r = 0; r < plan_.ranks; ++r)
    for (size_t b = 0; b < numBuffers; ++b)
      SDMA_CU(cuMemcpyDtoH_v2, memory.buffer(r, b),
              buffers_[r * numBuffers + b], memory.bufferBytes(r, b));
  return true;
}

bool CudaCeExecutor::launch(std::string &error) {
  if (!chunkBytes_) {
    error = "launch before prepare()";
    return false;
  }
  uint64_t epoch = epoch_++;
  SDMA_CU(cuEventRecord, fork_, main_);
  for (size_t q = 0; q < plan_.streams.size(); ++q) {
    CUstream s = streams_[q];
    const Stream &stream = plan_.streams[q];
    SDMA_CU(cuStreamWaitEvent, s, fork_, 0);
    std::vector<int64_t> sent(plan_.ranks * plan_.flags, 0);
    for (const Command &c : stream.commands) {
      size_t bytes = c.slices[0].count * chunkBytes_;
      switch (c.kind) {
      case Command::Kind::Copy:
        SDMA_CU(cuMemcpyDtoDAsync_v2, slice(c.slices[1]), slice(c.slices[0]),
                bytes, s);
        break;
      case Command::Kind::Bcast:
        SDMA_CU(cuMemcpyDtoDAsync_v2, slice(c.slices[1]), slice(c.slices[0]),
                bytes, s);
        SDMA_CU(cuMemcpyDtoDAsync_v2, slice(c.slices[2]), slice(c.slices[0]),
                bytes, s);
        break;
      case Command::Kind::Swap:
        SDMA_CU(cuMemcpyDtoDAsync_v2, staging_[q], slice(c.slices[0]), bytes,
                s);
        SDMA_CU(cuMemcpyDtoDAsync_v2, slice(c.slices[0]), slice(c.slices[1]),
                bytes, s);
        SDMA_CU(cuMemcpyDtoDAsync_v2, slice(c.slices[1]), staging_[q], bytes,
                s);
        break;
      case Command::Kind::Notify: {
        if (c.flag == kDoneFlag)
          break; // the host waits for the streams
        int64_t k = ++sent[c.target * plan_.flags + c.flag];
        uint64_t value = epoch * notifiesPerRun_[c.target][c.flag] +
                         static_cast<uint64_t>(k);
        SDMA_CU(cuStreamWriteValue64, s, flags_[c.target] + c.flag * 8, value,
                0);
        break;
      }
      case Command::Kind::Poll: {
        if (c.flag == kLaunchFlag)
          break; // enqueueing is the launch
        uint64_t value = epoch * notifiesPerRun_[stream.rank][c.flag] +
                         static_cast<uint64_t>(c.value);
        SDMA_CU(cuStreamWaitValue64, s, flags_[stream.rank] + c.flag * 8, value,
                kWaitGeq);
        break;
      }
      }
    }
    SDMA_CU(cuEventRecord, joins_[q], s);
    SDMA_CU(cuStreamWaitEvent, main_, joins_[q], 0);
  }
  return true;
}

bool CudaCeExecutor::wait(std::string &error) {
  SDMA_CU(cuStreamSynchronize, main_);
  return true;
}

bool CudaCeExecutor::time(int runs, std::vector<double> &microseconds,
                          std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  CUevent start = nullptr, stop = nullptr;
  SDMA_CU(cuEventCreate, &start, 0);
  SDMA_CU(cuEventCreate, &stop, 0);
  bool ok = true;
  microseconds.clear();
  for (int i = 0; i < runs && ok; ++i) {
    float ms = 0;
    ok = check(driver_.cuEventRecord(start, main_), "cuEventRecord", error) &&
         launch(error) &&
         check(driver_.cuEventRecord(stop, main_), "cuEventRecord", error) &&
         wait(error) &&
         check(driver_.cuEventElapsedTime(&ms, start, stop),
               "cuEventElapsedTime", error);
    if (ok)
      microseconds.push_back(ms * 1000.0);
  }
  driver_.cuEventDestroy_v2(start);
  driver_.cuEventDestroy_v2(stop);
  return ok;
}
