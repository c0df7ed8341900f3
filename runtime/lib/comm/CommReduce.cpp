//===- CommReduce.cpp - all-reduce, reduce-scatter and reduce -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Communicator::reduce runs the built-in reduction schedules (schedules/):
//
//   AllReduce      all_reduce_one_shot   small messages: one step, every
//                                        rank reads every peer's message
//                  all_reduce_two_shot   from CommOptions::twoShotBytes when
//                                        the rank count divides the count,
//                                        and in place (it is race-free
//                                        there as written)
//                  all_reduce_in_place   in place otherwise: each rank
//                                        stages its value in a symmetric
//                                        scratch buffer first
//   ReduceScatter  reduce_scatter_direct (in place: recv == send + rank x
//                                        count, as NCCL)
//   Reduce         reduce, one program per root
//
// Each schedule is compiled once for f32 and sum; a call's element type and
// operator become the kernel's SDMA_REDUCE_TYPE and SDMA_REDUCE_OP (one
// kernel per schedule, root, type and operator, compiled on first use).
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Communicator.h"

using namespace sdma::rt;

namespace {
/// The dialect's name of each element type.
const char *typeName(DataType type) {
  switch (type) {
  case DataType::Float32:
    return "f32";
  case DataType::Float16:
    return "f16";
  case DataType::Bfloat16:
    return "bf16";
  case DataType::Int32:
    return "i32";
  case DataType::Int64:
    return "i64";
  case DataType::Uint32:
    return "ui32";
  case DataType::Uint64:
    return "ui64";
  case DataType::Float64:
    return "f64";
  case DataType::Int8:
    return "i8";
  case DataType::Uint8:
    return "ui8";
  }
  return "?";
}
} // namespace

const char *sdma::rt::commReductionName(CommReduction kind) {
  switch (kind) {
  case CommReduction::AllReduce:
    return "AllReduce";
  case CommReduction::ReduceScatter:
    return "ReduceScatter";
  case CommReduction::Reduce:
    return "Reduce";
  }
  return "?";
}

namespace {
bool overlap(const void *a, const void *b, uint64_t bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a && b && x < y + bytes && y < x + bytes;
}
} // namespace

const char *sdma::rt::reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Prod:
    return "prod";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  }
  return nullptr;
}

bool sdma::rt::setReduceArithmetic(LdstProgram &program, DataType type,
                                   ReduceOp op, std::string &error) {
  const char *name = reduceOpName(op);
  if (!program.setReduction(typeName(type), name ? name : "?", error)) {
    error = "internal: " + error;
    return false;
  }
  return true;
}

bool Communicator::stageBuffer(size_t bytes, void *&stage, std::string &error) {
  if (bytes <= stageBytes_) {
    stage = stage_;
    return true;
  }
  // Doubling: the stages outgrown stay allocated (a kernel still on a
  // stream may read one), at most as much again as the largest.
  size_t want = size_t(64) << 10;
  while (want < bytes)
    want *= 2;
  void *grown = nullptr;
  if (!memAlloc(want, grown, error)) {
    error =
        "in place, each rank stages its value in the symmetric heap: " + error;
    return false;
  }
  stage = stage_ = grown;
  stageBytes_ = want;
  return true;
}

bool Communicator::reduce(CommReduction kind, const void *send, void *recv,
                          size_t count, DataType type, ReduceOp op, int root,
                          void *stream, std::string &error) {
  size_t bytes = dataTypeBytes(type);
  if (!bytes) {
    error = "invalid data type " + std::to_string(static_cast<int>(type));
    return false;
  }
  if (!reduceOpName(op)) {
    error = "invalid reduction operator " +
            std::to_string(static_cast<int>(op)) +
            " (sum 0, prod 1, max 2, min 3)";
    return false;
  }
  bool rooted = kind == CommReduction::Reduce;
  if (rooted && (root < 0 || root >= ranks_)) {
    error = "root " + std::to_string(root) + " is not a rank (0.." +
            std::to_string(ranks_ - 1) + ")";
    return false;
  }
  if (!rooted)
    root = 0;
  if (count == 0)
    return true; // as NCCL: nothing to reduce
  std::optional<uint64_t> chunk = checkedMul(count, bytes);
  std::optional<uint64_t> input =
      chunk ? checkedMul(*chunk, uint64_t(ranks_)) : std::nullopt;
  if (!input) {
    error = std::to_string(count) + " elements of " + dataTypeName(type) +
            " do not fit 64 bits of bytes";
    return false;
  }
  bool ownsRecv = kind != CommReduction::Reduce || rank_ == root;
  if (!send || (ownsRecv && !recv)) {
    error = std::string("the send and receive buffers must not be null") +
            (rooted ? " (the receive buffer on the root only)" : "");
    return false;
  }
  std::string schedule;
  std::vector<const void *> buffers{send, recv};
  std::vector<size_t> stride;
  switch (kind) {
  case CommReduction::AllReduce: {
    bool inPlace = send == recv;
    if (!inPlace && overlap(send, recv, *chunk)) {
      error = "the send and receive buffers overlap partially (in place "
              "means the same pointer)";
      return false;
    }
    bool divisible = count % size_t(ranks_) == 0;
    if (divisible && (inPlace || *chunk >= options_.twoShotBytes)) {
      schedule = "all_reduce_two_shot";
      *chunk /= size_t(ranks_);
    } else if (inPlace) {
      schedule = "all_reduce_in_place";
      void *stage = nullptr;
      if (!stageBuffer(*chunk, stage, error))
        return false;
      buffers = {recv, stage};
    } else {
      schedule = "all_reduce_one_shot";
    }
    break;
  }
  case CommReduction::ReduceScatter:
    schedule = "reduce_scatter_direct";
    if (static_cast<const char *>(recv) ==
        static_cast<const char *>(send) + rank_ * *chunk) {
      // In place: each rank's output is its own chunk of its input.
      buffers = {send, send};
      stride = {0, *chunk};
    } else if (overlap(send, recv, *input)) {
      error = "the receive buffer overlaps the send buffer (in place means "
              "recvbuff == sendbuff + rank * recvcount)";
      return false;
    }
    break;
  case CommReduction::Reduce:
    schedule = "reduce";
    if (send != recv && overlap(send, recv, *chunk)) {
      error = "the send and receive buffers overlap partially (in place "
              "means the same pointer)";
      return false;
    }
    break;
  }
  Arithmetic arithmetic{type, op};
  int index = -1;
  if (!instanceFor(schedule, root, index, error, &arithmetic))
    return false;
  std::string signature = std::string(commReductionName(kind)) + " count " +
                          std::to_string(count) + " " + dataTypeName(type) +
                          " " + reduceOpName(op) + " root " +
                          std::to_string(root);
  return run(index, buffers, *chunk, stream, signature, error, stride);
}
