//===- CudaCeExecutor.h - a DMA plan on CUDA streams ----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Runs a plan's engine queues on CUDA: each queue is a stream; copy is one
// cuMemcpyDtoDAsync, bcast two (NVIDIA has no broadcast copy), swap three
// through a staging buffer (no swap copy either). A poll waits for one
// notify (every flag has one writer): within this process that is an event
// recorded on the notifier's stream after the notify and waited for by the
// poller's stream (cuEventRecord / cuStreamWaitEvent), and the queues are
// enqueued interleaved so that every wait follows its record
// (DmaQueueSchedule.h). No stream spin-waits on another stream of the
// process, so streams sharing one of the GPU's hardware queues (8 by
// default, CUDA_DEVICE_MAX_CONNECTIONS) cannot deadlock; a plan that can
// deadlock is refused by create(), naming the queues and flags. A value
// wait (cuStreamWaitValue64 >=, the notify a cuStreamWriteValue64 of the
// count it reaches: run n writes n x notifies-per-run + k) remains for a
// notifier in another process (CeOptions::valueWaits forces it, to test
// that path). Completion notifies (flag 1) and the launch poll (flag 0) are
// left to the host: it waits for the streams, and enqueueing is the launch.
//
// Ranks are placed on GPUs as by the load/store executor (CudaOptions::
// devices); a queue's stream lives on its rank's GPU, so a copy to or from
// a peer GPU is a copy-engine copy. A copy within one GPU (a rank's own
// chunk, several ranks sharing a GPU, the swap's staging) runs on the SMs:
// NVIDIA moves same-device copies with kernels (MEASUREMENTS.md).
//
// Modes (CeOptions):
//   batch  each maximal run of copies between two syncs of a queue is one
//          cuMemcpyBatchAsync (DMA-Latte's back-to-back batching);
//          A copy that touches what a copy pending in the batch writes (or
//          writes what it reads) starts a new batch: a batch has no order;
//   graph  the whole run is captured once into a CUDA graph at prepare()
//          and replayed by launch() (DMA-Latte's prelaunch: the host's
//          per-command work leaves the critical path); events become graph
//          edges. With value waits, flags are reset to zero at the end of
//          each replay, so the captured values hold.
//   localCopyKernel  (with any of the above) the device-local copies of a
//          run that may run unordered become one copy-list kernel launch
//          (CeCopyKernel.h): on one GPU, a graph of one node per queue run
//          instead of one per copy.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDACEEXECUTOR_H
#define SDMA_RUNTIME_LIB_CUDA_CUDACEEXECUTOR_H

#include "cuda/CudaDriver.h"
#include "cuda/CudaDeviceSet.h"
#include "sdma/runtime/Executor.h"

#include <memory>

namespace sdma::rt {

class CopyListKernel;
struct DmaSchedule;

class CudaCeExecutor : public Executor {
public:
  static std::unique_ptr<CudaCeExecutor> create(const Plan &plan,
                                                const CudaOptions &options,
                                                std::string &error,
                                                const CeOptions &ce = {});
  ~CudaCeExecutor() override;

  std::string name() const override { return "cuda-ce"; }
  std::string description() const override;
  /// True once a run did not finish within the timeout: the executor
  /// refuses further use, and other GPU work of the process may block
  /// behind its streams (a tool should report and exit).
  bool stuck() const override { return stuck_; }
  bool kernelTrigger(int rank, uint64_t &flag, uint64_t &value,
                     std::string &error) const override;
  bool deviceBuffer(int rank, int buffer, uint64_t &address,
                    std::string &error) const override;

  bool prepare(size_t chunkBytes, std::string &error) override;
  bool upload(const HostMemory &memory, std::string &error) override;
  bool download(HostMemory &memory, std::string &error) override;
  /// Enqueues one run (fork from the main stream, join back).
  bool launch(std::string &error) override;
  /// Waits for the launched runs, at most CudaOptions::timeoutNs. A run
  /// that does not finish (with events only a GPU stall can cause that; with
  /// value waits, a notifier that never comes) is reported with its
  /// unfinished queues and the polls each may be blocked at; the executor
  /// is then unusable (every call fails, and destruction leaks its GPU
  /// resources rather than block, so the process can exit).
  bool wait(std::string &error) override;
  /// Events around each run on the main stream.
  bool time(int runs, std::vector<double> &microseconds,
            std::string &error) override;
  int deviceCount() const override {
    return static_cast<int>(devices_.devices().size());
  }

private:
  CudaCeExecutor(const cuda::Driver &driver, const Plan &plan,
                 const CudaOptions &options, const CeOptions &ce);
  bool check(cuda::CUresult result, const char *call, std::string &error);
  bool createStreams(std::string &error);
  cuda::CUdeviceptr slice(const Slice &s) const {
    return devices_.buffer(s.rank, s.buffer) + s.offset * chunkBytes_;
  }
  /// Enqueues one run in the schedule's order: value notifies write epoch x
  /// per-run + k; with `resetFlags` (and value waits), every rank's flags go
  /// back to zero once all queues are done (the graph mode's epoch is
  /// always 0).
  bool enqueue(uint64_t epoch, bool resetFlags, std::string &error);
  bool enqueueRun(size_t q, size_t begin, size_t end, uint64_t epoch,
                  std::string &error);
  struct RunSink;
  bool join(bool resetFlags, std::string &error);
  /// Polls the main stream until it is idle or `timeoutNs` passes (false,
  /// error left empty).
  bool idle(uint64_t timeoutNs, std::string &error);
  bool capture(std::string &error);
  bool usable(std::string &error) const;
  static constexpr const char *kStuckNote =
      "its streams stay blocked on the GPU, so it cannot be used again";
  void destroyGraph();

  const cuda::Driver &driver_;
  Plan plan_;
  CudaOptions options_;
  CeOptions ce_;
  CudaDeviceSet devices_;
  cuda::CUstream main_ = nullptr;       // on the first GPU
  std::vector<cuda::CUstream> streams_; // one per plan queue
  std::vector<cuda::CUevent> joins_;
  std::vector<cuda::CUevent> resets_; // per rank (graph mode)
  std::unique_ptr<DmaSchedule> schedule_;
  std::unique_ptr<CopyListKernel> copyKernel_; // localCopyKernel
  std::vector<cuda::CUevent> events_;          // [schedule event]
  bool stuck_ = false; // a run did not finish within the timeout
  cuda::CUevent fork_ = nullptr;
  std::vector<cuda::CUdeviceptr> flags_, staging_;
  std::vector<std::vector<int64_t>> notifiesPerRun_; // [rank][flag]
  size_t chunkBytes_ = 0, stagingChunkBytes_ = 0;
  uint64_t epoch_ = 0;
  cuda::CUgraph graph_ = nullptr;
  cuda::CUgraphExec graphExec_ = nullptr;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDACEEXECUTOR_H
