//===- CudaLdstExecutor.cpp - load/store kernels on NVIDIA GPUs -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaLdstExecutor.h"
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

  // Contiguous groups of ranks, one per device, peer access between all.
  int ranks = program.ranks;
  if (!e.devices_.init(ranks, options.devices, options.device, error))
    return nullptr;
  for (const CudaDeviceSet::Device &d : e.devices_.devices()) {
    Group group(*driver);
    group.firstRank = d.firstRank;
    group.numRanks = d.numRanks;
    group.device = d.device;
    group.context = d.context;
    group.smCount = d.smCount;
    e.groups_.push_back(std::move(group));
  }

  // The kernel: from the cache, else NVRTC (then cached). All devices of a
  // run share one architecture (the first device's).
  Group &first = e.groups_.front();
  SDMA_CU_CREATE(cuCtxSetCurrent, first.context);
  std::string cubin;
  if (!CudaKernel::build(*driver, first.device,
                         CudaKernelSource::ldst(program, options.stagedOps),
                         options.cacheDirectory, e.compile_, cubin, error))
    return nullptr;
  auto start = std::chrono::steady_clock::now();
  for (Group &group : e.groups_) {
    if (!group.kernel.load(group.context, cubin, program.entry, kLdstThreads,
                           error))
      return nullptr;
    e.compile_.registers = group.kernel.registers();
    e.compile_.blocksPerSM = group.kernel.blocksPerSM();
    // A blocking stream: it waits for work on the legacy default stream,
    // where the synchronous-looking host copies of upload() run (a copy
    // from pageable memory can return before its DMA has landed).
    SDMA_CU_CREATE(cuStreamCreate, &group.stream, 0);
    if (!e.devices_.alloc(group.firstRank, group.error, 8 * 8, error))
      return nullptr;
  }
  e.compile_.loadMs = millisecondsSince(start);

  // Flags and barrier counters live on their rank's device as long as the
  // executor; buffers come with prepare().
  e.flags_.assign(ranks, 0);
  e.syncs_.assign(ranks, 0);
  for (int r = 0; r < ranks; ++r)
    if (!e.devices_.alloc(r, e.flags_[r], program.flagSlots * 8, error) ||
        !e.devices_.alloc(r, e.syncs_[r], 8, error))
      return nullptr;
  if (options.parallelLaunch && e.groups_.size() > 1)
    e.pool_ = std::make_unique<LaunchPool>(e.groups_.size());
#undef SDMA_CU_CREATE
  return executor;
}

std::string CudaLdstExecutor::description() const {
  return "load/store kernel, NVRTC " + compile_.arch + ", " +
         (compile_.cacheHit ? "cache hit" : "compiled") + " in " +
         std::to_string(compile_.compileMs + compile_.loadMs) + " ms; " +
         (options_.devices.size() > 1 ? "ranks spread over GPUs"
                                      : "all ranks on one GPU") +
         (classes_.disabledBecause().empty()
              ? std::string()
              : "; no size classes (" + classes_.disabledBecause() + ")") +
         "; CUDA-event times, median";
}

CudaLdstExecutor::~CudaLdstExecutor() {
  // Modules go with groups_, then device memory and contexts with devices_.
  for (Group &group : groups_) {
    driver_.cuCtxSetCurrent(group.context);
    if (group.stream) {
      driver_.cuStreamSynchronize(group.stream);
      driver_.cuStreamDestroy_v2(group.stream);
    }
  }
}

bool CudaLdstExecutor::prepare(size_t chunkBytes, std::string &error) {
  std::vector<int64_t> chunks;
  for (const Buffer &buffer : program_.buffers)
    chunks.push_back(buffer.chunks);
  if (!devices_.allocateBuffers(chunks, chunkBytes, error))
    return false;
  chunkBytes_ = chunkBytes;

  // The tables the kernels take by value (SdmaTable in the generated code):
  // the same pointers (unified addressing), each device its error record.
  int64_t largest = 0;
  for (const Buffer &buffer : program_.buffers)
    largest = std::max<int64_t>(largest, buffer.chunks);
  uint64_t bytes = largest * chunkBytes;
  for (Group &group : groups_) {
    group.table.clear();
    for (CUdeviceptr p : devices_.buffers())
      group.table.push_back(p);
    for (CUdeviceptr p : flags_)
      group.table.push_back(p);
    for (CUdeviceptr p : syncs_)
      group.table.push_back(p);
    group.table.push_back(group.error);
    group.table.push_back(options_.timeoutNs);
    group.table.push_back(0); // epochs: the launch numbers the run
    group.table.insert(group.table.end(), program_.ranks, 0); // arrive
    group.table.push_back(0);                    // errorMirror: none
    group.table.push_back(0);                    // rowBytes: rows are chunks
    group.table.insert(group.table.end(), 4, 0); // countsIn/Out: none
    group.table.push_back(0); // callTag, tags: in-process, unchecked
    group.table.insert(group.table.end(), program_.ranks, 0);
    // ll, llSeq, llPairBytes (a low-latency program): no inbox, no
    // low-latency call.
    if (program_.lowLatencyPairChunks >= 0)
      group.table.insert(group.table.end(), program_.ranks + 2, 0);
    // A small chunk's size class, when it has one.
    if (!classes_.get(group.device, group.context, chunkBytes,
                      group.classKernel, error))
      return false;
    int blocksPerSM = group.classKernel ? group.classKernel->blocksPerSM()
                                        : group.kernel.blocksPerSM();
    // Enough blocks for the units per thread asked for, never more than can
    // be resident at once for all the device's ranks together.
    int cap =
        std::max(1, group.smCount * std::max(1, blocksPerSM) / group.numRanks);
    group.blocks = options_.blocksPerRank
                       ? std::min(options_.blocksPerRank, cap)
                       : ldstBlocks(cap, bytes, options_.unitsPerThread);
  }
  return true;
}

