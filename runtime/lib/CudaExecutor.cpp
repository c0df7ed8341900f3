//===- CudaExecutor.cpp - load/store kernels on NVIDIA GPUs ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CudaExecutor.h"
#include "sdma/runtime/KernelCache.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {
double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

#define SDMA_CU(call, ...)                                                     \
  if (!check(driver_.call(__VA_ARGS__), #call, error))                         \
  return false

bool CudaLdstExecutor::check(CUresult result, const char *call,
                             std::string &error) {
  if (result == 0)
    return true;
  error = driver_.describe(call, result);
  return false;
}

std::unique_ptr<CudaLdstExecutor>
CudaLdstExecutor::create(const LdstProgram &program, const CudaOptions &options,
                         std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver)
    return nullptr;
  std::unique_ptr<CudaLdstExecutor> executor(
      new CudaLdstExecutor(*driver, program, options));
  CudaLdstExecutor &e = *executor;
  auto fail = [&](const std::string &message) {
    error = message;
    return nullptr;
  };
#define SDMA_CU_CREATE(call, ...)                                              \
  if (CUresult r = driver->call(__VA_ARGS__); r != 0)                          \
  return fail(driver->describe(#call, r))
  SDMA_CU_CREATE(cuDeviceGet, &e.device_, options.device);
  SDMA_CU_CREATE(cuDevicePrimaryCtxRetain, &e.context_, e.device_);
  SDMA_CU_CREATE(cuCtxSetCurrent, e.context_);
  int major = 0, minor = 0;
  SDMA_CU_CREATE(cuDeviceGetAttribute, &major,
                 CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, e.device_);
  SDMA_CU_CREATE(cuDeviceGetAttribute, &minor,
                 CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, e.device_);
  SDMA_CU_CREATE(cuDeviceGetAttribute, &e.smCount_,
                 CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, e.device_);
  e.compile_.arch = "sm_" + std::to_string(major * 10 + minor);

  // The kernel: from the cache, else NVRTC (then cached).
  auto start = std::chrono::steady_clock::now();
  std::string source = std::string(kCudaPrelude) + program.source;
  const Nvrtc *nvrtc = nullptr;
  std::string nvrtcError;
  nvrtc = Nvrtc::get(nvrtcError);
  std::string versions = "driver " + std::to_string(driver->version);
  if (nvrtc)
    versions += " nvrtc " + std::to_string(nvrtc->major) + "." +
                std::to_string(nvrtc->minor);
  KernelCache cache(options.cacheDirectory);
  uint64_t key =
      KernelCache::key(source, "-std=c++17 --extra-device-vectorization",
                       e.compile_.arch, versions);
  std::string cubin;
  KernelCache::Lookup lookup = cache.get(key, cubin);
  e.compile_.cacheHit = lookup == KernelCache::Lookup::Hit;
  e.compile_.cacheWasCorrupt = lookup == KernelCache::Lookup::Corrupt;
  if (!e.compile_.cacheHit) {
    if (!nvrtc)
      return fail(nvrtcError);
    if (!compileToCubin(*nvrtc, source, program.schedule + ".cu",
                        e.compile_.arch, cubin, error))
      return nullptr;
    e.compile_.compileMs = millisecondsSince(start);
    cache.put(key, cubin);
    start = std::chrono::steady_clock::now();
  }
  SDMA_CU_CREATE(cuModuleLoadData, &e.module_, cubin.data());
  SDMA_CU_CREATE(cuModuleGetFunction, &e.function_, e.module_,
                 program.entry.c_str());
  e.compile_.loadMs = millisecondsSince(start);
  SDMA_CU_CREATE(cuOccupancyMaxActiveBlocksPerMultiprocessor, &e.blocksPerSM_,
                 e.function_, kLdstThreads, 0);
  // A blocking stream: it waits for work on the legacy default stream,
  // where the synchronous-looking host copies of upload() run (a copy from
  // pageable memory can return before its DMA has landed).
  SDMA_CU_CREATE(cuStreamCreate, &e.stream_, 0);

  // Flags, barrier counters and the error record live as long as the
  // executor; buffers come with prepare().
  int ranks = program.ranks;
  e.flags_.assign(ranks, 0);
  e.syncs_.assign(ranks, 0);
  for (int r = 0; r < ranks; ++r) {
    if (!e.alloc(e.flags_[r], program.flagSlots * 8, error) ||
        !e.alloc(e.syncs_[r], 8, error))
      return nullptr;
  }
  if (!e.alloc(e.error_, 5 * 8, error))
    return nullptr;
#undef SDMA_CU_CREATE
  return executor;
}

CudaLdstExecutor::~CudaLdstExecutor() {
  if (!context_)
    return;
  driver_.cuCtxSetCurrent(context_);
  if (stream_)
    driver_.cuStreamSynchronize(stream_);
  for (CUdeviceptr p : buffers_)
    if (p)
      driver_.cuMemFree_v2(p);
  for (CUdeviceptr p : flags_)
    if (p)
      driver_.cuMemFree_v2(p);
  for (CUdeviceptr p : syncs_)
    if (p)
      driver_.cuMemFree_v2(p);
  if (error_)
    driver_.cuMemFree_v2(error_);
  if (stream_)
    driver_.cuStreamDestroy_v2(stream_);
  if (module_)
    driver_.cuModuleUnload(module_);
  driver_.cuDevicePrimaryCtxRelease_v2(device_);
}

bool CudaLdstExecutor::alloc(CUdeviceptr &ptr, size_t bytes,
                             std::string &error) {
  SDMA_CU(cuMemAlloc_v2, &ptr, bytes);
  SDMA_CU(cuMemsetD8_v2, ptr, 0, bytes);
  return true;
}

bool CudaLdstExecutor::prepare(size_t chunkBytes, std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  int ranks = program_.ranks;
  size_t numBuffers = program_.buffers.size();
  if (chunkBytes > capacityChunkBytes_) {
    SDMA_CU(cuStreamSynchronize, stream_);
    for (CUdeviceptr p : buffers_)
      if (p)
        SDMA_CU(cuMemFree_v2, p);
    buffers_.assign(ranks * numBuffers, 0);
    for (int r = 0; r < ranks; ++r)
      for (size_t b = 0; b < numBuffers; ++b)
        if (!alloc(buffers_[r * numBuffers + b],
                   program_.buffers[b].chunks * chunkBytes, error))
          return false;
    capacityChunkBytes_ = chunkBytes;
  }
  chunkBytes_ = chunkBytes;

  // The table the kernel takes by value (SdmaTable in the generated code).
  std::vector<uint64_t> table;
  for (CUdeviceptr p : buffers_)
    table.push_back(p);
  for (CUdeviceptr p : flags_)
    table.push_back(p);
  for (CUdeviceptr p : syncs_)
    table.push_back(p);
  table.push_back(error_);
  table.push_back(options_.timeoutNs);
  table_ = std::move(table); // passed by value at launch

  // Enough blocks to keep 16-byte units per thread reasonable, never more
  // than can be resident at once for all ranks together.
  int64_t largest = 0;
  for (const Buffer &buffer : program_.buffers)
    largest = std::max<int64_t>(largest, buffer.chunks);
  uint64_t bytes = largest * chunkBytes;
  int cap = std::max(1, smCount_ * std::max(1, blocksPerSM_) / ranks);
  int wanted = static_cast<int>(std::min<uint64_t>(
      cap, (bytes + kLdstThreads * 16 * 4 - 1) / (kLdstThreads * 16 * 4)));
  blocks_ = options_.blocksPerRank ? std::min(options_.blocksPerRank, cap)
                                   : std::max(1, wanted);
  return true;
}

bool CudaLdstExecutor::upload(const HostMemory &memory, std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  size_t numBuffers = program_.buffers.size();
  for (int r = 0; r < program_.ranks; ++r)
    for (size_t b = 0; b < numBuffers; ++b)
      SDMA_CU(cuMemcpyHtoD_v2, buffers_[r * numBuffers + b],
              memory.buffer(r, b), memory.bufferBytes(r, b));
  return true;
}

bool CudaLdstExecutor::download(HostMemory &memory, std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  size_t numBuffers = program_.buffers.size();
  for (int r = 0; r < program_.ranks; ++r)
    for (size_t b = 0; b < numBuffers; ++b)
      SDMA_CU(cuMemcpyDtoH_v2, memory.buffer(r, b),
              buffers_[r * numBuffers + b], memory.bufferBytes(r, b));
  return true;
}

bool CudaLdstExecutor::launch(std::string &error) {
  if (!chunkBytes_) {
    error = "launch before prepare()";
    return false;
  }
  unsigned long long chunk = chunkBytes_, epoch = epoch_++;
  int rankBase = 0;
  void *args[] = {table_.data(), &chunk, &epoch, &rankBase};
  SDMA_CU(cuLaunchKernel, function_, blocks_, program_.ranks, 1, kLdstThreads,
          1, 1, 0, stream_, args, nullptr);
  return true;
}

bool CudaLdstExecutor::wait(std::string &error) {
  SDMA_CU(cuCtxSetCurrent, context_);
  // The kernel bounds its own waits; the host bounds the whole run too,
  // with a margin, in case the kernel cannot even start.
  auto start = std::chrono::steady_clock::now();
  auto limit = std::chrono::nanoseconds(options_.timeoutNs) * 2 +
               std::chrono::seconds(10);
  CUresult result;
  while ((result = driver_.cuStreamQuery(stream_)) == CUDA_ERROR_NOT_READY) {
    if (std::chrono::steady_clock::now() - start > limit) {
      error =
          "the GPU did not finish the run within " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
          " s";
      return false;
    }
    std::this_thread::yield();
  }
  if (!check(result, "cuStreamQuery", error))
    return false;
  uint64_t record[5];
  SDMA_CU(cuMemcpyDtoH_v2, record, error_, sizeof(record));
  if (record[0] != 0) {
    int64_t slot = static_cast<int64_t>(record[2]);
    error = slot < 0
                ? "rank " + std::to_string(record[1]) +
                      ": its blocks did not all reach a rank barrier "
                      "within the timeout (not all resident?)"
                : "rank " + std::to_string(record[1]) +
                      " waited too long for flag slot " + std::to_string(slot) +
                      " to reach " + std::to_string(record[3]) +
                      "; it stayed at " + std::to_string(record[4]);
    return false;
  }
  return true;
}

bool CudaLdstExecutor::time(int runs, std::vector<double> &microseconds,
                            std::string &error) {
  // Events around each run on its own, as the baselines are measured: the
  // time of one collective, launch included, not of a pipelined batch.
  SDMA_CU(cuCtxSetCurrent, context_);
  CUevent start = nullptr, stop = nullptr;
  SDMA_CU(cuEventCreate, &start, CU_EVENT_DEFAULT);
  SDMA_CU(cuEventCreate, &stop, CU_EVENT_DEFAULT);
  bool ok = true;
  microseconds.clear();
  for (int i = 0; i < runs && ok; ++i) {
    float ms = 0;
    ok = check(driver_.cuEventRecord(start, stream_), "cuEventRecord", error) &&
         launch(error) &&
         check(driver_.cuEventRecord(stop, stream_), "cuEventRecord", error) &&
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
