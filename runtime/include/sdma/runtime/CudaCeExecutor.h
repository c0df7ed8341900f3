//===- CudaCeExecutor.h - a DMA plan on CUDA streams -------------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Runs a plan's engine queues on CUDA: each queue is a stream; copy is one
// cuMemcpyDtoDAsync, bcast two (NVIDIA has no broadcast copy), swap three
// through a staging buffer (no swap copy either); notify is a
// cuStreamWriteValue64 and poll a cuStreamWaitValue64 (>=). A flag 2 + q is
// written only by queue q, so a notify writes the count it reaches (run n:
// n x notifies-per-run + k) instead of adding. Completion notifies (flag 1)
// and the launch poll (flag 0) are left to the host: it waits for the
// streams, and enqueueing is the launch.
//
// Across GPUs, device-to-device copies use the copy engines; with all ranks
// on one GPU (every run so far) they run on the SMs (MEASUREMENTS.md).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_CUDACEEXECUTOR_H
#define SDMA_RUNTIME_CUDACEEXECUTOR_H

#include "sdma/runtime/CudaExecutor.h"

namespace sdma::rt {

class CudaCeExecutor {
public:
  static std::unique_ptr<CudaCeExecutor>
  create(const Plan &plan, const CudaOptions &options, std::string &error);
  ~CudaCeExecutor();

  bool prepare(size_t chunkBytes, std::string &error);
  bool upload(const HostMemory &memory, std::string &error);
  bool download(HostMemory &memory, std::string &error);
  /// Enqueues one run (fork from the main stream, join back).
  bool launch(std::string &error);
  bool wait(std::string &error);
  bool run(std::string &error) { return launch(error) && wait(error); }
  /// Events around each run on the main stream.
  bool time(int runs, std::vector<double> &microseconds, std::string &error);

private:
  CudaCeExecutor(const cuda::Driver &driver, const Plan &plan,
                 const CudaOptions &options)
      : driver_(driver), plan_(plan), options_(options) {}
  bool check(cuda::CUresult result, const char *call, std::string &error);
  cuda::CUdeviceptr slice(const Slice &s) const {
    return buffers_[s.rank * plan_.buffers.size() + s.buffer] +
           s.offset * chunkBytes_;
  }

  const cuda::Driver &driver_;
  Plan plan_;
  CudaOptions options_;
  cuda::CUdevice device_ = 0;
  cuda::CUcontext context_ = nullptr;
  cuda::CUstream main_ = nullptr;
  std::vector<cuda::CUstream> streams_; // one per plan queue
  std::vector<cuda::CUevent> joins_;
  cuda::CUevent fork_ = nullptr;
  std::vector<cuda::CUdeviceptr> buffers_, flags_, staging_;
  std::vector<std::vector<int64_t>> notifiesPerRun_; // [rank][flag]
  size_t chunkBytes_ = 0, capacity_ = 0;
  uint64_t epoch_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_CUDACEEXECUTOR_H
