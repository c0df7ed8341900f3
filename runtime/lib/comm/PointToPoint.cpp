//===- PointToPoint.cpp - sends and receives between two ranks ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/PointToPoint.h"

#include "comm/Collectives.h"

#include <map>
#include <tuple>

using namespace sdma::rt;

const char *sdma::rt::p2pKernelSource() {
  static constexpr const char *text =
#include "P2pKernel.hip.inc"
      ;
  return text;
}

bool sdma::rt::checkP2pLaunch(const KernelLaunch &launch, std::string &error) {
  if (launch.table.size() == kP2pTableWords && launch.blocks >= 1 &&
      launch.blocks <= kP2pMaxOps)
    return true;
  error = "internal: a point-to-point table of " +
          std::to_string(launch.table.size()) + " words for " +
          std::to_string(launch.blocks) + " operations";
  return false;
}

uint64_t sdma::rt::p2pChunks(uint64_t bytes, uint64_t chunkBytes) {
  return bytes ? (bytes - 1) / chunkBytes + 1 : 1;
}

std::vector<uint64_t> sdma::rt::numberChunks(const std::vector<P2pOp> &ops,
                                             uint64_t chunkBytes,
                                             std::vector<uint64_t> &sent,
                                             std::vector<uint64_t> &received) {
  std::vector<uint64_t> base(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    uint64_t &counter = ops[i].send ? sent[ops[i].peer] : received[ops[i].peer];
    base[i] = counter;
    counter += p2pChunks(ops[i].bytes, chunkBytes);
  }
  return base;
}

PointToPoint::PointToPoint(int rank, int ranks, const CommOptions &options,
                           CommDevice &device, SymmetricHeap &heap,
                           size_t areaOffset, uint64_t chunkBytes)
    : rank_(rank), ranks_(ranks), options_(options), device_(device),
      heap_(heap), areaOffset_(areaOffset), sent_(ranks, 0),
      received_(ranks, 0) {
  area_.ranks = ranks;
  area_.chunkBytes = chunkBytes;
}

bool PointToPoint::check(const std::vector<P2pOp> &ops, Error &error) const {
  if (ops.size() > size_t(kP2pMaxOps))
    return error.fail(ErrorKind::InvalidUsage,
                      "a group of " + std::to_string(ops.size()) +
                          " sends and receives; at most " +
                          std::to_string(kP2pMaxOps) +
                          " run together on one communicator");
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2pOp &op = ops[i];
    std::string what =
        std::string(op.send ? "the send to" : "the receive from") + " rank " +
        std::to_string(op.peer);
    if (op.peer < 0 || op.peer >= ranks_)
      return error.fail(ErrorKind::InvalidArgument,
                        "rank " + std::to_string(op.peer) +
                            " is not a peer of this communicator (ranks 0.." +
                            std::to_string(ranks_ - 1) + ")");
    if (op.bytes && !op.buffer)
      return error.fail(ErrorKind::InvalidArgument,
                        what + " has a null buffer for " +
                            std::to_string(op.bytes) + " bytes");
    std::string why;
    if (op.bytes && !device_.addressable(op.buffer, why))
      return error.fail(ErrorKind::InvalidArgument,
                        what + ": its buffer " + why);
    if (op.bytes &&
        reinterpret_cast<uintptr_t>(op.buffer) > UINTPTR_MAX - op.bytes)
      return error.fail(ErrorKind::InvalidArgument,
                        what + ": its " + std::to_string(op.bytes) +
                            " bytes wrap the address space");
    // A receive writes its buffer while the group's other operations read
    // or write theirs.
    for (size_t j = 0; j < i; ++j) {
      const P2pOp &other = ops[j];
      if ((op.send && other.send) ||
          !overlap(op.buffer, op.bytes, other.buffer, other.bytes))
        continue;
      return error.fail(ErrorKind::InvalidArgument,
                        what + " overlaps the buffer of operation " +
                            std::to_string(j) + " of the group (" +
                            (other.send ? "a send to" : "a receive from") +
                            " rank " + std::to_string(other.peer) +
                            "), and one of them writes it");
    }
  }
  return true;
}

void PointToPoint::table(const std::vector<P2pOp> &ops,
                         const std::vector<uint64_t> &base,
                         std::vector<uint64_t> &t) const {
  const Region &heap = heap_.region(0);
  auto at = [&](int rank, size_t offset) {
    return reinterpret_cast<uint64_t>(heap.peer[rank] + areaOffset_ + offset);
  };
  t.assign(kP2pTableWords, 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2pOp &op = ops[i];
    // The ring, its full and size words are the receiver's; its free
    // words the sender's.
    int sender = op.send ? rank_ : op.peer,
        receiver = op.send ? op.peer : rank_;
    uint64_t *w = t.data() + i * kP2pOpWords;
    w[0] = reinterpret_cast<uint64_t>(op.buffer);
    w[1] = at(receiver, area_.ring(sender));
    w[2] = at(receiver, area_.full(sender));
    w[3] = at(receiver, area_.size(sender));
    w[4] = at(sender, area_.free(receiver));
    w[5] = op.bytes;
    w[6] = base[i];
    w[7] = uint64_t(op.peer) * 2 + (op.send ? 1 : 0);
  }
  uint64_t *tail = t.data() + kP2pMaxOps * kP2pOpWords;
  tail[0] = uint64_t(rank_);
  tail[1] = area_.chunkBytes;
  tail[2] = kP2pDepth;
  tail[3] = options_.timeoutMs * 1000000ull;
  uint64_t record =
      device_.errorRecordDevice() + uint64_t(kP2pRecord) * kRecordWords * 8;
  // A GPU polls a word in its own memory and mirrors a failure to the
  // record the host reads; the CPU device polls the record itself.
  bool mirrored = device_.errorMirrored();
  tail[4] = mirrored ? at(rank_, area_.error()) : record;
  tail[5] = mirrored ? record : 0;
}

