//===- Collectives.cpp - a collective call as a schedule call -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/Collectives.h"

#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Limits.h"

using namespace sdma::rt;

size_t sdma::rt::dataTypeBytes(DataType type) {
  switch (type) {
  case DataType::Int8:
  case DataType::Uint8:
    return 1;
  case DataType::Float16:
  case DataType::Bfloat16:
    return 2;
  case DataType::Int32:
  case DataType::Uint32:
  case DataType::Float32:
    return 4;
  case DataType::Int64:
  case DataType::Uint64:
  case DataType::Float64:
    return 8;
  }
  return 0;
}

const char *sdma::rt::dataTypeName(DataType type) {
  static const char *names[] = {"int8",    "uint8",   "int32",   "uint32",
                                "int64",   "uint64",  "float16", "float32",
                                "float64", "bfloat16"};
  int i = static_cast<int>(type);
  return i >= 0 && i < 10 ? names[i] : "invalid type";
}

const char *sdma::rt::commOpName(CommOp kind) {
  switch (kind) {
  case CommOp::AllGather:
    return "AllGather";
  case CommOp::AlltoAll:
    return "AlltoAll";
  case CommOp::Broadcast:
    return "Broadcast";
  case CommOp::Scatter:
    return "Scatter";
  case CommOp::Gather:
    return "Gather";
  }
  return "?";
}

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
  case ReduceOp::Avg:
    return "avg";
  case ReduceOp::PreMulSum:
    return "premulsum";
  }
  return nullptr;
}

std::string sdma::rt::arithmeticOpName(const Arithmetic &arithmetic) {
  const char *op = reduceOpName(arithmetic.op);
  return std::string(op ? op : "invalid-op") +
         (arithmetic.op == ReduceOp::PreMulSum && arithmetic.deviceScalar
              ? "_device"
              : "");
}

std::string sdma::rt::arithmeticName(const Arithmetic &arithmetic) {
  return std::string(dataTypeName(arithmetic.type)) + " " +
         arithmeticOpName(arithmetic) +
         (arithmetic.partOf > 0 ? "/" + std::to_string(arithmetic.partOf) : "");
}

namespace {
/// Whether `bits` is 1 in `type`.
bool isOne(DataType type, uint64_t bits) {
  switch (type) {
  case DataType::Float32:
    return bits == 0x3f800000u;
  case DataType::Float16:
    return bits == 0x3c00u;
  case DataType::Bfloat16:
    return bits == 0x3f80u;
  case DataType::Float64:
    return bits == 0x3ff0000000000000ull;
  default:
    return bits == 1;
  }
}
} // namespace

bool sdma::rt::overlap(const void *a, uint64_t aBytes, const void *b,
                       uint64_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a && b && x < y + bBytes && y < x + aBytes;
}

namespace {

const char *at(const void *base, uint64_t offset) {
  return static_cast<const char *>(base) + offset;
}

/// The chunk (`count` elements of `type`) and `ranks` chunks in bytes.
bool sizes(size_t count, DataType type, int ranks, uint64_t &chunk,
           uint64_t &all, Error &error) {
  size_t bytes = dataTypeBytes(type);
  if (!bytes)
    return error.fail(ErrorKind::InvalidArgument,
                      "invalid data type " +
                          std::to_string(static_cast<int>(type)));
  std::optional<uint64_t> c = checkedMul(count, bytes);
  std::optional<uint64_t> a = c ? checkedMul(*c, uint64_t(ranks)) : c;
  if (!a)
    return error.fail(ErrorKind::InvalidArgument,
                      std::to_string(count) + " elements of " +
                          dataTypeName(type) + " (times " +
                          std::to_string(ranks) +
                          " ranks) do not fit 64 bits of bytes");
  chunk = *c;
  all = *a;
  return true;
}

bool checkRoot(bool rooted, int &root, int ranks, Error &error) {
  if (!rooted) {
    root = 0;
    return true;
  }
  if (root < 0 || root >= ranks)
    return error.fail(ErrorKind::InvalidArgument,
                      "root " + std::to_string(root) + " is not a rank (0.." +
                          std::to_string(ranks - 1) + ")");
  return true;
}

bool refuseNull(const char *which, Error &error) {
  return error.fail(ErrorKind::InvalidArgument,
                    std::string(which) + " must not be null");
}
bool refuseOverlap(const char *inPlace, Error &error) {
  return error.fail(ErrorKind::InvalidArgument,
                    std::string("the send and receive buffers overlap "
                                "partially (in place means ") +
                        inPlace + ")");
}
} // namespace

