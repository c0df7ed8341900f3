//===- NcclP2pCases.cpp - ncclSend and ncclRecv as programs use them ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The point-to-point traffic of real jobs, on buffers sdma never saw, every
// byte checked: a ring inside one group (sizes from nothing to several times
// a pair's ring of chunks, the receive issued first or second), torch's
// all_to_all_single with split sizes (a send and a receive per peer with a
// non-zero count, self included, in one group), two messages to one peer in
// a group (they match in order), a group of more operations than one launch
// takes, pipeline-parallel traffic between two ranks outside any group
// (the others idle), fp8 moved as bytes. Then the refusals: a peer out of
// range, an unknown type, a null buffer, a receive overlapping a send of
// its group, a group with a refused call (nothing of it runs), a group over
// two communicators, each leaving
// the communicator usable; and a receive of the wrong size, on a
// communicator split off for it, failing with NCCL's invalid usage.
//
//===----------------------------------------------------------------------===//

#include "NcclTestSupport.h"

using namespace sdma::nccltest;

namespace {

/// The values rank `from` sends (`salt` tells messages apart).
std::vector<int> message(int from, size_t n, size_t salt) {
  return input<int>(from, n, salt * 1000 + 7);
}

/// nccl-tests' in-place sendrecv: each rank sends its buffer on and
/// receives into that same buffer, in one group; and a receive overlapping
/// part of a send to itself. The sends go from copies (NCCL serves both).
void inPlace(ncclComm_t comm, size_t n) {
  int next = (rank + 1) % ranks, prev = (rank + ranks - 1) % ranks;
  std::vector<int> buf = message(rank, n, n);
  std::string what = "in-place ring of " + std::to_string(n);
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  check(ncclSend(buf.data(), n, ncclInt32, next, comm, nullptr), ncclSuccess,
        what + " ncclSend", comm);
  check(ncclRecv(buf.data(), n, ncclInt32, prev, comm, nullptr), ncclSuccess,
        what + " ncclRecv", comm);
  check(ncclGroupEnd(), ncclSuccess, what + " ncclGroupEnd", nullptr);
  expect(buf, message(prev, n, n), what);
  std::vector<int> a = message(rank, 150, 3), want = a;
  std::copy(a.begin(), a.begin() + 100, want.begin() + 50);
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  check(ncclSend(a.data(), 100, ncclInt32, rank, comm, nullptr), ncclSuccess,
        "ncclSend to itself", comm);
  check(ncclRecv(a.data() + 50, 100, ncclInt32, rank, comm, nullptr),
        ncclSuccess, "ncclRecv overlapping it", comm);
  check(ncclGroupEnd(), ncclSuccess, "a group overlapping itself", nullptr);
  expect(a, want, "a receive overlapping a send to itself");
}

void ring(ncclComm_t comm, size_t n, bool receiveFirst) {
  int next = (rank + 1) % ranks, prev = (rank + ranks - 1) % ranks;
  std::vector<int> out = message(rank, n, n), in(n, -99);
  std::string what = "ring of " + std::to_string(n);
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  if (receiveFirst)
    check(ncclRecv(in.data(), n, ncclInt32, prev, comm, nullptr), ncclSuccess,
          what + " ncclRecv", comm);
  check(ncclSend(out.data(), n, ncclInt32, next, comm, nullptr), ncclSuccess,
        what + " ncclSend", comm);
  if (!receiveFirst)
    check(ncclRecv(in.data(), n, ncclInt32, prev, comm, nullptr), ncclSuccess,
          what + " ncclRecv", comm);
  check(ncclGroupEnd(), ncclSuccess, what + " ncclGroupEnd", nullptr);
  expect(in, message(prev, n, n), what);
}

/// What rank s sends rank d in the all-to-allv: 0, 1, 2 or 3 thousand
/// elements times 3.
size_t splits(int s, int d) { return size_t((s * 5 + d * 3) % 4) * 3000; }

void allToAllv(ncclComm_t comm) {
  std::vector<size_t> sendAt(ranks + 1, 0), recvAt(ranks + 1, 0);
  for (int p = 0; p < ranks; ++p) {
    sendAt[p + 1] = sendAt[p] + splits(rank, p);
    recvAt[p + 1] = recvAt[p] + splits(p, rank);
  }
  std::vector<int> out(sendAt[ranks]), in(recvAt[ranks], -99), want;
  for (int p = 0; p < ranks; ++p) {
    std::vector<int> part = message(rank, splits(rank, p), size_t(p));
    std::copy(part.begin(), part.end(), out.begin() + sendAt[p]);
    std::vector<int> from = message(p, splits(p, rank), size_t(rank));
    want.insert(want.end(), from.begin(), from.end());
  }
  // As torch: an operation per peer with a non-zero count.
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  for (int p = 0; p < ranks; ++p) {
    if (splits(rank, p))
      check(ncclSend(out.data() + sendAt[p], splits(rank, p), ncclInt32, p,
                     comm, nullptr),
            ncclSuccess, "all-to-allv ncclSend", comm);
    if (splits(p, rank))
      check(ncclRecv(in.data() + recvAt[p], splits(p, rank), ncclInt32, p, comm,
                     nullptr),
            ncclSuccess, "all-to-allv ncclRecv", comm);
  }
  check(ncclGroupEnd(), ncclSuccess, "all-to-allv ncclGroupEnd", nullptr);
  expect(in, want, "all-to-allv by grouped send/recv");
}

/// `messages` messages to the next rank in one group, sizes varying; more
/// than one launch's worth of operations when messages > 16.
void manyToNext(ncclComm_t comm, int messages) {
  int next = (rank + 1) % ranks, prev = (rank + ranks - 1) % ranks;
  std::vector<std::vector<int>> out, in;
  for (int m = 0; m < messages; ++m) {
    size_t n = m % 2 ? 7 : 5000 + size_t(m);
    out.push_back(message(rank, n, 100 + size_t(m)));
    in.emplace_back(n, -99);
  }
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  for (int m = 0; m < messages; ++m) {
    check(
        ncclSend(out[m].data(), out[m].size(), ncclInt32, next, comm, nullptr),
        ncclSuccess, "ncclSend of many", comm);
    check(ncclRecv(in[m].data(), in[m].size(), ncclInt32, prev, comm, nullptr),
          ncclSuccess, "ncclRecv of many", comm);
  }
  check(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd of many", nullptr);
  for (int m = 0; m < messages; ++m)
    expect(in[m], message(prev, in[m].size(), 100 + size_t(m)),
           "message " + std::to_string(m) + " of " + std::to_string(messages));
}

/// Rank 0 and the last rank only, outside any group (pipeline-parallel):
/// a message several rings long, then fp8 bytes back.
void onePeer(ncclComm_t comm) {
  int last = ranks - 1;
  size_t n = 30000;
  if (rank == 0) {
    std::vector<int> out = message(0, n, 5);
    check(ncclSend(out.data(), n, ncclInt32, last, comm, nullptr), ncclSuccess,
          "ncclSend to the last rank", comm);
    std::vector<unsigned char> in(10, 0);
    check(ncclRecv(in.data(), 10, ncclFloat8e5m2, last, comm, nullptr),
          ncclSuccess, "ncclRecv fp8", comm);
    for (int i = 0; i < 10; ++i)
      if (in[i] != (unsigned char)(0x30 + i)) {
        std::fprintf(stderr, "rank 0: fp8 byte %d is %d\n", i, in[i]);
        ++failures;
      }
  } else if (rank == last) {
    std::vector<int> in(n, -99);
    check(ncclRecv(in.data(), n, ncclInt32, 0, comm, nullptr), ncclSuccess,
          "ncclRecv from rank 0", comm);
    expect(in, message(0, n, 5), "a message from rank 0 alone");
    std::vector<unsigned char> out(10);
    for (int i = 0; i < 10; ++i)
      out[i] = (unsigned char)(0x30 + i);
    check(ncclSend(out.data(), 10, ncclFloat8e5m2, 0, comm, nullptr),
          ncclSuccess, "ncclSend fp8", comm);
  }
}

void refusals(ncclComm_t comm) {
  std::vector<int> a(200, 1);
  check(ncclSend(a.data(), 4, ncclInt32, ranks, comm, nullptr),
        ncclInvalidArgument, "ncclSend to a peer out of range", comm,
        "not a rank");
  check(ncclRecv(a.data(), 4, ncclInt32, -1, comm, nullptr),
        ncclInvalidArgument, "ncclRecv from rank -1", comm, "not a rank");
  check(ncclSend(a.data(), 4, ncclNumTypes, rank, comm, nullptr),
        ncclInvalidArgument, "ncclSend of an unknown type", comm,
        "invalid datatype");
  check(ncclSend(nullptr, 4, ncclInt32, rank, comm, nullptr),
        ncclInvalidArgument, "ncclSend from NULL", comm, "null buffer");
  // A refused call inside a group: nothing of the group runs.
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  check(ncclSend(a.data(), 4, ncclInt32, rank, comm, nullptr), ncclSuccess,
        "ncclSend to itself", comm);
  check(ncclRecv(a.data() + 100, 4, ncclInt32, ranks + 3, comm, nullptr),
        ncclInvalidArgument, "ncclRecv out of range in a group", comm,
        "not a rank");
  check(ncclGroupEnd(), ncclInvalidArgument, "a group with a refusal", nullptr,
        "nothing of the group ran");
  // A group over two communicators (sdma runs a group on one): refused at
  // its end, nothing run.
  ncclComm_t other = nullptr;
  check(ncclCommSplit(comm, 0, rank, &other, nullptr), ncclSuccess,
        "ncclCommSplit for a second communicator", comm);
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  check(ncclSend(a.data(), 4, ncclInt32, rank, comm, nullptr), ncclSuccess,
        "ncclSend on the first communicator", comm);
  check(ncclRecv(a.data() + 100, 4, ncclInt32, rank, other, nullptr),
        ncclSuccess, "ncclRecv on the second", other);
  check(ncclGroupEnd(), ncclInvalidUsage, "a group over two communicators",
        nullptr, "use 2 communicators");
  check(ncclCommDestroy(other), ncclSuccess, "ncclCommDestroy", nullptr);
  // Still usable, and nothing was left behind: a send to itself matches
  // the receive issued with it.
  std::vector<int> self = message(rank, 3000, 9), back(3000, -1);
  check(ncclGroupStart(), ncclSuccess, "ncclGroupStart", nullptr);
  check(ncclSend(self.data(), 3000, ncclInt32, rank, comm, nullptr),
        ncclSuccess, "ncclSend to itself", comm);
  check(ncclRecv(back.data(), 3000, ncclInt32, rank, comm, nullptr),
        ncclSuccess, "ncclRecv from itself", comm);
  check(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd to itself", nullptr);
  expect(back, self, "a message to itself after the refusals");
}

/// A receive of another size than its send, on a communicator of its own
/// (the mismatch fails it for good): the receiver gets NCCL's invalid
/// usage naming both sizes.
void wrongSize(ncclComm_t comm) {
  ncclComm_t pair = nullptr;
  check(ncclCommSplit(comm, rank < 2 ? 0 : NCCL_SPLIT_NOCOLOR, rank, &pair,
                      nullptr),
        ncclSuccess, "ncclCommSplit for a pair", comm);
  if (!pair)
    return;
  std::vector<int> a(12, 3), big(30000, 1);
  if (rank == 0) {
    check(ncclSend(a.data(), 10, ncclInt32, 1, pair, nullptr), ncclSuccess,
          "ncclSend of 10", pair);
    // Its next send to rank 1, longer than the ring, waits on the pair and
    // learns that rank 1 refused the first.
    check(ncclSend(big.data(), big.size(), ncclInt32, 1, pair, nullptr),
          ncclInvalidUsage, "ncclSend after a refused one", pair,
          "rank 0's send to rank 1 failed: rank 1 refused a message of it, "
          "its receive being of 48 bytes");
  } else {
    check(ncclRecv(a.data(), 12, ncclInt32, 0, pair, nullptr), ncclInvalidUsage,
          "ncclRecv of 12 for a send of 10", pair,
          "received a message of 40 bytes from rank 0 where its receive was "
          "of 48 bytes");
    ncclResult_t async = ncclSuccess;
    check(ncclCommGetAsyncError(pair, &async), ncclSuccess,
          "ncclCommGetAsyncError", pair);
    check(async, ncclInvalidUsage, "the pair's async error", pair);
  }
  check(ncclCommDestroy(pair), ncclSuccess, "ncclCommDestroy of the pair",
        nullptr);
}

} // namespace

void sdma::nccltest::pointToPoint(ncclComm_t comm) {
  // The buffers here are host memory, which a GPU's kernel cannot address:
  // on a GPU, sdma-comm-test --case=p2p and test/gpu/nccl_torch.py run these
  // patterns on device memory.
  const char *device = std::getenv("SDMA_DEVICE");
  if (!device || std::string(device) != "cpu") {
    if (rank == 0)
      std::printf("point-to-point cases: not on this device (host buffers; "
                  "sdma-comm-test --case=p2p covers it)\n");
    return;
  }
  for (size_t n : {size_t(0), size_t(1), size_t(1001), size_t(50000)})
    ring(comm, n, n % 2 == 1);
  for (size_t n : {size_t(1), size_t(5000)})
    inPlace(comm, n);
  allToAllv(comm);
  manyToNext(comm, 2);
  manyToNext(comm, 20);
  onePeer(comm);
  refusals(comm);
  wrongSize(comm);
  ncclResult_t async = ncclInternalError;
  check(ncclCommGetAsyncError(comm, &async), ncclSuccess,
        "ncclCommGetAsyncError", comm);
  check(async, ncclSuccess, "the async error after point-to-point", comm);
}
