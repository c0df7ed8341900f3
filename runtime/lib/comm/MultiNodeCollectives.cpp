//===- MultiNodeCollectives.cpp - a multi-node communicator's calls ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// MultiNodeComm's collectives, reductions, all-to-allv and point-to-point
// (the built-in hierarchical schedules loaded and launched by
// MultiNode.cpp; point-to-point through the node's communicator and the
// transport).
//
//===----------------------------------------------------------------------===//

#include "comm/Collectives.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/MultiNode.h"

#include <string>
#include <vector>

using namespace sdma::rt;

bool MultiNodeComm::builtin(const std::string &name,
                            std::vector<void *> buffers, size_t chunkBytes,
                            void *stream, Error &error,
                            const Arithmetic *arithmetic, int root) {
  const Schedule *schedule = builtinWithScratch(
      name, buffers, chunkBytes, stream, error, arithmetic, root);
  // A premulsum's scalar rides where a row size would (SdmaTable::rowBytes).
  size_t row = arithmetic && arithmetic->op == ReduceOp::PreMulSum
                   ? arithmetic->scalar
                   : 0;
  return schedule &&
         launch(*schedule, buffers, chunkBytes, stream, error, nullptr, row);
}

bool MultiNodeComm::allToAllv(const void *send, const int64_t *sendCounts,
                              void *recv, int64_t *recvCounts, size_t capacity,
                              size_t rowBytes, void *stream, Error &error) {
  auto chunk = checkedMul(capacity, rowBytes);
  auto total = chunk ? checkedMul(*chunk, uint64_t(ranks())) : std::nullopt;
  if (!total || capacity == 0 || rowBytes == 0)
    return error.fail(ErrorKind::InvalidArgument,
                      "AlltoAllv on a multi-node communicator: a capacity of " +
                          std::to_string(capacity) + " rows of " +
                          std::to_string(rowBytes) +
                          " bytes (both positive, and R slots of them must "
                          "fit 64 bits)");
  if (!sendCounts)
    return error.fail(ErrorKind::InvalidArgument,
                      "AlltoAllv on a multi-node communicator: the send "
                      "count table is null");
  if (overlap(send, *total, recv, *total))
    return error.fail(ErrorKind::InvalidArgument,
                      "AlltoAllv on a multi-node communicator: the send and "
                      "receive buffers overlap (in place is not supported)");
  std::vector<void *> buffers{const_cast<void *>(send), recv};
  const Schedule *schedule =
      builtinWithScratch("all_to_allv", buffers, *chunk, stream, error);
  if (!schedule)
    return false;
  // The caller's count tables in and out of the schedule's, which live in
  // the node's symmetric memory (the node phases read peers' entries).
  const Collective &c = *schedule->plan.collective;
  size_t tableBytes = size_t(ranks()) * sizeof(int64_t);
  return node_->copy(buffers[c.sendCounts], sendCounts, tableBytes, stream,
                     error) &&
         launch(*schedule, buffers, *chunk, stream, error, nullptr, rowBytes) &&
         (!recvCounts || node_->copy(recvCounts, buffers[c.recvCounts],
                                     tableBytes, stream, error));
}

bool MultiNodeComm::sendRecv(const std::vector<PeerOp> &ops, void *stream,
                             Error &error) {
  if (hasFailed_)
    return error.fail(failed_.kind, "the multi-node communicator failed "
                                    "earlier: " +
                                        failed_.message);
  std::vector<PeerOp> local;
  std::vector<TransportOp> remote;
  for (const PeerOp &op : ops) {
    if (op.peer < 0 || op.peer >= ranks())
      return error.fail(ErrorKind::InvalidArgument,
                        std::string(op.send ? "a send to" : "a receive from") +
                            " rank " + std::to_string(op.peer) +
                            ", not a rank of the job (0.." +
                            std::to_string(ranks() - 1) + ")");
    if (op.bytes && !op.buffer)
      return error.fail(ErrorKind::InvalidArgument,
                        std::string(op.send ? "a send" : "a receive") + " of " +
                            std::to_string(op.bytes) +
                            " bytes from a null buffer");
    if (op.peer / localRanks() == node()) {
      PeerOp mine = op;
      mine.peer = op.peer % localRanks(); // the node's numbering
      local.push_back(mine);
    } else if (op.bytes) {
      remote.push_back({op.send, op.peer, op.buffer, op.bytes});
    }
  }
  // The node's part first: every rank launches it before it blocks in the
  // transport, so neither part waits on a rank stuck in the other.
  if (!local.empty() && !node_->sendRecv(local, stream, error))
    return error.context("point-to-point within node " +
                         std::to_string(node()));
  if (remote.empty())
    return true;
  bool ok = !transport_.deviceMemory() && node_->deviceName() != "cpu"
                ? staged(std::move(remote), stream, error)
                : transport_.exchange(remote, stream, error);
  if (!ok) {
    error.message = "point-to-point across nodes on rank " +
                    std::to_string(rank()) + ": " + error.message;
    failed_ = error;
    hasFailed_ = true;
  }
  return ok;
}

