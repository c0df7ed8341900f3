//===- PointToPoint.h - sends and receives between two ranks ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// NCCL's ncclSend/ncclRecv on the communicator. Unlike a schedule, which
// every rank runs, a send involves its two peers only: no agreement, no
// job barrier. Each rank's heap holds, after the control area, a
// point-to-point area: per sender a ring of kP2pDepth chunks with a full
// and a size word per entry, and per receiver the entries' free words
// (P2pKernel.hip draws the protocol). Chunks are numbered per ordered pair
// over the communicator's life (each rank counts, per peer, the chunks it
// has sent and received), and every entry's words only grow, so a message
// starts where the pair's last ended and no call resets anything.
//
// A group's operations (ncclGroupStart/End, or one alone) run as one
// launch of one kernel, an operation per block, every operation at once:
// what NCCL promises of a group. Operations of one pair in one group (or
// in launches on several streams) may run in any order: each chunk waits
// for exactly the entry state its predecessor leaves.
//
//   rank 0: send 1 | recv 2        rank 1: recv 0 | send 2
//   rank 2: send 0 | recv 1        one launch each: a ring completes
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_POINTTOPOINT_H
#define SDMA_RUNTIME_LIB_COMM_POINTTOPOINT_H

#include "comm/CoLaunch.h"
#include "comm/CommDevice.h"
#include "comm/SymmetricHeap.h"

#include <mutex>

namespace sdma::rt {

/// Operations per launch, a group's at most (P2pKernel.hip's
/// SDMA_P2P_MAX_OPS).
constexpr int kP2pMaxOps = 128;
/// Chunks in each sender's ring.
constexpr uint64_t kP2pDepth = 4;
/// The kernel's table: kP2pMaxOps operations of 8 words, then rank, chunk
/// bytes, depth, timeout, error, errorMirror.
constexpr size_t kP2pOpWords = 8;
constexpr size_t kP2pTableWords = kP2pMaxOps * kP2pOpWords + 6;

/// False, with why, unless `launch` is one of the point-to-point kernel's:
/// a table of kP2pTableWords words for 1 to kP2pMaxOps operations (what
/// every device checks before it launches).
bool checkP2pLaunch(const KernelLaunch &launch, std::string &error);

/// The point-to-point kernel's source (P2pKernel.hip), for every device.
const char *p2pKernelSource();

/// One send or receive (Communicator.h).
using P2pOp = PeerOp;

/// Chunks a message of `bytes` takes (one for an empty message).
uint64_t p2pChunks(uint64_t bytes, uint64_t chunkBytes);

/// Where each of `ops` starts in its pair's chunk numbering, advancing the
/// per-peer chunk counters `sent` and `received` past them (in the group's
/// order, which is how a pair's messages match). Pure.
std::vector<uint64_t> numberChunks(const std::vector<P2pOp> &ops,
                                   uint64_t chunkBytes,
                                   std::vector<uint64_t> &sent,
                                   std::vector<uint64_t> &received);

/// Where each part of a rank's point-to-point area is, from its start.
struct P2pArea {
  int ranks = 1;
  uint64_t chunkBytes = 0;
  static_assert(kP2pDepth * 8 <= 64, "a peer's words fit one cache line");
  /// A ring's full and size words (the receiver's, per sender), the free
  /// words of the rings this rank sends into (per receiver).
  size_t full(int sender) const { return size_t(sender) * 64; }
  size_t size(int sender) const { return size_t(ranks + sender) * 64; }
  size_t free(int receiver) const { return size_t(2 * ranks + receiver) * 64; }
  size_t error() const { return size_t(3 * ranks) * 64; } // kRecordWords
  size_t ring(int sender) const {
    return (error() + 64 + 255) / 256 * 256 +
           size_t(sender) * kP2pDepth * chunkBytes;
  }
  size_t bytes() const { return ring(ranks); }
};

class PointToPoint {
public:
  /// The area is at `areaOffset` of every rank's heap (region 0).
  PointToPoint(int rank, int ranks, const CommOptions &options,
               CommDevice &device, SymmetricHeap &heap, size_t areaOffset,
               uint64_t chunkBytes);

  /// Checks `ops` (a peer out of range, a null buffer, a receive that
  /// overlaps another operation's buffer, more than kP2pMaxOps: refused,
  /// nothing changed), then enqueues them on `stream` as one launch.
  bool run(const std::vector<P2pOp> &ops, void *stream, Error &error);
  /// False, with the first failure a launch recorded, once one has.
  bool healthy(Error &error);
  /// The ranks sharing this rank's GPU context (CoLaunch.h): each launch
  /// goes through their gate where the room is ordered, and its pair
  /// counts are noted there.
  void setCoLaunch(std::shared_ptr<CoLaunch> room) { room_ = std::move(room); }

private:
  bool check(const std::vector<P2pOp> &ops, Error &error) const;
  void table(const std::vector<P2pOp> &ops, const std::vector<uint64_t> &base,
             std::vector<uint64_t> &words) const;
  Error recorded() const;

  int rank_, ranks_;
  const CommOptions &options_;
  CommDevice &device_;
  SymmetricHeap &heap_;
  size_t areaOffset_;
  P2pArea area_;
  std::unique_ptr<CommKernel> kernel_;
  std::shared_ptr<CoLaunch> room_;
  std::vector<uint64_t> sent_, received_;
  /// The first failure, once seen (the watchdog's thread reads it too).
  std::mutex failedMutex_;
  Error failed_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_POINTTOPOINT_H
