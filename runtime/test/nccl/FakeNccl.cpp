//===- FakeNccl.cpp - a stand-in "real NCCL" for the fallback's test
//-------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// libsdma-fake-nccl.so exports the entry points the drop-in's fallback
// forwards to (ShimFallback.h) and prints one line per call, so a CPU-only
// test proves the forwarding: the library SDMA_NCCL_FALLBACK names is
// loaded, every rank's real communicator gets rank 0's id (broadcast
// through sdma), sends and receives reach it with the right communicator,
// grouped, and destroy and abort take it down. It moves no data.
//
//===----------------------------------------------------------------------===//

#include "NcclAbi.h"

#include <cstdio>
#include <cstring>
#include <unistd.h>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {
struct FakeComm {
  int rank, nranks;
  unsigned long long id;
};
int depth = 0;
} // namespace

FAKE_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id, 0, sizeof(*id));
  unsigned long long tag = 0xfa6e000000000000ull | (unsigned long long)getpid();
  std::memcpy(id->internal, &tag, sizeof(tag));
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                             ncclUniqueId id, int rank,
                                             ncclConfig_t *) {
  unsigned long long tag = 0;
  std::memcpy(&tag, id.internal, sizeof(tag));
  if ((tag >> 48) != 0xfa6e)
    return ncclInvalidArgument;
  *comm = reinterpret_cast<ncclComm_t>(new FakeComm{rank, nranks, tag});
  std::printf("fake: init rank %d of %d id %llx\n", rank, nranks, tag);
  return ncclSuccess;
}

static FakeComm *fake(ncclComm_t comm) {
  return reinterpret_cast<FakeComm *>(comm);
}

FAKE_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  std::printf("fake: destroy rank %d\n", fake(comm)->rank);
  delete fake(comm);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  std::printf("fake: abort rank %d\n", fake(comm)->rank);
  delete fake(comm);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *e) {
  *e = ncclSuccess;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclSend(const void *, size_t count, ncclDataType_t,
                               int peer, ncclComm_t comm, cudaStream_t) {
  std::printf("fake: rank %d send %zu to %d in group %d\n", fake(comm)->rank,
              count, peer, depth);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclRecv(void *, size_t count, ncclDataType_t, int peer,
                               ncclComm_t comm, cudaStream_t) {
  std::printf("fake: rank %d recv %zu from %d in group %d\n", fake(comm)->rank,
              count, peer, depth);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupStart() {
  ++depth;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupEnd() {
  --depth;
  return ncclSuccess;
}

FAKE_API const char *ncclGetLastError(ncclComm_t) { return "fake"; }
