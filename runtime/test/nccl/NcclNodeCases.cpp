//===- NcclNodeCases.cpp - the drop-in across (simulated) nodes -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdma-nccl-test with NCCL_TEST_ACROSS_NODES: the communicator spans nodes
// (SDMA_NCCL_LOCAL_RANKS ranks per node) and the "real NCCL" between them
// is SDMA_NCCL_FALLBACK (in CI a copy of the drop-in itself, which stays on
// one node). Every collective the hierarchical schedules serve, the
// reductions in several types and operators (avg and a pre-multiplied sum
// included), and sends and receives within and across nodes, every element
// checked, an in-place all-to-all (staged) included; the sends and
// receives on the CPU device only (the buffers are host memory).
//
//===----------------------------------------------------------------------===//

#include "NcclTestSupport.h"

#include <algorithm>

namespace sdma::nccltest {

namespace {

void collectives(ncclComm_t comm, size_t n) {
  const std::string at = " (" + std::to_string(n) + ")";
  std::vector<int> mine = input<int>(rank, n), all(ranks * n),
                   want = everyRank<int>(n);
  check(ncclAllGather(mine.data(), all.data(), n, ncclInt32, comm, nullptr),
        ncclSuccess, "ncclAllGather" + at, comm);
  expect(all, want, "AllGather" + at);

  std::vector<float> a2a = input<float>(rank, ranks * n), a2aOut(ranks * n),
                     a2aWant = everyRank<float>(n, rank * n);
  check(ncclAlltoAll(a2a.data(), a2aOut.data(), n, ncclFloat32, comm, nullptr),
        ncclSuccess, "ncclAlltoAll" + at, comm);
  expect(a2aOut, a2aWant, "AlltoAll" + at);

  // Rooted on the last rank (another node than rank 0's).
  int root = ranks - 1;
  std::vector<double> b(n, -1), src = input<double>(rank, n);
  check(
      ncclBroadcast(src.data(), b.data(), n, ncclFloat64, root, comm, nullptr),
      ncclSuccess, "ncclBroadcast" + at, comm);
  expect(b, input<double>(root, n), "Broadcast" + at);
}

void reductions(ncclComm_t comm, size_t n) {
  const std::string at = " (" + std::to_string(n * ranks) + ")";
  size_t total = n * ranks; // an all-reduce's count divides by the ranks
  std::vector<long long> sum(total, 0), prod(total, 1);
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < total; ++i) {
      sum[i] += value(r, i);
      prod[i] *= value(r, i);
    }
  std::vector<float> f = input<float>(rank, total), fOut(total);
  check(ncclAllReduce(f.data(), fOut.data(), total, ncclFloat32, ncclSum, comm,
                      nullptr),
        ncclSuccess, "ncclAllReduce sum" + at, comm);
  std::vector<float> fWant(sum.begin(), sum.end());
  expect(fOut, fWant, "AllReduce sum" + at);

  // Avg: the sum divided once by the job's ranks, integers truncated.
  std::vector<int> x = input<int>(rank, total), xOut(total), avgWant(total);
  for (size_t i = 0; i < total; ++i)
    avgWant[i] = int(sum[i] / ranks);
  check(ncclAllReduce(x.data(), xOut.data(), total, ncclInt32, ncclAvg, comm,
                      nullptr),
        ncclSuccess, "ncclAllReduce avg" + at, comm);
  expect(xOut, avgWant, "AllReduce avg" + at);

  std::vector<long long> p = input<long long>(rank, total), pOut(total);
  check(ncclAllReduce(p.data(), pOut.data(), total, ncclInt64, ncclProd, comm,
                      nullptr),
        ncclSuccess, "ncclAllReduce prod" + at, comm);
  expect(pOut, prod, "AllReduce prod" + at);

  // ReduceScatter: rank r gets block r of the sums.
  std::vector<float> rs(n);
  check(ncclReduceScatter(f.data(), rs.data(), n, ncclFloat32, ncclSum, comm,
                          nullptr),
        ncclSuccess, "ncclReduceScatter" + at, comm);
  expect(rs,
         std::vector<float>(fWant.begin() + rank * n,
                            fWant.begin() + (rank + 1) * n),
         "ReduceScatter" + at);

  // Reduce to rank 1, a max.
  std::vector<double> d = input<double>(rank, n), dOut(n, -99), dWant(n);
  for (size_t i = 0; i < n; ++i) {
    dWant[i] = value(0, i);
    for (int r = 1; r < ranks; ++r)
      dWant[i] = std::max<double>(dWant[i], value(r, i));
  }
  check(ncclReduce(d.data(), dOut.data(), n, ncclFloat64, ncclMax, 1, comm,
                   nullptr),
        ncclSuccess, "ncclReduce max" + at, comm);
  if (rank == 1)
    expect(dOut, dWant, "Reduce max" + at);

