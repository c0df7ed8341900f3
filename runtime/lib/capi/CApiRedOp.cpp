//===- CApiRedOp.cpp - the operators a communicator makes -----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdmaRedOpCreatePreMulSum and sdmaRedOpDestroy (NCCL's
// ncclRedOpCreatePreMulSum and ncclRedOpDestroy): operator sdmaNumOps + i
// of a communicator is its entry i, the element type and the scalar's bits,
// resolved by every reduction call (resolveRedOp).
//
//===----------------------------------------------------------------------===//

#include "CApiCommon.h"

#include <cstring>

using namespace sdma::capi;
using sdma::rt::Arithmetic;
using sdma::rt::DataType;
using sdma::rt::ReduceOp;

namespace {
/// Bytes of one element of `type` (a valid sdmaDataType_t).
size_t elementBytes(sdmaDataType_t type) {
  return sdma::rt::dataTypeBytes(static_cast<DataType>(type));
}

/// The slot of operator `op` among those `comm` made, or null where it is
/// not one (a built-in, out of range, destroyed). Under comm->opsMutex.
std::optional<Arithmetic> *madeOp(sdmaComm *comm, sdmaRedOp_t op) {
  if (op < sdmaNumOps || size_t(op) - sdmaNumOps >= comm->ops.size())
    return nullptr;
  std::optional<Arithmetic> &slot = comm->ops[size_t(op) - sdmaNumOps];
  return slot ? &slot : nullptr;
}
} // namespace

bool sdma::capi::resolveRedOp(sdmaComm *comm, sdmaDataType_t type,
                              sdmaRedOp_t op, Arithmetic &arithmetic,
                              std::string &why) {
  if (op >= 0 && op < sdmaNumOps) {
    arithmetic =
        Arithmetic{static_cast<DataType>(type), static_cast<ReduceOp>(op)};
    return true;
  }
  std::lock_guard<std::mutex> lock(comm->opsMutex);
  std::optional<Arithmetic> *made = madeOp(comm, op);
  if (!made) {
    why = "invalid reduction operator " + std::to_string(op) +
          " (sdmaSum, sdmaProd, sdmaMax, sdmaMin, sdmaAvg, or one "
          "sdmaRedOpCreatePreMulSum made on this communicator and not "
          "destroyed)";
    return false;
  }
  if ((*made)->type != static_cast<DataType>(type)) {
    why = "reduction operator " + std::to_string(op) + " was made for " +
          sdma::rt::dataTypeName((*made)->type) + ", not for the call's " +
          sdma::rt::dataTypeName(static_cast<DataType>(type));
    return false;
  }
  arithmetic = **made;
  return true;
}

extern "C" {

sdmaResult_t sdmaRedOpCreatePreMulSum(sdmaRedOp_t *op, void *scalar,
                                      sdmaDataType_t datatype,
                                      sdmaScalarResidence_t residence,
                                      sdmaComm_t comm) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  const std::string name = "sdmaRedOpCreatePreMulSum";
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, name + ": comm is NULL");
  if (!op || !scalar)
    return fail(comm, sdmaInvalidArgument,
                name + ": op and scalar must not be NULL");
  if (datatype < 0 || datatype >= sdmaNumTypes)
    return fail(comm, sdmaInvalidArgument,
                name + ": invalid datatype " + std::to_string(datatype));
  if (residence != sdmaScalarDevice && residence != sdmaScalarHostImmediate)
    return fail(comm, sdmaInvalidArgument,
                name + ": invalid scalar residence " +
                    std::to_string(residence));
  return guarded(comm, [&] {
    Arithmetic arithmetic{static_cast<DataType>(datatype), ReduceOp::PreMulSum};
    // A scalar in device memory: its address, read by each call's kernel
    // (as NCCL's, the value when the call runs); else its value now.
    arithmetic.deviceScalar = residence == sdmaScalarDevice;
    if (arithmetic.deviceScalar)
      arithmetic.scalar = reinterpret_cast<uint64_t>(scalar);
    else
      std::memcpy(&arithmetic.scalar, scalar, elementBytes(datatype));
    std::lock_guard<std::mutex> lock(comm->opsMutex);
    size_t index = 0;
    while (index < comm->ops.size() && comm->ops[index])
      ++index;
    if (index >= size_t(sdmaMaxRedOp - sdmaNumOps))
      return fail(comm, sdmaInvalidUsage,
                  name + ": too many operators on this communicator");
    if (index == comm->ops.size())
      comm->ops.emplace_back();
    comm->ops[index] = arithmetic;
    *op = static_cast<sdmaRedOp_t>(sdmaNumOps + index);
    return sdmaSuccess;
  });
}

sdmaResult_t sdmaRedOpDestroy(sdmaRedOp_t op, sdmaComm_t comm) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "sdmaRedOpDestroy: comm is NULL");
  std::lock_guard<std::mutex> lock(comm->opsMutex);
  std::optional<Arithmetic> *made = madeOp(comm, op);
  if (!made)
    return fail(comm, sdmaInvalidArgument,
                "sdmaRedOpDestroy: " + std::to_string(op) +
                    " is not an operator sdmaRedOpCreatePreMulSum made on "
                    "this communicator");
  made->reset();
  return sdmaSuccess;
}

} // extern "C"
