//===- CudaDmaKernel.cpp - the communicator's copy-engine path ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDmaKernel.h"

#include "comm/DmaSyncKernel.h"
#include "cuda/CudaKernel.h"
#include "exec/DmaQueueWalk.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <cstring>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {

/// SdmaDmaSync (DmaSyncKernel.h), as the host fills it.
struct SyncArgs {
  unsigned long long *arrive[kDmaSyncMaxRanks];
  unsigned long long *flags, *epochs, *error, *errorMirror;
  unsigned long long timeoutNs;
  int rank, ranks, flagCount, pad;
};

class CudaDmaKernel : public CommKernel {
public:
  CudaDmaKernel(const Driver &driver, CUcontext context,
                std::shared_ptr<const DmaProgram> program)
      : driver_(driver), context_(context), program_(std::move(program)),
        sync_(driver) {}

  ~CudaDmaKernel() override {
    driver_.cuCtxSetCurrent(context_);
    for (CUstream s : streams_)
      driver_.cuStreamDestroy_v2(s);
    for (CUevent e : events_)
      driver_.cuEventDestroy_v2(e);
    if (stage_)
      driver_.cuMemFree_v2(stage_);
  }

  bool load(CUdevice device, const std::string &cacheDirectory,
            std::string &error) {
    const DmaProgram &P = *program_;
    if (P.plan.ranks > kDmaSyncMaxRanks) {
      error = "the DMA path runs at most " + std::to_string(kDmaSyncMaxRanks) +
              " ranks";
      return false;
    }
    if (!driver_.cuStreamWriteValue64) {
      error = "the CUDA driver has no stream memory operations "
              "(cuStreamWriteValue64): the DMA path notifies with them";
      return false;
    }
    if (!check("cuCtxSetCurrent", driver_.cuCtxSetCurrent(context_), error))
      return false;
    CudaKernelSource source;
    source.text = std::string(kCudaPrelude) + kDmaSyncKernelSource;
    source.name = "sdma_dma_sync.cu";
    CompileInfo compile;
    std::string cubin;
    if (!CudaKernel::build(driver_, device, source, cacheDirectory, compile,
                           cubin, error))
      return false;
    if (!sync_.load(context_, cubin, "sdma_dma_sync", 32, error)) {
      error = driver_.describe("loading the DMA sync kernel", sync_.failure());
      return false;
    }
    // A stream per queue beyond the first (which runs on the caller's),
    // an event to fork and one per queue to join.
    size_t queues = P.queues.size();
    for (size_t i = 0; i < queues + 1; ++i) {
      CUevent event = nullptr;
      if (!check("cuEventCreate", driver_.cuEventCreate(&event, 2u), error))
        return false; // CU_EVENT_DISABLE_TIMING
      events_.push_back(event);
    }
    for (size_t i = 1; i < queues; ++i) {
      CUstream stream = nullptr;
      if (!check("cuStreamCreate", driver_.cuStreamCreate(&stream, 1u), error))
        return false; // CU_STREAM_NON_BLOCKING
      streams_.push_back(stream);
    }
    // The staging each queue's swaps need, in chunks.
    for (size_t q : P.queues) {
      int64_t chunks = 0;
      for (const Command &c : P.plan.streams[q].commands)
        if (c.kind == Command::Kind::Swap && !c.isNoOp())
          chunks = std::max(chunks, c.slices[0].count);
      stageChunks_.push_back(chunks);
    }
    return true;
  }

  bool launch(const KernelLaunch &launch, std::string &error) override {
    const DmaProgram &P = *program_;
    if (!LaunchTable::decode(launch.table, P.plan.ranks, P.plan.buffers.size(),
                             T_, error))
      return false;
    if (launch.programRank != P.rank) {
      error = "internal: rank " + std::to_string(P.rank) +
              "'s DMA program launched for rank " +
              std::to_string(launch.programRank);
      return false;
    }
    chunk_ = launch.chunkBytes;
    CUstream caller = static_cast<CUstream>(launch.stream);
    if (!check("cuCtxSetCurrent", driver_.cuCtxSetCurrent(context_), error) ||
        !ensureStage(error))
      return false;
    std::memset(&args_, 0, sizeof(args_));
    for (int r = 0; r < P.plan.ranks; ++r)
      args_.arrive[r] = T_.arrive[r];
    args_.flags = T_.flags[P.rank];
    args_.epochs = T_.epochs;
    args_.error = T_.error;
    args_.errorMirror = T_.errorMirror;
    args_.timeoutNs = T_.timeoutNs;
    args_.rank = P.rank;
    args_.ranks = P.plan.ranks;
    args_.flagCount = P.plan.flags;
    if (!sync(caller, 0, 0, 0, error))
      return false;
    size_t queues = P.queues.size();
    if (queues > 1 &&
        !check("cuEventRecord", driver_.cuEventRecord(events_[0], caller),
               error))
      return false;
    for (size_t i = 0; i < queues; ++i) {
      CUstream stream = i == 0 ? caller : streams_[i - 1];
      if (i > 0 && !check("cuStreamWaitEvent",
                          driver_.cuStreamWaitEvent(stream, events_[0], 0),
                          error))
        return false;
      Sink sink{*this, stream, i, error};
      size_t q = P.queues[i];
      if (!walkCommands(P.plan, P.schedule, q, 0,
                        P.plan.streams[q].commands.size(), 0, perRun(), sink))
        return false;
    }
    for (size_t i = 1; i < queues; ++i)
      if (!check("cuEventRecord",
                 driver_.cuEventRecord(events_[i], streams_[i - 1]), error) ||
          !check("cuStreamWaitEvent",
                 driver_.cuStreamWaitEvent(caller, events_[i], 0), error))
        return false;
    return sync(caller, 1, 0, 0, error);
  }

private:
  /// The operations of one queue on `stream` (walkCommands' sink).
  struct Sink {
    CudaDmaKernel &k;
    CUstream stream;
    size_t queue;
    std::string &error;

