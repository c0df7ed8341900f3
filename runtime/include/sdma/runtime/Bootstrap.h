//===- Bootstrap.h - how the ranks of a job meet -----------------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// NCCL's pattern: one process makes a UniqueId (an address and a random
// secret) and starts a small root that listens there; the job hands the id
// to every process by what it already has (MPI_Bcast, torch's store, a
// file); each rank connects with the id, its rank and the rank count. The
// root admits only hellos that carry the id's secret (a foreign process is
// refused), checks that every rank agrees on the rank count and that no
// rank joins twice, and then serves all-gathers of small blobs (memory
// handles, schedule hashes) and barriers. A rank that never arrives, or
// leaves, is named to every other rank as an error, never a hang.
//
// The root binds 127.0.0.1 by default (one host: the CPU device and one
// node's GPUs); SDMA_BOOTSTRAP_ADDR=a.b.c.d chooses the interface for a
// job whose ranks are on several hosts.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_BOOTSTRAP_H
#define SDMA_RUNTIME_BOOTSTRAP_H

#include "sdma/runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sdma::rt {

/// 128 bytes, as ncclUniqueId: copy it to every rank as plain bytes.
struct UniqueId {
  char bytes[128];
};

/// Makes an id and starts its root (a thread of this process that lives
/// until every rank has disconnected or the job failed). False with
/// `error` if no socket can be bound.
bool createUniqueId(UniqueId &id, Error &error);

class Bootstrap {
public:
  /// Joins the job as `rank` of `ranks`; waits at most `timeoutMs` for all
  /// ranks to arrive. nullptr with `error` naming the missing ranks, a
  /// rank-count mismatch, a duplicate rank or a refused id.
  static std::unique_ptr<Bootstrap> connect(const UniqueId &id, int rank,
                                            int ranks, uint64_t timeoutMs,
                                            Error &error);
  ~Bootstrap();
  Bootstrap(const Bootstrap &) = delete;
  Bootstrap &operator=(const Bootstrap &) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }

  /// Every rank's `mine`, in rank order. Every rank must give the same
  /// size; a mismatch, a rank that does not arrive within the timeout or
  /// one that left is an error on every rank.
  bool allGather(const std::string &mine, std::vector<std::string> &all,
                 Error &error);
  bool barrier(Error &error);

private:
  Bootstrap() = default;
  int socket_ = -1, rank_ = 0, ranks_ = 0;
  uint64_t timeoutMs_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_BOOTSTRAP_H