  // A pre-multiplied sum, each rank its own scalar (r + 1).
  float scalar = float(rank + 1);
  ncclRedOp_t premul;
  check(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32,
                                 ncclScalarHostImmediate, comm),
        ncclSuccess, "ncclRedOpCreatePreMulSum", comm);
  std::vector<float> scaled(total, 0);
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < total; ++i)
      scaled[i] += float(r + 1) * float(value(r, i));
  check(ncclAllReduce(f.data(), fOut.data(), total, ncclFloat32, premul, comm,
                      nullptr),
        ncclSuccess, "ncclAllReduce premulsum" + at, comm);
  expect(fOut, scaled, "AllReduce premulsum" + at);
  check(ncclRedOpDestroy(premul, comm), ncclSuccess, "ncclRedOpDestroy", comm);
}

void sendRecv(ncclComm_t comm, size_t n) {
  // A group to the next rank and the one halfway round (within and across
  // nodes), then one send between two ranks alone.
  int next = (rank + 1) % ranks, prev = (rank + ranks - 1) % ranks;
  int far = (rank + ranks / 2) % ranks,
      from = (rank + ranks - ranks / 2) % ranks;
  std::vector<int> a = input<int>(rank, n), b = input<int>(rank, n, n);
  std::vector<int> fromPrev(n), fromFar(n);
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  check(ncclSend(a.data(), n, ncclInt32, next, comm, nullptr), ncclSuccess,
        "ncclSend next", comm);
  check(ncclRecv(fromPrev.data(), n, ncclInt32, prev, comm, nullptr),
        ncclSuccess, "ncclRecv prev", comm);
  check(ncclSend(b.data(), n, ncclInt32, far, comm, nullptr), ncclSuccess,
        "ncclSend far", comm);
  check(ncclRecv(fromFar.data(), n, ncclInt32, from, comm, nullptr),
        ncclSuccess, "ncclRecv from", comm);
  check(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd", nullptr);
  expect(fromPrev, input<int>(prev, n), "Recv from the previous rank");
  expect(fromFar, input<int>(from, n, n), "Recv from halfway round");
  if (rank == 0)
    check(ncclSend(a.data(), n, ncclInt32, ranks - 1, comm, nullptr),
          ncclSuccess, "ncclSend alone", comm);
  if (rank == ranks - 1) {
    check(ncclRecv(fromPrev.data(), n, ncclInt32, 0, comm, nullptr),
          ncclSuccess, "ncclRecv alone", comm);
    expect(fromPrev, input<int>(0, n), "Recv alone");
  }
}

} // namespace

int acrossNodes(ncclComm_t comm) {
  int count = 0, me = -1;
  check(ncclCommCount(comm, &count), ncclSuccess, "ncclCommCount", comm);
  check(ncclCommUserRank(comm, &me), ncclSuccess, "ncclCommUserRank", comm);
  if (count != ranks || me != rank) {
    std::fprintf(stderr, "rank %d: count %d rank %d\n", rank, count, me);
    ++failures;
  }
  // Sends and receives take the caller's buffers in place, and this
  // program's are host memory: on the CPU device only (as the one-node
  // API test's point-to-point cases).
  const char *device = std::getenv("SDMA_DEVICE");
  bool hostMemory = device && std::string(device) == "cpu";
  for (size_t n : {size_t(3), size_t(700)}) {
    collectives(comm, n);
    reductions(comm, n);
    if (hostMemory)
      sendRecv(comm, n);
  }
  // In place: sdma's multi-node all-to-all refuses overlapping buffers,
  // but the drop-in stages them (the caller's are not symmetric memory).
  std::vector<float> inPlace = input<float>(rank, ranks * 4),
                     inPlaceWant = everyRank<float>(4, rank * 4);
  check(ncclAlltoAll(inPlace.data(), inPlace.data(), 4, ncclFloat32, comm,
                     nullptr),
        ncclSuccess, "ncclAlltoAll in place across nodes", comm);
  expect(inPlace, inPlaceWant, "AlltoAll in place");
  ncclResult_t async = ncclSuccess;
  check(ncclCommGetAsyncError(comm, &async), ncclSuccess,
        "ncclCommGetAsyncError", comm);
  check(async, ncclSuccess, "the asynchronous error", comm);
  check(ncclCommDestroy(comm), ncclSuccess, "ncclCommDestroy", nullptr);
  if (failures)
    return 1;
  std::printf("rank %d of %d: every NCCL call across nodes as expected\n", rank,
              ranks);
  return 0;
}

} // namespace sdma::nccltest
