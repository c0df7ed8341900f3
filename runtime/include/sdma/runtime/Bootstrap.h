//===- Bootstrap.h - how the ranks of a job meet ----------------*- C++ -*-===//
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
// Nothing a peer sends is trusted before it is checked: every message's
// size is bounded before anything is allocated for it (a hello is 24
// bytes, a blob at most kMaxBlobBytes, an answer exactly ranks x the blob,
// a refusal at most kMaxReasonBytes); the root reads every new connection
// at once, without blocking on any, checks the secret before anything
// else in a hello, and drops a connection that has not sent a valid hello
// within kHelloMs, so idle or hostile connections to its port neither
// hold up nor fail the job's ranks.
//
// The root binds 127.0.0.1 by default (one host: the CPU device and one
// node's GPUs); SDMA_BOOTSTRAP_ADDR=a.b.c.d chooses the interface for a
// job whose ranks are on several hosts.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_BOOTSTRAP_H
#define SDMA_RUNTIME_BOOTSTRAP_H

#include "sdma/runtime/Error.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sdma::rt {

/// 128 bytes, as ncclUniqueId: copy it to every rank as plain bytes. The
/// root's IPv4 address is bytes 4-7 and its port bytes 8-9 (network
/// order); the secret follows.
struct UniqueId {
  char bytes[128];
};

/// Makes an id and starts its root (a thread of this process that lives
/// until every rank has disconnected or the job failed). False with
/// `error` if no socket can be bound.
bool createUniqueId(UniqueId &id, Error &error);

class Bootstrap {
public:
  /// The largest blob a rank may all-gather (the communicator's exchanges
  /// are 256 bytes), so the largest message is ranks x this.
  static constexpr size_t kMaxBlobBytes = 256;
  /// The longest reason the root gives for refusing or failing a job.
  static constexpr size_t kMaxReasonBytes = 1024;
  /// How long the root waits for a new connection's hello.
  static constexpr int kHelloMs = 2000;

  /// The most payload bytes a message of a `ranks`-rank job may carry.
  static uint64_t maxMessageBytes(int ranks) {
    return std::max<uint64_t>(uint64_t(ranks) * kMaxBlobBytes, kMaxReasonBytes);
  }

  /// Joins the job as `rank` of `ranks` (at most sdma::kMaxRanks); waits
  /// at most `timeoutMs` for all ranks to arrive. nullptr with `error`
  /// naming the missing ranks, a rank-count mismatch, a duplicate rank, a
  /// refused id or a root that sent more than a message may hold.
  static std::unique_ptr<Bootstrap> connect(const UniqueId &id, int rank,
                                            int ranks, uint64_t timeoutMs,
                                            Error &error);
  ~Bootstrap();
  Bootstrap(const Bootstrap &) = delete;
  Bootstrap &operator=(const Bootstrap &) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }

  /// Every rank's `mine` (at most kMaxBlobBytes), in rank order. Every rank
  /// must give the same size; a mismatch, a rank that does not arrive
  /// within the timeout or one that left is an error on every rank.
  /// After interrupt() it fails at once, unless `leaving` (a rank's last
  /// exchange, which waits for the others to leave too).
  bool allGather(const std::string &mine, std::vector<std::string> &all,
                 Error &error, bool leaving = false);
  bool barrier(Error &error);
  /// An abort, from any thread: every later exchange but a leaving one
  /// fails with `why` (InvalidUsage); one in flight ends now, and with it
  /// this rank's part in the job (the socket is shut: the other ranks see
  /// it leave, and its own leaving exchange fails). With none in flight,
  /// `leaving` (this rank's leaving blob, where not empty) is sent now: an
  /// exchange the others are in, or their next, pairs with it and they
  /// learn that this rank left; the leaving exchange then only waits for
  /// the answer.
  void interrupt(const std::string &why, const std::string &leaving = "");
  /// True, with the failure naming why, once interrupt() was called (for
  /// exchanges that do not pass through the socket: ExchangeBoard's).
  bool interrupted(Error &error);

private:
  Bootstrap() = default;
  /// Guards socket_'s close against interrupt()'s shutdown of it, and
  /// interrupted_ (set once; isInterrupted_ says so without the lock).
  std::mutex socketMutex_;
  std::string interrupted_;
  bool inFlight_ = false; // an exchange is waiting on the socket
  size_t leftBytes_ = 0;  // the leaving blob's size, where interrupt() sent it
  std::atomic<bool> isInterrupted_{false};
  int socket_ = -1, rank_ = 0, ranks_ = 0;
  uint64_t timeoutMs_ = 0;
  std::string root_; // address:port, for errors
  /// Why the job failed (the first failure closed the socket), repeated
  /// by every later exchange.
  std::string failure_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_BOOTSTRAP_H
