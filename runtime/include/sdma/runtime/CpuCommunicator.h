//===- CpuCommunicator.h - one process per rank on the CPU -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The CPU device: a job of processes on one host, one rank each, meeting
// through the Bootstrap, each rank's buffers, flags and barrier counters in
// a POSIX shared-memory segment of its own that every other rank maps
// (symmetric memory), and the generated load/store kernel run by each
// process for its own rank on the CPU emulator, signalling the others
// through their mapped flags. The multi-process path of a GPU job --
// bootstrap, registration, signals between processes, epochs -- runs here
// where CI has no GPU.
//
// Segments are created 0600 (the job's user only), named from a hash of
// the unique id, and unlinked as soon as every rank has mapped them, so
// nothing is left behind when processes die.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_CPUCOMMUNICATOR_H
#define SDMA_RUNTIME_CPUCOMMUNICATOR_H

#include "sdma/runtime/Bootstrap.h"
#include "sdma/runtime/LdstCpuExecutor.h"

namespace sdma::rt {

class CpuCommunicator {
public:
  struct Options {
    /// Joining, all-gathers, and every wait in the kernel.
    uint64_t timeoutMs = 10000;
    /// The largest chunk a run may use: the buffers are sized for it.
    size_t maxChunkBytes = 4096;
    LdstCpuOptions cpu;
  };

  /// Joins the job as `rank` and maps every rank's memory. Every rank must
  /// load the same program (checked: a different schedule is an error on
  /// every rank, naming both).
  static std::unique_ptr<CpuCommunicator>
  create(const UniqueId &id, int rank, int ranks, const LdstProgram &program,
         const Options &options, std::string &error);
  ~CpuCommunicator();
  CpuCommunicator(const CpuCommunicator &) = delete;
  CpuCommunicator &operator=(const CpuCommunicator &) = delete;

  int rank() const { return bootstrap_->rank(); }
  int ranks() const { return bootstrap_->ranks(); }
  Bootstrap &bootstrap() { return *bootstrap_; }

  /// This rank's buffer `b`, maxChunkBytes x its chunk count bytes, in
  /// shared memory: what a collective reads and writes in place.
  uint8_t *buffer(size_t b) const {
    return reinterpret_cast<uint8_t *>(
        pointers_.buffers[rank() * buffers_ + b]);
  }
  /// One run of this rank's part at `chunkBytes` (<= maxChunkBytes); the
  /// other ranks run theirs in their processes at the same time.
  bool run(size_t chunkBytes, std::string &error);

private:
  CpuCommunicator() = default;
  struct Segment {
    void *base = nullptr;
    size_t bytes = 0;
  };
  std::unique_ptr<Bootstrap> bootstrap_;
  std::unique_ptr<LdstCpuExecutor> kernel_;
  std::vector<Segment> segments_; // [rank], mapped
  LdstCpuExecutor::RankPointers pointers_;
  size_t buffers_ = 0, maxChunkBytes_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_CPUCOMMUNICATOR_H
