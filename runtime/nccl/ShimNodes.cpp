//===- ShimNodes.cpp - a job across nodes on the drop-in ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A job whose ranks span nodes (the ranks per node from SDMA_NCCL_LOCAL_RANKS,
// else torchrun's LOCAL_WORLD_SIZE, else OpenMPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, fewer than the job's ranks) gets sdma's
// multi-node communicator (sdmaCommInitMultiNode): sdma within each node,
// and the real NCCL (SDMA_NCCL_FALLBACK) between nodes, as its transport —
// sdma grows no network of its own. The real communicator spans the whole
// job; its id travels inside the drop-in's: rank 0's ncclGetUniqueId puts
// the real library's id in the second half of the one it hands out, which
// the job spreads to every rank as it would NCCL's. The same real
// communicator is the fallback for what sdma does not serve.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"
#include "ShimFallback.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace sdma::nccl;

namespace {

/// Where the real id sits in the drop-in's (sdma's own uses the first
/// half: its bootstrap fields take a few dozen bytes).
constexpr size_t kRealIdAt = sizeof(ncclUniqueId) / 2;

sdmaResult_t fromNccl(ncclResult_t r) {
  switch (r) {
  case ncclSuccess:
    return sdmaSuccess;
  case ncclInvalidArgument:
    return sdmaInvalidArgument;
  case ncclInvalidUsage:
    return sdmaInvalidUsage;
  case ncclSystemError:
    return sdmaSystemError;
  case ncclRemoteError:
    return sdmaRemoteError;
  default:
    return sdmaUnhandledCudaError;
  }
}

/// One group of the real NCCL's sends and receives on `stream`, as
/// sdma_nccl.h's exchange, through the real library's entry points (the
/// drop-in's own ncclSend would be sdma's).
sdmaResult_t exchange(void *context, const sdmaTransportOp *ops, int count,
                      sdmaStream_t stream, char *message, size_t bytes) {
  auto *link = static_cast<NodeLink *>(context);
  const RealNccl &real = *link->real;
  if (count <= 0)
    return sdmaSuccess;
  std::vector<void *> buffers(count);
  size_t hostBytes = 0;
  for (int i = 0; i < count; ++i) {
    buffers[i] = ops[i].buffer;
    hostBytes += ops[i].host ? ops[i].bytes : 0;
  }
  // Through device memory where there is a device: the real NCCL moves
  // device memory only (on the CPU device that is host memory).
  const bool stage = hostBytes && !deviceIsCpu();
  const Cuda *cuda = stage ? Cuda::get() : nullptr;
  unsigned long long device = 0;
  auto failed = [&](sdmaResult_t r, const std::string &why) {
    if (message && bytes)
      std::snprintf(message, bytes, "%s", why.c_str());
    if (device)
      cuda->memFree(device);
    return r;
  };
  if (stage) {
    if (!cuda || !cuda->memcpyHtoD || !cuda->memcpyDtoH ||
        !cuda->ctxSynchronize || cuda->memAlloc(&device, hostBytes) != 0)
      return failed(sdmaUnhandledCudaError,
                    "cannot stage " + std::to_string(hostBytes) +
                        " bytes of setup messages in device memory");
    size_t at = 0;
    for (int i = 0; i < count; ++i) {
      if (!ops[i].host)
        continue;
      buffers[i] = reinterpret_cast<void *>(device + at);
      if (ops[i].send &&
          cuda->memcpyHtoD(device + at, ops[i].buffer, ops[i].bytes) != 0)
        return failed(sdmaUnhandledCudaError, "staging a setup message");
      at += ops[i].bytes;
    }
    stream = nullptr; // the legacy stream: ordered with the copies
  }
  ncclResult_t r = real.groupStart();
  for (int i = 0; i < count && r == ncclSuccess; ++i)
    r = ops[i].send
            ? real.send(buffers[i], ops[i].bytes, ncclUint8, ops[i].peer,
                        link->comm, static_cast<cudaStream_t>(stream))
            : real.recv(buffers[i], ops[i].bytes, ncclUint8, ops[i].peer,
                        link->comm, static_cast<cudaStream_t>(stream));
  ncclResult_t closed = real.groupEnd(); // always: an open group poisons
  if (r == ncclSuccess)
    r = closed;
  if (r != ncclSuccess)
    return failed(fromNccl(r), std::string("the real NCCL between nodes: ") +
                                   real.getLastError(link->comm));
  if (device) {
    if (cuda->ctxSynchronize() != 0)
      return failed(sdmaUnhandledCudaError, "the staged setup messages");
    for (int i = 0; i < count; ++i)
      if (ops[i].host && !ops[i].send &&
          cuda->memcpyDtoH(ops[i].buffer,
                           reinterpret_cast<unsigned long long>(buffers[i]),
                           ops[i].bytes) != 0)
        return failed(sdmaUnhandledCudaError, "unstaging a setup message");
    cuda->memFree(device);
  }
  return sdmaSuccess;
}

} // namespace