bool sdma::rt::planCollective(CommOp kind, const void *send, void *recv,
                              size_t count, DataType type, int root,
                              const CommShape &shape, CollectivePlan &plan,
                              Error &error) {
  uint64_t chunk = 0, all = 0;
  bool rooted = kind == CommOp::Broadcast || kind == CommOp::Scatter ||
                kind == CommOp::Gather;
  // The call as every rank makes it, set first: a rank that refuses its
  // arguments still agrees on (or refuses) this.
  plan.call.signature = std::string(commOpName(kind)) + " count " +
                        std::to_string(count) + " " + dataTypeName(type) +
                        " root " + std::to_string(rooted ? root : 0);
  if (!sizes(count, type, shape.ranks, chunk, all, error) ||
      !checkRoot(rooted, root, shape.ranks, error))
    return false;
  plan.root = root;
  bool isRoot = shape.rank == root;
  Call &call = plan.call;
  call.buffers = {send, recv};
  call.chunkBytes = chunk;
  // Every rank needs what it receives into; the root or every rank what
  // it sends from.
  bool sendEverywhere = kind == CommOp::AllGather || kind == CommOp::AlltoAll ||
                        kind == CommOp::Gather;
  bool recvEverywhere = kind != CommOp::Gather;
  if (count && !send && (sendEverywhere || isRoot))
    return refuseNull("the send buffer", error);
  if (count && !recv && (recvEverywhere || isRoot))
    return refuseNull("the receive buffer", error);
  switch (kind) {
  case CommOp::AllGather:
    plan.schedule = "all_gather_direct";
    // In place (NCCL: sendbuff == recvbuff + rank * count): each rank's
    // input is its own slot of its output, a different offset per rank.
    if (send == at(recv, shape.rank * chunk)) {
      call.buffers = {recv, recv};
      call.stride = {chunk, 0};
    } else if (overlap(send, chunk, recv, all)) {
      return refuseOverlap("sendbuff == recvbuff + rank * sendcount", error);
    }
    break;
  case CommOp::AlltoAll:
    plan.schedule = send == recv ? "all_to_all_swap" : "all_to_all_direct";
    if (send == recv)
      call.buffers = {recv};
    else if (overlap(send, all, recv, all))
      return refuseOverlap("the same pointer", error);
    break;
  case CommOp::Broadcast:
    plan.schedule = "broadcast";
    if (isRoot && send != recv && overlap(send, chunk, recv, chunk))
      return refuseOverlap("the same pointer", error);
    break;
  case CommOp::Scatter:
    plan.schedule = "scatter";
    if (isRoot && recv != at(send, root * chunk) &&
        overlap(send, all, recv, chunk))
      return refuseOverlap("recvbuff == sendbuff + root * recvcount", error);
    break;
  case CommOp::Gather:
    plan.schedule = "gather";
    if (isRoot && send != at(recv, root * chunk) &&
        overlap(send, chunk, recv, all))
      return refuseOverlap("sendbuff == recvbuff + root * sendcount", error);
    break;
  }
  plan.nothing = count == 0; // as NCCL: nothing to move
  return true;
}

