//===- NcclPreMulSumCases.cpp - ncclRedOpCreatePreMulSum on sdma ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-nccl-test's PreMulSum cases (torch's PREMUL_SUM, FSDP's gradient
// pre-division): an operator made from a host scalar, used by AllReduce
// (one-shot, two-shot, in place), ReduceScatter and Reduce at every root in
// float, double, int32 (negative scalar, wrapping), int8 (wrapping) and
// bfloat16, every element checked against the sum of every rank's input
// times the scalar (inputs chosen so that every product is exact), then a
// scalar whose products round (0.1), in ascending rank order. Then the
// refusals, each leaving the communicator usable: an operator used with
// another type, after its destruction, or destroyed twice; each rank with a
// scalar of its own; a scalar in device memory, changed between calls.
//
//===----------------------------------------------------------------------===//

#include "NcclTestSupport.h"

#include <cstdint>

namespace sdma::nccltest {
namespace {

/// The sum over ranks of element `i`, as every rank's input holds it.
int sumAt(size_t i) {
  int sum = 0;
  for (int r = 0; r < ranks; ++r)
    sum += value(r, i);
  return sum;
}

/// bfloat16 bits of a small integer or half-integer (exact).
uint16_t bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t(bits >> 16);
}

/// An operator of `type` with `scalar` (host memory), made or failed.
ncclRedOp_t make(ncclComm_t comm, const void *scalar, ncclDataType_t type,
                 const char *what) {
  ncclRedOp_t op = ncclSum;
  check(ncclRedOpCreatePreMulSum(&op, const_cast<void *>(scalar), type,
                                 ncclScalarHostImmediate, comm),
        ncclSuccess, what, comm);
  return op;
}

/// AllReduce out of place and in place, ReduceScatter, Reduce at every
/// root, each result element i compared with want(i) (in T's bits);
/// `toT` makes T's value of an int input.
template <typename T, typename ToT, typename Want>
void every(ncclComm_t comm, ncclDataType_t type, ncclRedOp_t op, size_t n,
           ToT toT, Want want, const std::string &name) {
  std::vector<T> in(n), out(n), expected(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = toT(value(rank, i));
    expected[i] = want(i);
  }
  check(ncclAllReduce(in.data(), out.data(), n, type, op, comm, nullptr),
        ncclSuccess, "ncclAllReduce premulsum " + name, comm);
  expect(out, expected, "AllReduce premulsum " + name);
  std::vector<T> inPlace = in;
  check(
      ncclAllReduce(inPlace.data(), inPlace.data(), n, type, op, comm, nullptr),
      ncclSuccess, "ncclAllReduce premulsum in place " + name, comm);
  expect(inPlace, expected, "AllReduce premulsum in place " + name);
  // ReduceScatter: this rank's block of n / ranks elements.
  size_t block = n / size_t(ranks);
  std::vector<T> mine(block), wantMine(block);
  for (size_t i = 0; i < block; ++i)
    wantMine[i] = expected[size_t(rank) * block + i];
  check(
      ncclReduceScatter(in.data(), mine.data(), block, type, op, comm, nullptr),
      ncclSuccess, "ncclReduceScatter premulsum " + name, comm);
  expect(mine, wantMine, "ReduceScatter premulsum " + name);
  for (int root = 0; root < ranks; ++root) {
    std::vector<T> got(n, toT(99));
    check(ncclReduce(in.data(), got.data(), n, type, op, root, comm, nullptr),
          ncclSuccess, "ncclReduce premulsum " + name, comm);
    if (rank == root)
      expect(got, expected, "Reduce premulsum " + name);
    else
      expect(got, std::vector<T>(n, toT(99)),
             "Reduce premulsum (non-root untouched) " + name);
  }
}

/// A scalar in device memory (ncclScalarDevice; host memory on the CPU
/// device, where alone this runs): read when each call runs, so the same
/// operator with the value changed gives the new result; each rank its own.
void deviceScalar(ncclComm_t comm) {
  const char *device = std::getenv("SDMA_DEVICE");
  if (!device || std::string(device) != "cpu")
    return;
  size_t n = size_t(ranks) * 5;
  static float scalar; // outlives every call that reads it
  ncclRedOp_t op = ncclSum;
  check(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarDevice,
                                 comm),
        ncclSuccess, "PreMulSum with a device scalar", comm);
  for (float base : {0.5f, 2.0f}) {
    scalar = base * float(rank + 1);
    std::vector<float> in = input<float>(rank, n), out(n), want(n);
    for (size_t i = 0; i < n; ++i) {
      want[i] = 0;
      for (int r = 0; r < ranks; ++r)
        want[i] += float(value(r, i)) * base * float(r + 1);
    }
    check(
        ncclAllReduce(in.data(), out.data(), n, ncclFloat32, op, comm, nullptr),
        ncclSuccess, "ncclAllReduce premulsum device scalar", comm);
    expect(out, want,
           "AllReduce premulsum device scalar " + std::to_string(base));
    std::vector<float> mine(n / size_t(ranks)), wantMine(mine.size());
    for (size_t i = 0; i < mine.size(); ++i)
      wantMine[i] = want[size_t(rank) * mine.size() + i];
    check(ncclReduceScatter(in.data(), mine.data(), mine.size(), ncclFloat32,
                            op, comm, nullptr),
          ncclSuccess, "ncclReduceScatter premulsum device scalar", comm);
    expect(mine, wantMine, "ReduceScatter premulsum device scalar");
  }
  check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
}

