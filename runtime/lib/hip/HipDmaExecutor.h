//===- HipDmaExecutor.h - a DMA plan on HIP streams (AMD) ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The AMD counterpart of CudaCeExecutor (hip-dma): each plan queue a HIP
// stream on its rank's GPU; a copy is hipMemcpyAsync (device to device:
// between GPUs with peer access, the SDMA engines move it); bcast two
// copies, swap three through a staging buffer (HIP's API has no broadcast
// or swap copy: the packet target has both); a poll on a notify of the same
// process is an event (hipEventRecord after the notify, hipStreamWaitEvent at
// the poll), the queues enqueued in the topological interleaving of
// DmaQueueSchedule.h as in the CUDA executor; waits bounded as there.
// libamdhip64 is dlopen'ed; built and linked in CI against Debian's HIP 5.2.
// There is no AMD GPU in this project's reach: it has never run on hardware.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HIP_HIPDMAEXECUTOR_H
#define SDMA_RUNTIME_LIB_HIP_HIPDMAEXECUTOR_H

#include "sdma/runtime/Executor.h"

namespace sdma::rt {

class HipDmaExecutor : public Executor {
public:
  /// "no GPU: ..." where HIP or an AMD device is missing.
  static std::unique_ptr<HipDmaExecutor>
  create(const Plan &plan, const HipOptions &options, std::string &error);
  ~HipDmaExecutor() override;

  std::string name() const override { return "hip-dma"; }
  std::string description() const override {
    return "the plan's queues as HIP streams (SDMA engines between GPUs); "
           "HIP-event times, median";
  }
  bool prepare(size_t chunkBytes, std::string &error) override;
  bool upload(const HostMemory &memory, std::string &error) override;
  bool download(HostMemory &memory, std::string &error) override;
  bool launch(std::string &error) override;
  bool wait(std::string &error) override;
  bool time(int runs, std::vector<double> &microseconds,
            std::string &error) override;

private:
  struct State;
  explicit HipDmaExecutor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HIP_HIPDMAEXECUTOR_H