Error PointToPoint::recorded() const {
  Error error;
  const volatile unsigned long long *r =
      device_.errorRecord() + size_t(kP2pRecord) * kRecordWords;
  // The kernel writes the status last (P2pKernel.hip): read it first.
  uint64_t status = __atomic_load_n(&r[0], __ATOMIC_ACQUIRE);
  if (!status)
    return error;
  if (status == kAbortedStatus) {
    error.fail(ErrorKind::InvalidUsage,
               "the communicator was aborted (ncclCommAbort / "
               "sdmaCommAbort); its calls in flight stopped");
    return error;
  }
  std::string rank = "rank " + std::to_string(r[1]);
  std::string peer = std::to_string(r[2]);
  if (status == 2 && r[3]) {
    error.fail(ErrorKind::InvalidUsage,
               rank + "'s send to rank " + peer + " failed: rank " + peer +
                   " refused a message of it, its receive being of " +
                   std::to_string(r[5]) +
                   " bytes (ncclSend and ncclRecv must agree on the size)");
    return error;
  }
  if (status == 2) {
    error.fail(ErrorKind::InvalidUsage,
               rank + " received a message of " + std::to_string(r[5]) +
                   " bytes from rank " + peer + " where its receive was of " +
                   std::to_string(r[4]) +
                   " bytes (ncclSend and ncclRecv must agree on the size)");
    return error;
  }
  error.fail(ErrorKind::Remote,
             rank + " timed out after " + std::to_string(options_.timeoutMs) +
                 " ms " +
                 (r[3] ? "sending to rank " + peer +
                             ": it did not receive (no matching receive, "
                             "it exited, or it waits on something else)"
                       : "receiving from rank " + peer +
                             ": it did not send (no matching send, it "
                             "exited, or it waits on something else)"));
  return error;
}

bool PointToPoint::healthy(Error &error) {
  std::lock_guard<std::mutex> lock(failedMutex_);
  if (failed_.empty())
    failed_ = recorded();
  if (failed_.empty())
    return true;
  error = failed_;
  return false;
}

bool PointToPoint::run(const std::vector<P2pOp> &ops, void *stream,
                       Error &error) {
  if (!check(ops, error))
    return false;
  if (ops.empty())
    return true;
  if (!kernel_) {
    std::string why;
    kernel_ = device_.loadPointToPoint(why);
    if (!kernel_)
      return error.fail(options_.device == "cpu" ? ErrorKind::System
                                                 : ErrorKind::Device,
                        "loading the point-to-point kernel: " + why);
  }
  // A replayed graph would repeat the chunk numbers baked into the launch.
  bool capturing = false;
  std::string why;
  if (!device_.streamCapturing(stream, capturing, why))
    return error.fail(ErrorKind::Device, why);
  if (capturing)
    return error.fail(ErrorKind::InvalidUsage,
                      "sends and receives cannot be captured in a CUDA "
                      "graph yet (a replay would repeat their chunk "
                      "numbers): issue them outside the capture");
  // A co-launch room may refuse the launch: then the counts as they were.
  std::vector<uint64_t> sentBefore, receivedBefore;
  if (room_) {
    sentBefore = sent_;
    receivedBefore = received_;
  }
  std::vector<uint64_t> base =
      numberChunks(ops, area_.chunkBytes, sent_, received_);
  KernelLaunch launch;
  table(ops, base, launch.table);
  launch.blocks = int(ops.size());
  launch.programRank = rank_;
  launch.stream = stream;
  bool started;
  if (room_) {
    // Ranks sharing this GPU context: after what this rank's last launch
    // waits for is enqueued (an ordered room), and noted for their gate.
    auto stop = [this](Error &why) { return !healthy(why); };
    Error gated;
    CoLaunch::PeerStart how = room_->launchPeer(
        rank_, stream, kernel_->queuesOnStream(), sent_, received_, kP2pDepth,
        options_.timeoutMs,
        [&](std::string &failed) { return kernel_->launch(launch, failed); },
        gated, stop);
    if (how == CoLaunch::PeerStart::Refused) {
      // Nothing started: the pair counts as they were.
      sent_ = sentBefore;
      received_ = receivedBefore;
      error = gated;
      return false;
    }
    started = how == CoLaunch::PeerStart::Started;
    why = gated.message;
  } else {
    started = kernel_->launch(launch, why);
  }
  if (!started) {
    // The pair counters moved past operations that did not run: the
    // communicator cannot go on.
    std::lock_guard<std::mutex> lock(failedMutex_);
    failed_ = recorded();
    if (failed_.empty())
      failed_.fail(options_.device == "cpu" ? ErrorKind::System
                                            : ErrorKind::Device,
                   "a point-to-point launch failed: " + why);
    error = failed_;
    return false;
  }
  // The CPU device ran them: a failure is known now.
  return options_.device != "cpu" || healthy(error);
}