    bool copy(const Slice &dst, const Slice &src) {
      return k.copy(k.address(dst), k.address(src), k.bytes(src), stream,
                    error);
    }
    bool swap(const Slice &a, const Slice &b) {
      CUdeviceptr stage = k.stage_ + k.stageOffset(queue);
      size_t n = k.bytes(a);
      return k.copy(stage, k.address(a), n, stream, error) &&
             k.copy(k.address(a), k.address(b), n, stream, error) &&
             k.copy(k.address(b), stage, n, stream, error);
    }
    bool notify(int rank, int flag, uint64_t value) {
      CUdeviceptr word = reinterpret_cast<CUdeviceptr>(k.T_.flags[rank] + flag);
      return k.check("cuStreamWriteValue64",
                     k.driver_.cuStreamWriteValue64(stream, word, value, 0),
                     error);
    }
    bool poll(int flag, uint64_t value) {
      return k.sync(stream, 2, flag, value, error);
    }
  };

  CUdeviceptr address(const Slice &s) const {
    char *base =
        T_.buffers[size_t(s.rank) * program_->plan.buffers.size() + s.buffer];
    return reinterpret_cast<CUdeviceptr>(base + uint64_t(s.offset) * chunk_);
  }
  size_t bytes(const Slice &s) const { return uint64_t(s.count) * chunk_; }
  size_t stageOffset(size_t queue) const {
    size_t offset = 0;
    for (size_t i = 0; i < queue; ++i)
      offset += (stageChunks_[i] * chunk_ + 255) / 256 * 256;
    return offset;
  }

  /// The swaps' staging at this call's chunk: grown on an eager call.
  bool ensureStage(std::string &error) {
    size_t need = stageOffset(stageChunks_.size());
    if (need <= stageBytes_)
      return true;
    if (stage_ && !check("cuMemFree", driver_.cuMemFree_v2(stage_), error))
      return false;
    stage_ = 0;
    stageBytes_ = 0;
    if (!check("cuMemAlloc (the swaps' staging)",
               driver_.cuMemAlloc_v2(&stage_, need), error))
      return false;
    stageBytes_ = need;
    return true;
  }

  bool copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream,
            std::string &error) {
    if (!bytes)
      return true;
    return check("cuMemcpyDtoDAsync",
                 driver_.cuMemcpyDtoDAsync_v2(dst, src, bytes, stream), error);
  }

  bool sync(CUstream stream, int op, int flag, uint64_t value,
            std::string &error) {
    unsigned long long v = value;
    void *params[] = {&args_, &op, &flag, &v};
    return sync_.launch(1, 1, stream, params, error);
  }

  bool check(const char *what, CUresult result, std::string &error) const {
    if (result == 0)
      return true;
    error = driver_.describe(what, result);
    return false;
  }

  /// Epoch 0 always (flags are reset per call): the counts are unused.
  const std::vector<std::vector<int64_t>> &perRun() {
    if (perRun_.empty())
      perRun_.assign(program_->plan.ranks,
                     std::vector<int64_t>(program_->plan.flags, 0));
    return perRun_;
  }

  const Driver &driver_;
  CUcontext context_;
  std::shared_ptr<const DmaProgram> program_;
  CudaKernel sync_;
  std::vector<CUstream> streams_;
  std::vector<CUevent> events_;
  std::vector<int64_t> stageChunks_;
  CUdeviceptr stage_ = 0;
  size_t stageBytes_ = 0;
  LaunchTable T_;
  size_t chunk_ = 0;
  SyncArgs args_;
  std::vector<std::vector<int64_t>> perRun_;
};

} // namespace

std::unique_ptr<CommKernel>
sdma::rt::createCudaDmaKernel(const Driver &driver, CUdevice device,
                              CUcontext context,
                              std::shared_ptr<const DmaProgram> program,
                              const std::string &cacheDirectory,
                              std::string &error) {
  auto kernel =
      std::make_unique<CudaDmaKernel>(driver, context, std::move(program));
  if (!kernel->load(device, cacheDirectory, error))
    return nullptr;
  return kernel;
}
