//===- Transport.h - the inter-node legs of a multi-node job ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma moves bytes within a node (load/store kernels, copy engines); the
// legs between nodes go through a library that owns the network: MPI or
// NCCL, the job's own. A Transport is that library seen from a schedule's
// network phase: the job's ranks (node-major: rank r is local rank r mod G
// of node r / G), and one group of sends and receives at a time, posted
// together so a phase that exchanges with many peers cannot deadlock.
//
// Implementations: MpiTransport.h (header only: the job's MPI library is
// the caller's, not libsdma's). NCCL's ncclSend/ncclRecv in one group fit
// the same interface (stream-ordered); see docs/multi-node.md.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TRANSPORT_H
#define SDMA_RUNTIME_TRANSPORT_H

#include "sdma/runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sdma::rt {

/// One send or receive of a group: `bytes` at `buffer`, to or from `peer`
/// (a rank of the transport). A pair's messages match in the order each
/// side lists them.
struct TransportOp {
  bool send = false;
  int peer = 0;
  void *buffer = nullptr;
  uint64_t bytes = 0;
  /// `buffer` is host memory even where deviceMemory() is true: setup
  /// messages (agreements, the node's unique id) and staged phases.
  bool host = false;
};

class Transport {
public:
  virtual ~Transport() = default;
  /// This rank and the job's rank count, as the transport numbers them.
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// "mpi", "nccl": for messages.
  virtual std::string name() const = 0;
  /// Whether `exchange` may be given device memory (CUDA-aware MPI, NCCL);
  /// false: host memory only (the CPU device's buffers are host memory).
  /// Ops marked `host` are host memory either way.
  virtual bool deviceMemory() const = 0;
  /// Runs every op of `ops` as one group, ordered after the work enqueued
  /// on `stream` before it: a stream-ordered transport enqueues it there, a
  /// host one (MPI) runs it before returning. False with an error naming
  /// the peers whose messages did not complete (a bounded wait).
  virtual bool exchange(const std::vector<TransportOp> &ops, void *stream,
                        Error &error) = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_TRANSPORT_H
