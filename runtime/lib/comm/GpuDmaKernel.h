//===- GpuDmaKernel.h - the DMA path on a GPU's streams ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The DMA path (DmaProgram.h) on a GPU, over what a vendor layer provides
// (GpuDmaOps: CUDA's driver API in cuda/CudaDmaKernel.cpp, HIP's in
// hip/HipDmaKernel.cpp). On the caller's stream the entry barrier (the
// sync kernel of DmaSyncKernel.h, one thread), then this rank's queues,
// each on a stream of its own forked from the caller's (one queue: the
// caller's stream itself): a copy as one asynchronous device copy between
// the IPC-mapped buffers (between GPUs the driver runs it on a copy engine
// or SDMA engine), a bcast as two, a swap as three through a staging buffer
// of the queue's. Copies a queue issues back to back wait as one batch
// (GpuDmaOps::copyBatch: cuMemcpyBatchAsync) while none touches a byte
// another one writes; a swap, a notify, a poll, a conflicting copy and the
// queue's end issue the batch first, so a copy only overtakes copies it
// does not touch (outside graph capture only: the driver refuses a batch
// there, and those calls copy one by one); a notify as the sync kernel writing
// its constant into the peer's flag (after the queue's copies; not once the
// call has failed here); a poll as the sync kernel's bounded wait; then the
// queues joined and the exit barrier, which resets the rank's flags and
// advances the run counter on the device. Nothing is host-synchronised, the
// values are constants and the run number lives on the device, so the sequence
// can be captured into a graph once a call has sized the swaps' staging.
//
// Known limit: a call that fails at its entry barrier (a timeout, ranks
// whose calls differ) stops its rank's notifies and arrivals, so every
// rank fails, but the copies enqueued behind it still run: engines cannot
// be told to skip them.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_GPUDMAKERNEL_H
#define SDMA_RUNTIME_LIB_COMM_GPUDMAKERNEL_H

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"
#include "comm/DmaSyncKernel.h"

#include <memory>

namespace sdma::rt {

/// One copy of a batch.
struct DmaCopy {
  char *dst;
  const char *src;
  size_t bytes;
};

/// A vendor layer's streams, events, copies and the sync kernel, each call
/// false with the failed call named in `error`. Streams and events are the
/// vendor's handles.
class GpuDmaOps {
public:
  virtual ~GpuDmaOps() = default;
  /// Makes the device current for this thread.
  virtual bool activate(std::string &error) = 0;
  virtual bool createStream(void *&stream, std::string &error) = 0;
  virtual void destroyStream(void *stream) = 0;
  virtual bool createEvent(void *&event, std::string &error) = 0;
  virtual void destroyEvent(void *event) = 0;
  virtual bool record(void *event, void *stream, std::string &error) = 0;
  virtual bool waitEvent(void *stream, void *event, std::string &error) = 0;
  virtual bool copy(char *dst, const char *src, size_t bytes, void *stream,
                    std::string &error) = 0;
  /// Whether copies enqueued on `stream` now may go as one batch
  /// (copyBatch): the vendor has a batch call, the stream takes one (not
  /// the legacy default stream) and is not being captured. False in
  /// `may` where not; false returned only where asking failed.
  virtual bool mayBatch(void *stream, bool &may, std::string &error) {
    (void)stream;
    (void)error;
    may = false;
    return true;
  }
  /// `copies`, which touch no byte another writes, in any order, as one
  /// command on `stream` (only where mayBatch said so).
  virtual bool copyBatch(const std::vector<DmaCopy> &copies, void *stream,
                         std::string &error) {
    for (const DmaCopy &c : copies)
      if (!copy(c.dst, c.src, c.bytes, stream, error))
        return false;
    return true;
  }
  virtual bool allocate(size_t bytes, char *&ptr, std::string &error) = 0;
  virtual void release(char *ptr) = 0;
  /// Launches the sync kernel (one thread) with `args` by value.
  virtual bool sync(void *stream, const DmaSyncArgs &args, DmaSyncOp op,
                    int flag, uint64_t value, std::string &error) = 0;
};

/// The sync kernel's argument for a launch of `program` with table `table`
/// (its DMA flags: DmaProgram::flagSlots of them, reset at the exit).
DmaSyncArgs dmaSyncArgs(const DmaProgram &program, const LaunchTable &table);

/// The DMA path of `program` on the GPU `ops` drives; null with why.
/// `batch`: a queue's copies that may run in any order go as one batch
/// where `ops` allows (CommOptions::dmaBatch).
std::unique_ptr<CommKernel>
createGpuDmaKernel(std::unique_ptr<GpuDmaOps> ops,
                   std::shared_ptr<const DmaProgram> program, bool batch,
                   std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_GPUDMAKERNEL_H