bool sdma::rt::planReduction(CommReduction kind, const void *send, void *recv,
                             size_t count, const Arithmetic &arithmetic,
                             int root, const CommShape &shape,
                             CollectivePlan &plan, Error &error) {
  uint64_t chunk = 0, input = 0;
  bool rooted = kind == CommReduction::Reduce;
  const DataType type = arithmetic.type;
  const ReduceOp op = arithmetic.op;
  plan.call.signature = std::string(commReductionName(kind)) + " count " +
                        std::to_string(count) + " " +
                        arithmeticName(arithmetic) + " root " +
                        std::to_string(rooted ? root : 0);
  if (!sizes(count, type, shape.ranks, chunk, input, error))
    return false;
  if (!reduceOpName(op))
    return error.fail(ErrorKind::InvalidArgument,
                      "invalid reduction operator " +
                          std::to_string(static_cast<int>(op)) +
                          " (sum 0, prod 1, max 2, min 3, avg 4, premulsum 5)");
  if (!checkRoot(rooted, root, shape.ranks, error))
    return false;
  plan.root = root;
  plan.arithmetic = arithmetic;
  bool ownsRecv = !rooted || shape.rank == root;
  if (count && (!send || (ownsRecv && !recv)))
    return error.fail(
        ErrorKind::InvalidArgument,
        std::string("the send and receive buffers must not be null") +
            (rooted ? " (the receive buffer on the root only)" : ""));
  Call &call = plan.call;
  call.buffers = {send, recv};
  call.chunkBytes = chunk;
  // A premulsum's kernel takes this rank's scalar where a copyv takes its
  // row size (SdmaTable::rowBytes; each rank may pass its own, as NCCL's).
  if (op == ReduceOp::PreMulSum)
    call.rowBytes = arithmetic.scalar;
  if (shape.ranks == 1) {
    // One rank: every reduction of one value is the value, bit for bit. The
    // schedules have nothing left to reduce at one rank, so it is a copy
    // (all_gather_direct, in place a no-op). PreMulSum's product has no
    // reduction to ride on there: served as the copy it is with a scalar of
    // 1 only.
    if (op == ReduceOp::PreMulSum && count &&
        (arithmetic.deviceScalar || !isOne(type, arithmetic.scalar)))
      return error.fail(ErrorKind::InvalidUsage,
                        std::string("a premulsum at one rank with ") +
                            (arithmetic.deviceScalar
                                 ? "a scalar in device memory"
                                 : "a scalar other than 1") +
                            " is not served: sdma multiplies by the scalar "
                            "as it reduces, and one rank reduces nothing");
    if (send != recv && overlap(send, chunk, recv, chunk))
      return refuseOverlap("the same pointer", error);
    plan.schedule = "all_gather_direct";
    plan.arithmetic.reset();
    if (send == recv) {
      call.buffers = {recv, recv};
      call.stride = {chunk, 0};
    }
    plan.nothing = count == 0;
    return true;
  }
  switch (kind) {
  case CommReduction::AllReduce: {
    bool inPlace = send == recv;
    if (!inPlace && overlap(send, chunk, recv, chunk))
      return refuseOverlap("the same pointer", error);
    bool divisible = count % size_t(shape.ranks) == 0;
    if (divisible && (inPlace || chunk >= shape.twoShotBytes)) {
      plan.schedule = "all_reduce_two_shot";
      call.chunkBytes = chunk / size_t(shape.ranks);
    } else if (inPlace) {
      plan.schedule = "all_reduce_in_place";
      plan.stageBytes = chunk;
      call.buffers = {recv, nullptr};
    } else {
      plan.schedule = "all_reduce_one_shot";
    }
    break;
  }
  case CommReduction::ReduceScatter:
    plan.schedule = "reduce_scatter_direct";
    if (recv == at(send, shape.rank * chunk)) {
      // In place: each rank's output is its own chunk of its input.
      call.buffers = {send, send};
      call.stride = {0, chunk};
    } else if (overlap(send, input, recv, chunk)) {
      return refuseOverlap("recvbuff == sendbuff + rank * recvcount", error);
    }
    break;
  case CommReduction::Reduce:
    plan.schedule = "reduce";
    if (send != recv && overlap(send, chunk, recv, chunk))
      return refuseOverlap("the same pointer", error);
    break;
  }
  plan.nothing = count == 0; // as NCCL: nothing to reduce
  return true;
}