/// A rooted call's root is a rank of the job.
static bool rootInRange(const std::string &call, int root, int ranks,
                        Error &error) {
  if (root >= 0 && root < ranks)
    return true;
  return error.fail(ErrorKind::InvalidArgument,
                    call + ": root " + std::to_string(root) +
                        " is not a rank of " + std::to_string(ranks));
}

bool MultiNodeComm::collective(CommOp op, const void *send, void *recv,
                               size_t count, DataType type, int root,
                               void *stream, Error &error) {
  auto bytes = checkedMul(count, dataTypeBytes(type));
  if (!bytes || dataTypeBytes(type) == 0)
    return error.fail(ErrorKind::InvalidArgument,
                      std::string(commOpName(op)) + ": a bad count or type");
  if (*bytes == 0)
    return true; // as NCCL: nothing to move
  std::vector<void *> buffers{const_cast<void *>(send), recv};
  if (op == CommOp::AllGather)
    return builtin("all_gather", buffers, *bytes, stream, error);
  auto total = checkedMul(*bytes, static_cast<uint64_t>(ranks()));
  if (op == CommOp::AlltoAll && total && overlap(send, *total, recv, *total))
    // Within a node, a rank's chunk lands in its peer's output while the
    // peer still reads that chunk of its input.
    return error.fail(ErrorKind::InvalidArgument,
                      "AlltoAll on a multi-node communicator: the send and "
                      "receive buffers overlap (in place is not supported)");
  if (op == CommOp::AlltoAll)
    return builtin("all_to_all", buffers, *bytes, stream, error);
  if (op == CommOp::Broadcast || op == CommOp::Scatter ||
      op == CommOp::Gather) {
    if (!rootInRange(commOpName(op), root, ranks(), error))
      return false;
    // A broadcast's input matters on the root only (NULL elsewhere, as
    // NCCL's); the root's own buffers are the same or apart, since its
    // node phase copies its input to its output while peers still read it.
    if (op == CommOp::Broadcast && !send && rank() != root)
      buffers[0] = recv;
    if (op == CommOp::Broadcast && rank() == root && send != recv &&
        overlap(send, *bytes, recv, *bytes))
      return error.fail(ErrorKind::InvalidArgument,
                        "Broadcast on a multi-node communicator: the root's "
                        "send and receive buffers overlap without being the "
                        "same");
    const char *name = op == CommOp::Broadcast ? "broadcast"
                       : op == CommOp::Scatter ? "scatter"
                                               : "gather";
    return builtin(name, buffers, *bytes, stream, error, nullptr, root);
  }
  return error.fail(ErrorKind::InvalidUsage,
                    std::string(commOpName(op)) +
                        " is not built for a multi-node communicator yet "
                        "(all-gather, all-to-all, all-to-allv with capacity "
                        "slots, broadcast, scatter, gather, all-reduce, "
                        "reduce-scatter and reduce are)");
}

bool MultiNodeComm::reduce(CommReduction kind, const void *send, void *recv,
                           size_t count, const Arithmetic &arithmetic, int root,
                           void *stream, Error &error) {
  const DataType type = arithmetic.type;
  const ReduceOp op = arithmetic.op;
  std::string name = commReductionName(kind);
  if (kind == CommReduction::Reduce && !rootInRange(name, root, ranks(), error))
    return false;
  // (Avg and premulsum: phaseArithmetic.)
  if (dataTypeBytes(type) == 0 || !reduceOpName(op))
    return error.fail(ErrorKind::InvalidArgument,
                      name + ": a bad type or operator");
  if (count == 0)
    return true;
  size_t chunk = count; // reduce-scatter: each rank's share
  if (kind == CommReduction::AllReduce) {
    if (count % ranks() != 0)
      return error.fail(ErrorKind::InvalidArgument,
                        name + " of " + std::to_string(count) +
                            " elements on a multi-node communicator: the "
                            "count must divide by the " +
                            std::to_string(ranks()) + " ranks");
    chunk = count / ranks();
  }
  auto bytes = checkedMul(chunk, dataTypeBytes(type));
  if (!bytes)
    return error.fail(ErrorKind::InvalidArgument, name + ": count overflows");
  // A reduce's output matters on the root only (NCCL's recvbuff may be
  // null elsewhere): the schedule never touches another rank's.
  if (kind == CommReduction::Reduce && !recv && rank() != root)
    recv = const_cast<void *>(send);
  std::vector<void *> buffers{const_cast<void *>(send), recv};
  bool f32Sum = type == DataType::Float32 && op == ReduceOp::Sum;
  const char *schedule = kind == CommReduction::AllReduce ? "all_reduce"
                         : kind == CommReduction::ReduceScatter
                             ? "reduce_scatter"
                             : "reduce";
  return builtin(schedule, buffers, *bytes, stream, error,
                 f32Sum ? nullptr : &arithmetic,
                 kind == CommReduction::Reduce ? root : -1);
}
