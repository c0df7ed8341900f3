//===- PointToPoint.h - sends and receives between two ranks ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// NCCL's ncclSend/ncclRecv on the communicator. Unlike a schedule, which
// every rank runs, a send involves its two peers only: no agreement, no
// job barrier. Each rank's heap holds, after the control area, a
// point-to-point area: per sender a ring of kP2pDepth chunks with their
// tags and a `posted` counter, and per receiver a `consumed` counter
// (P2pKernel.hip draws the protocol). The counters only grow: each rank
// keeps, per peer, the chunks it has sent and received over the
// communicator's life, so a message starts where the pair's last ended
// and no call resets anything.
//
// A group's operations (ncclGroupStart/End) run as few launches of one
// kernel, an operation per block; every operation of a launch runs at
// once. Launch order makes any group that NCCL completes complete here:
// the k-th operation of a rank with a given peer and direction goes to
// level (k, peer / 16), which is where its match on the peer is too (the
// peer's k-th operation with this rank in the other direction, at
// (k, rank / 16)), and levels run in order, 32 operations at most each.
// Were some rank stuck, take the stuck rank X at the least level (k, b):
// it waits on a peer Y (b = Y / 16) that has not reached (k, X / 16), so Y
// is stuck at some (k, j), j >= b; Y waits on a rank Z that has not reached
// (k, Y / 16) <= (k, b): stuck below X's level, a contradiction.
//
//   rank 0: send 1 | recv 2        rank 1: recv 0 | send 2
//   rank 2: send 0 | recv 1        one launch each: a ring completes
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_POINTTOPOINT_H
#define SDMA_RUNTIME_LIB_COMM_POINTTOPOINT_H

#include "comm/CommDevice.h"
#include "comm/SymmetricHeap.h"

namespace sdma::rt {

/// Operations per launch (P2pKernel.hip's SDMA_P2P_MAX_OPS) and the peers
/// a level spans (a send and a receive each).
constexpr int kP2pMaxOps = 32;
constexpr int kP2pPeersPerLevel = kP2pMaxOps / 2;
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

/// A group's launches: operation indices per launch, in order, and where
/// each operation starts in its pair's chunk numbering.
struct P2pLaunchPlan {
  std::vector<std::vector<int>> launches;
  std::vector<uint64_t> base;
};

/// Chunks a message of `bytes` takes (one for an empty message).
uint64_t p2pChunks(uint64_t bytes, uint64_t chunkBytes);

/// Plans `ops` (already checked) and advances the per-peer chunk counters
/// `sent` and `received` past them. Pure.
P2pLaunchPlan planPointToPoint(const std::vector<P2pOp> &ops,
                               uint64_t chunkBytes, std::vector<uint64_t> &sent,
                               std::vector<uint64_t> &received);

/// Where each part of a rank's point-to-point area is, from its start.
struct P2pArea {
  int ranks = 1;
  uint64_t chunkBytes = 0;
  size_t posted(int sender) const { return size_t(sender) * 64; }
  size_t consumed(int receiver) const { return size_t(ranks + receiver) * 64; }
  size_t tags(int sender) const {
    return size_t(2 * ranks) * 64 + size_t(sender) * kP2pDepth * 8;
  }
  size_t error() const {
    return (tags(ranks) + 63) / 64 * 64; // kRecordWords words
  }
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
  /// overlaps another operation's buffer: refused, nothing changed), then
  /// enqueues them on `stream`.
  bool run(const std::vector<P2pOp> &ops, void *stream, Error &error);
  /// False, with the first failure a launch recorded, once one has.
  bool healthy(Error &error);

private:
  bool check(const std::vector<P2pOp> &ops, Error &error) const;
  void table(const std::vector<P2pOp> &ops, const std::vector<int> &launch,
             const std::vector<uint64_t> &base,
             std::vector<uint64_t> &words) const;
  Error recorded() const;

  int rank_, ranks_;
  const CommOptions &options_;
  CommDevice &device_;
  SymmetricHeap &heap_;
  size_t areaOffset_;
  P2pArea area_;
  std::unique_ptr<CommKernel> kernel_;
  std::vector<uint64_t> sent_, received_;
  Error failed_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_POINTTOPOINT_H