/// A scalar whose products round (0.1): every rank gets the bits of
/// adding the products in ascending rank order, each product rounded on
/// its own (no fused multiply-add), on every schedule: one-shot, two-shot
/// and in place (all_reduce_in_place: a count the rank count does not
/// divide).
void inexact(ncclComm_t comm) {
  const float tenth = 0.1f;
  ncclRedOp_t op = make(comm, &tenth, ncclFloat32, "PreMulSum 0.1");
  for (size_t n : {size_t(ranks) * 7 + 1, size_t(ranks) * 256}) {
    std::vector<float> want(n);
    for (size_t i = 0; i < n; ++i) {
      volatile float acc = float(value(0, i)) * tenth;
      for (int r = 1; r < ranks; ++r) {
        volatile float product = float(value(r, i)) * tenth;
        acc = acc + product;
      }
      want[i] = acc;
    }
    std::vector<float> in = input<float>(rank, n), out(n);
    check(
        ncclAllReduce(in.data(), out.data(), n, ncclFloat32, op, comm, nullptr),
        ncclSuccess, "ncclAllReduce premulsum 0.1", comm);
    expect(out, want, "AllReduce premulsum 0.1 count " + std::to_string(n));
    check(
        ncclAllReduce(in.data(), in.data(), n, ncclFloat32, op, comm, nullptr),
        ncclSuccess, "ncclAllReduce premulsum 0.1 in place", comm);
    expect(in, want,
           "AllReduce premulsum 0.1 in place count " + std::to_string(n));
  }
  check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
}

void refusals(ncclComm_t comm) {
  std::vector<float> a(8, 1.0f), b(8, 0.0f);
  float quarter = 0.25f;
  ncclRedOp_t op = ncclSum;
  check(ncclRedOpCreatePreMulSum(nullptr, &quarter, ncclFloat32,
                                 ncclScalarHostImmediate, comm),
        ncclInvalidArgument, "PreMulSum into a NULL op", comm, "op is NULL");
  check(ncclRedOpCreatePreMulSum(&op, nullptr, ncclFloat32,
                                 ncclScalarHostImmediate, comm),
        ncclInvalidArgument, "PreMulSum of a NULL scalar", comm,
        "must not be NULL");
  check(ncclRedOpCreatePreMulSum(&op, &quarter, ncclFloat32,
                                 ncclScalarResidence_t(7), comm),
        ncclInvalidArgument, "PreMulSum of residence 7", comm,
        "invalid scalar residence 7");
  op = make(comm, &quarter, ncclFloat32, "ncclRedOpCreatePreMulSum float");
  check(ncclAllReduce(a.data(), b.data(), 8, ncclFloat64, op, comm, nullptr),
        ncclInvalidArgument, "a float PreMulSum on doubles", comm,
        "was made for float32");
  check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
  check(ncclAllReduce(a.data(), b.data(), 8, ncclFloat32, op, comm, nullptr),
        ncclInvalidArgument, "a destroyed PreMulSum", comm, "destroyed");
  check(ncclRedOpDestroy(op, comm), ncclInvalidArgument,
        "ncclRedOpDestroy twice", comm, "is not an operator");
  check(ncclRedOpDestroy(ncclSum, comm), ncclInvalidArgument,
        "ncclRedOpDestroy(ncclSum)", comm, "is not an operator");
}