bool CudaLdstExecutor::upload(const HostMemory &memory, std::string &error) {
  return devices_.upload(memory, error);
}

bool CudaLdstExecutor::download(HostMemory &memory, std::string &error) {
  return devices_.download(memory, error);
}

bool CudaLdstExecutor::launchGroup(size_t g, unsigned long long chunk,
                                   unsigned long long epoch, CUevent start,
                                   CUevent stop, std::string &error) {
  Group &group = groups_[g];
  SDMA_CU(cuCtxSetCurrent, group.context);
  if (start)
    SDMA_CU(cuEventRecord, start, group.stream);
  int rankBase = group.firstRank;
  void *args[] = {group.table.data(), &chunk, &epoch, &rankBase};
  // The chunk's size class where it has one, else the program.
  CudaKernel &kernel = group.classKernel ? *group.classKernel : group.kernel;
  if (!kernel.launch(group.blocks, group.numRanks, group.stream, args, error))
    return false;
  if (stop)
    SDMA_CU(cuEventRecord, stop, group.stream);
  return true;
}

bool CudaLdstExecutor::launchAll(const std::vector<CUevent> *starts,
                                 const std::vector<CUevent> *stops,
                                 std::string &error) {
  if (!chunkBytes_) {
    error = "launch before prepare()";
    return false;
  }
  unsigned long long chunk = chunkBytes_, epoch = epoch_++;
  auto job = [&](size_t g, std::string &jobError) {
    if (launchGroup(g, chunk, epoch, starts ? (*starts)[g] : nullptr,
                    stops ? (*stops)[g] : nullptr, jobError))
      return true;
    jobError = "GPU " + std::to_string(groups_[g].device) + ": " + jobError;
    return false;
  };
  if (pool_)
    return pool_->run(job, error);
  for (size_t g = 0; g < groups_.size(); ++g)
    if (!job(g, error))
      return false;
  return true;
}

bool CudaLdstExecutor::launch(std::string &error) {
  return launchAll(nullptr, nullptr, error);
}

bool CudaLdstExecutor::wait(std::string &error) {
  // The kernel bounds its own waits; the host bounds the whole run too,
  // with a margin, in case the kernel cannot even start.
  auto start = std::chrono::steady_clock::now();
  auto limit = std::chrono::nanoseconds(options_.timeoutNs) * 2 +
               std::chrono::seconds(10);
  for (Group &group : groups_) {
    SDMA_CU(cuCtxSetCurrent, group.context);
    CUresult result;
    while ((result = driver_.cuStreamQuery(group.stream)) ==
           CUDA_ERROR_NOT_READY) {
      if (std::chrono::steady_clock::now() - start > limit) {
        error = "the GPU did not finish the run within " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::seconds>(limit)
                        .count()) +
                " s";
        return false;
      }
      std::this_thread::yield();
    }
    if (!check(result, "cuStreamQuery", error))
      return false;
  }
  for (Group &group : groups_) {
    SDMA_CU(cuCtxSetCurrent, group.context);
    uint64_t record[5];
    SDMA_CU(cuMemcpyDtoH_v2, record, group.error, sizeof(record));
    if (record[0] == 0)
      continue;
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
  // time of one collective, launch included, not of a pipelined batch. With
  // several devices, the slowest device's time.
  std::vector<CUevent> starts(groups_.size()), stops(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    SDMA_CU(cuCtxSetCurrent, groups_[g].context);
    SDMA_CU(cuEventCreate, &starts[g], CU_EVENT_DEFAULT);
    SDMA_CU(cuEventCreate, &stops[g], CU_EVENT_DEFAULT);
  }
  bool ok = true;
  microseconds.clear();
  for (int i = 0; i < runs && ok; ++i) {
    // Each GPU's start event just before its own launch (as each process
    // of a one-process-per-GPU library times itself); the run's time is
    // the slowest GPU's, so waiting for a late peer is counted.
    ok = launchAll(&starts, &stops, error);
    ok = ok && wait(error);
    double slowest = 0;
    for (size_t g = 0; g < groups_.size() && ok; ++g) {
      float ms = 0;
      ok = check(driver_.cuEventElapsedTime(&ms, starts[g], stops[g]),
                 "cuEventElapsedTime", error);
      slowest = std::max<double>(slowest, ms * 1000.0);
    }
    if (ok)
      microseconds.push_back(slowest);
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    driver_.cuCtxSetCurrent(groups_[g].context);
    driver_.cuEventDestroy_v2(starts[g]);
    driver_.cuEventDestroy_v2(stops[g]);
  }
  return ok;
}