/// Whether the launcher says this job spans nodes (its ranks per node
/// fewer than its ranks): only then does an id carry the real NCCL's,
/// whose ncclGetUniqueId starts a bootstrap root that a one-node job would
/// leave waiting.
static bool jobSpansNodes() {
  auto number = [](const char *name) {
    const char *value = std::getenv(name);
    return value && *value ? std::atoi(value) : 0;
  };
  if (number("SDMA_NCCL_LOCAL_RANKS") > 0)
    return true;
  for (auto [local, world] :
       {std::pair{"LOCAL_WORLD_SIZE", "WORLD_SIZE"},
        std::pair{"OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_SIZE"}})
    if (number(local) > 0 && number(world) > 0)
      return number(local) < number(world);
  return false;
}

void sdma::nccl::packRealId(ncclUniqueId &id) {
  if (isFallback() || !jobSpansNodes())
    return;
  std::string ignored;
  const RealNccl *real = realNccl(ignored);
  ncclUniqueId theirs;
  if (!real || real->getUniqueId(&theirs) != ncclSuccess)
    return;
  // Only an id whose second half is empty fits (NCCL's uses a few dozen
  // bytes); otherwise none travels, and a job across nodes is refused at
  // init, saying why.
  for (size_t i = kRealIdAt; i < sizeof(theirs.internal); ++i)
    if (theirs.internal[i])
      return;
  std::memcpy(id.internal + kRealIdAt, theirs.internal, kRealIdAt);
}

int sdma::nccl::localRanksOfJob(int nranks) {
  for (const char *name : {"SDMA_NCCL_LOCAL_RANKS", "LOCAL_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char *value = std::getenv(name); value && *value) {
      int local = std::atoi(value);
      return local > 0 && local < nranks ? local : 0;
    }
  return 0;
}

ncclResult_t sdma::nccl::initAcrossNodes(ncclComm_t *out, int nranks,
                                         ncclUniqueId id, int rank, int local,
                                         const ncclConfig_t *config) {
  const std::string call = "ncclCommInitRank across nodes (" +
                           std::to_string(nranks) + " ranks, " +
                           std::to_string(local) + " per node)";
  std::string why;
  const RealNccl *real = realNccl(why);
  if (!real)
    return fail(
        nullptr, ncclInvalidUsage,
        call +
            ": the ranks between nodes go through the real NCCL, "
            "and " +
            (why.empty() ? std::string("SDMA_NCCL_FALLBACK is not set") : why));
  ncclUniqueId theirs;
  std::memset(&theirs, 0, sizeof(theirs));
  std::memcpy(theirs.internal, id.internal + kRealIdAt, kRealIdAt);
  bool empty = true;
  for (char c : theirs.internal)
    empty = empty && !c;
  if (empty)
    return fail(nullptr, ncclInvalidArgument,
                call + ": the unique id carries no id of the real NCCL (rank "
                       "0's ncclGetUniqueId ran without SDMA_NCCL_FALLBACK, "
                       "or the real library's id did not fit)");
  auto link = std::make_shared<NodeLink>();
  link->real = real;
  ncclConfig_t copy;
  ncclConfig_t *realConfig = blockingConfig(config, copy);
  if (ncclResult_t r = real->commInitRankConfig(&link->comm, nranks, theirs,
                                                rank, realConfig))
    return fail(nullptr, r,
                call + ": the real NCCL's ncclCommInitRankConfig: " +
                    real->getLastError(nullptr));
  link->transport.context = link.get();
  link->transport.rank = rank;
  link->transport.nranks = nranks;
  link->transport.deviceMemory = 1;
  link->transport.name = "nccl";
  link->transport.exchange = exchange;
  sdmaComm_t s = nullptr;
  if (sdmaResult_t r =
          sdmaCommInitMultiNode(&s, &link->transport, local, nullptr)) {
    std::string message = sdmaGetLastError(nullptr);
    real->commAbort(link->comm);
    return fail(nullptr, static_cast<ncclResult_t>(r), call + ": " + message);
  }
  logPath("CommInitRank", "sdma across nodes, the real NCCL between them");
  return adopt(out, s, rank, nranks, config, std::move(link));
}