bool sdma::rt::planAllToAllv(const void *send, const int64_t *sendCounts,
                             void *recv, int64_t *recvCounts, size_t capacity,
                             size_t rowBytes, AlltoAllvLayout layout,
                             const CommShape &shape, CollectivePlan &plan,
                             Error &error) {
  bool packed = layout == AlltoAllvLayout::Packed;
  plan.call.signature =
      std::string("AlltoAllv ") + (packed ? "packed" : "slots") + " capacity " +
      std::to_string(capacity) + " row " + std::to_string(rowBytes);
  if (!send || !recv || !sendCounts)
    return error.fail(ErrorKind::InvalidArgument,
                      "the send buffer, the receive buffer and the send "
                      "counts must not be null");
  std::optional<uint64_t> chunk = checkedMul(capacity, rowBytes);
  std::optional<uint64_t> total =
      chunk ? checkedMul(*chunk, uint64_t(shape.ranks)) : chunk;
  if (capacity == 0 || rowBytes == 0 || !total)
    return error.fail(ErrorKind::InvalidArgument,
                      "capacity " + std::to_string(capacity) + " rows of " +
                          std::to_string(rowBytes) +
                          " bytes: both must be positive and their product "
                          "times the rank count must fit 64 bits");
  // In place would let a peer's rows land where this rank still reads.
  if (overlap(send, *total, recv, *total))
    return error.fail(ErrorKind::InvalidArgument,
                      "the send and receive buffers overlap (in place is not "
                      "supported: a peer's rows would land where this rank "
                      "still reads)");
  plan.schedule = packed ? "all_to_allv_packed" : "all_to_allv_slots";
  Call &call = plan.call;
  call.buffers = {send, recv};
  call.chunkBytes = *chunk;
  call.rowBytes = rowBytes;
  call.sendCounts = sendCounts;
  call.recvCounts = recvCounts;
  return true;
}

bool sdma::rt::planAllToAllv2d(bool combine, const void *send,
                               const int64_t *inCounts, void *recv,
                               int64_t *outCounts, int experts, size_t capacity,
                               size_t rowBytes, int majorAlign,
                               const CommShape &shape, CollectivePlan &plan,
                               Error &error) {
  std::string what = combine ? "AlltoAllv2dOffset" : "AlltoAllv2d";
  if (combine)
    majorAlign = 1; // the offsets are the caller's
  std::string signature = what + " experts " + std::to_string(experts) +
                          " align " + std::to_string(majorAlign) +
                          " capacity " + std::to_string(capacity) + " row " +
                          std::to_string(rowBytes);
  plan.call.signature = signature;
  if (experts < 1 || experts > sdma::kMaxExperts)
    return error.fail(ErrorKind::InvalidArgument,
                      what + ": " + std::to_string(experts) +
                          " experts per rank is out of range [1, " +
                          std::to_string(sdma::kMaxExperts) + "]");
  if (majorAlign < 1 || majorAlign > (1 << 20))
    return error.fail(ErrorKind::InvalidArgument,
                      what + ": major alignment " + std::to_string(majorAlign) +
                          " is out of range [1, 1048576] rows");
  bool planned =
      planAllToAllv(send, inCounts, recv, outCounts, capacity, rowBytes,
                    AlltoAllvLayout::Packed, shape, plan, error);
  plan.call.signature = signature; // planAllToAllv wrote its own
  if (!planned)
    return false;
  plan.schedule = combine ? "all_to_allv_2d_offset" : "all_to_allv_2d";
  plan.experts = experts;
  plan.majorAlign = majorAlign;
  return true;
}
