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

P2pLaunchPlan sdma::rt::planPointToPoint(const std::vector<P2pOp> &ops,
                                         uint64_t chunkBytes,
                                         std::vector<uint64_t> &sent,
                                         std::vector<uint64_t> &received) {
  P2pLaunchPlan plan;
  plan.base.resize(ops.size());
  // (k, peer block) -> the level's operations, in the group's order.
  std::map<std::pair<size_t, int>, std::vector<int>> levels;
  std::map<std::pair<int, bool>, size_t> seen; // (peer, send) -> k
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2pOp &op = ops[i];
    size_t k = seen[{op.peer, op.send}]++;
    levels[{k, op.peer / kP2pPeersPerLevel}].push_back(int(i));
    uint64_t &counter = op.send ? sent[op.peer] : received[op.peer];
    plan.base[i] = counter;
    counter += p2pChunks(op.bytes, chunkBytes);
  }
  for (auto &level : levels)
    plan.launches.push_back(std::move(level.second));
  return plan;
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
                         const std::vector<int> &launch,
                         const std::vector<uint64_t> &base,
                         std::vector<uint64_t> &t) const {
  const Region &heap = heap_.region(0);
  auto at = [&](int rank, size_t offset) {
    return reinterpret_cast<uint64_t>(heap.peer[rank] + areaOffset_ + offset);
  };
  t.assign(kP2pTableWords, 0);
  for (size_t slot = 0; slot < launch.size(); ++slot) {
    const P2pOp &op = ops[launch[slot]];
    // The ring, its tags and `posted` are the receiver's; `consumed` is
    // the sender's.
    int sender = op.send ? rank_ : op.peer,
        receiver = op.send ? op.peer : rank_;
    uint64_t *w = t.data() + slot * kP2pOpWords;
    w[0] = reinterpret_cast<uint64_t>(op.buffer);
    w[1] = at(receiver, area_.ring(sender));
    w[2] = at(receiver, area_.posted(sender));
    w[3] = at(sender, area_.consumed(receiver));
    w[4] = at(receiver, area_.tags(sender));
    w[5] = op.bytes;
    w[6] = base[launch[slot]];
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
  uint64_t status = r[0];
  if (!status)
    return error;
  std::string rank = "rank " + std::to_string(r[1]);
  std::string peer = std::to_string(r[2]);
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
  P2pLaunchPlan plan =
      planPointToPoint(ops, area_.chunkBytes, sent_, received_);
  for (const std::vector<int> &launchOps : plan.launches) {
    KernelLaunch launch;
    table(ops, launchOps, plan.base, launch.table);
    launch.blocks = int(launchOps.size());
    launch.programRank = rank_;
    launch.stream = stream;
    std::string why;
    if (!kernel_->launch(launch, why)) {
      // The pair counters moved past operations that did not all run: the
      // communicator cannot go on.
      failed_ = recorded();
      if (failed_.empty())
        failed_.fail(options_.device == "cpu" ? ErrorKind::System
                                              : ErrorKind::Device,
                     "a point-to-point launch failed: " + why);
      error = failed_;
      return false;
    }
  }
  // The CPU device ran them: a failure is known now.
  return options_.device != "cpu" || healthy(error);
}