/// Each rank its own scalar (NCCL's meaning; nccl-tests' mulsum passes
/// one that depends on the rank): the sum of every rank's input times that
/// rank's scalar, in int32 (rank + 2, wrapping) and float ((rank + 1) / 4,
/// exact), in every reduction.
void perRank(ncclComm_t comm) {
  size_t n = size_t(ranks) * 6;
  int32_t mine = rank + 2;
  ncclRedOp_t op = make(comm, &mine, ncclInt32, "PreMulSum int32 per rank");
  every<int32_t>(
      comm, ncclInt32, op, n, [](int v) { return int32_t(v); },
      [](size_t i) {
        uint32_t acc = 0;
        for (int r = 0; r < ranks; ++r)
          acc += uint32_t(value(r, i)) * uint32_t(r + 2);
        return int32_t(acc);
      },
      "int32 per rank");
  check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
  float quarters = float(rank + 1) / 4;
  op = make(comm, &quarters, ncclFloat32, "PreMulSum float per rank");
  every<float>(
      comm, ncclFloat32, op, n, [](int v) { return float(v); },
      [](size_t i) {
        float acc = 0;
        for (int r = 0; r < ranks; ++r)
          acc += float(value(r, i)) * float(r + 1) / 4;
        return acc;
      },
      "float per rank");
  check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
}
} // namespace

void preMulSum(ncclComm_t comm) {
  // Small (one-shot out of place, two-shot in place: n divides by the
  // rank count) and larger.
  for (size_t n : {size_t(ranks) * 5, size_t(ranks) * 1024}) {
    float quarter = 0.25f;
    ncclRedOp_t op = make(comm, &quarter, ncclFloat32, "PreMulSum float");
    every<float>(
        comm, ncclFloat32, op, n, [](int v) { return float(v); },
        [](size_t i) { return float(sumAt(i)) * 0.25f; }, "float");
    check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
    double half = 0.5;
    op = make(comm, &half, ncclFloat64, "PreMulSum double");
    every<double>(
        comm, ncclFloat64, op, n, [](int v) { return double(v); },
        [](size_t i) { return double(sumAt(i)) * 0.5; }, "double");
    check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
    int32_t minus3 = -3;
    op = make(comm, &minus3, ncclInt32, "PreMulSum int32");
    every<int32_t>(
        comm, ncclInt32, op, n, [](int v) { return int32_t(v); },
        [](size_t i) { return int32_t(sumAt(i) * -3); }, "int32");
    check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
    // int8 wraps: 100 times a sum of up to +-25.
    int8_t hundred = 100;
    op = make(comm, &hundred, ncclInt8, "PreMulSum int8");
    every<int8_t>(
        comm, ncclInt8, op, n, [](int v) { return int8_t(v); },
        [](size_t i) { return int8_t(uint8_t(unsigned(sumAt(i)) * 100u)); },
        "int8");
    check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
    uint16_t bfHalf = bf16(0.5f);
    op = make(comm, &bfHalf, ncclBfloat16, "PreMulSum bfloat16");
    every<uint16_t>(
        comm, ncclBfloat16, op, n, [](int v) { return bf16(float(v)); },
        [](size_t i) { return bf16(float(sumAt(i)) * 0.5f); }, "bfloat16");
    check(ncclRedOpDestroy(op, comm), ncclSuccess, "ncclRedOpDestroy", comm);
  }
  perRank(comm);
  deviceScalar(comm);
  inexact(comm);
  refusals(comm);
}

} // namespace sdma::nccltest
