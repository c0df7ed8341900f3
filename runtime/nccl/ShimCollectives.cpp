//===- ShimCollectives.cpp - NCCL's collectives on sdma's
//------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Each call runs sdma's collective of the same name and meaning, on the
// caller's buffers where they are windows (ncclCommWindowRegister) or
// where its path lets no peer reach them (a low-latency call), else
// staged through the communicator's symmetric area (Shim.h); the
// checks are sdma's (a bad type, operator, root, size or buffer is refused
// on every rank, the communicator still usable), so the drop-in passes
// what it cannot stage (an unknown type, a null buffer, a size that does
// not fit) straight to sdma for its refusal.
//
// Inside ncclGroupStart/End a collective is kept and made at the outermost
// ncclGroupEnd through sdma's group (every communicator's calls together:
// one thread may make every rank's), then the group's ncclSend/ncclRecv,
// together.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"
#include "ShimFallback.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace sdma::nccl;

#define NCCL_API extern "C" __attribute__((visibility("default")))

namespace {

/// Bytes per element of NCCL's types sdma computes in; 0 for the others
/// (sdma refuses them).
size_t elementBytes(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

constexpr size_t kAlign = 256;
size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// `count` elements of `type`, `times` over, in bytes; false if unknown
/// or too large to stage.
bool bytesOf(size_t count, ncclDataType_t type, size_t times, size_t &bytes) {
  size_t e = elementBytes(type);
  if (!e || count > (SIZE_MAX / 4) / e / times)
    return false;
  bytes = count * e * times;
  return true;
}

/// Makes the staging area at least `bytes` (collective: every rank makes
/// the same call with the same sizes, so every rank grows alike).
ncclResult_t reserve(ncclComm_t comm, size_t bytes) {
  if (bytes <= comm->stageBytes)
    return ncclSuccess;
  size_t want = 64 << 10;
  while (want < bytes)
    want *= 2;
  if (comm->stage) {
    if (sdmaResult_t r = sdmaMemFree(comm->sdma, comm->stage))
      return fromSdma(comm, r);
    comm->stage = nullptr;
    comm->stageBytes = 0;
  }
  void *p = nullptr;
  if (sdmaResult_t r = sdmaMemAlloc(comm->sdma, &p, want)) {
    // A smaller exact fit may still be there.
    if (sdmaMemAlloc(comm->sdma, &p, aligned(bytes)) != sdmaSuccess)
      return fromSdma(comm, r);
    want = aligned(bytes);
  }
  comm->stage = static_cast<char *>(p);
  comm->stageBytes = want;
  return ncclSuccess;
}

/// Logs the path call `op` took (logPath): sdma's own account of it and
/// `how` the buffers went. Nothing is asked of sdma unless logging is on:
/// this is on every call's way.
void logCallPath(const char *op, sdmaComm_t comm, const char *how) {
  if (!logging())
    return;
  const char *path = nullptr;
  sdmaCommGetLastPath(comm, &path);
  logPath(op, (std::string("sdma (") + (path && *path ? path : "?") + ", " +
               how + ")")
                  .c_str());
}

/// Whether the rank's buffers of a call go to sdma as they are: each one
/// the call reads (`copyIn`) or writes (`copyOut`) lies in a window
/// (ncclCommWindowRegister) or other symmetric memory. Every rank must
/// choose alike, as NCCL asks of windows: a rank whose buffers are windows
/// while a peer's are not makes a different call, which fails on every
/// rank, never with a wrong result: refused by the host's call check where
/// the call is new to every rank, by the launch's call tag where it is new
/// to none (an asynchronous error that fails the communicator, as NCCL's
/// do), and after the timeout where it is new to some ranks only.
bool direct(ncclComm_t comm, const void *send, size_t sendBytes, bool copyIn,
            const void *recv, size_t recvBytes, bool copyOut) {
  auto symmetric = [&](const void *p, size_t bytes) {
    int yes = 0;
    return !p ||
           (sdmaMemQuery(comm->sdma, p, bytes, &yes) == sdmaSuccess && yes);
  };
  return (!copyIn || symmetric(send, sendBytes)) &&
         (!copyOut || symmetric(recv, recvBytes)) && (send || recv);
}

/// One call: where the user's buffers are windows (direct()),
/// `run(send, recv)` is sdma's call on them, nothing copied; else `send`
/// (`sendBytes`, copied in where `copyIn`) and `recv` (`recvBytes`, copied
/// out where `copyOut`) become the staging area's two parts. What cannot be
/// staged runs on the user's pointers: sdma refuses.
ncclResult_t
staged(ncclComm_t comm, const char *op, const void *send, size_t sendBytes,
       bool copyIn, void *recv, size_t recvBytes, bool copyOut, bool stageable,
       cudaStream_t stream,
       const std::function<sdmaResult_t(const void *, void *)> &run) {
  std::shared_ptr<ncclComm> keep = acquire(comm);
  if (!keep)
    return checkComm(comm, op);
  std::lock_guard<std::mutex> lock(comm->mutex);
  if (!acquire(comm)) // destroyed while this call waited for the lock
    return checkComm(comm, op);
  comm->error.clear();
  if (!stageable)
    return fromSdma(comm, run(send, recv));
  // Growing the staging area is collective: every rank grows it by the
  // call's sizes, whichever way this rank then runs the call (the heap is
  // alike everywhere, so it fails everywhere alike; a call on windows does
  // not need it).
  ncclResult_t grown = reserve(comm, aligned(sendBytes) + recvBytes);
  char *in = comm->stage, *out = comm->stage + aligned(sendBytes);
  // A buffer the rank neither reads nor writes (a gather's receive buffer
  // off the root, NULL in NCCL) is where the staged call would put it: a
  // peer may still need its place (the root's, at the same offset).
  const void *sendAs = copyIn || grown != ncclSuccess ? send : in;
  void *recvAs = copyOut || grown != ncclSuccess ? recv : out;
  // A call on windows whose buffers a peer could not share for it
  // (sdmaNotSymmetric: every rank was told alike) is staged as theirs are.
  bool windows =
      direct(comm, send, sendBytes, copyIn, recv, recvBytes, copyOut);
  if (windows) {
    sdmaResult_t r = run(sendAs, recvAs);
    if (r == sdmaSuccess) {
      logCallPath(op, comm->sdma, "in place in the caller's windows");
      return ncclSuccess;
    }
    if (r != sdmaNotSymmetric)
      return fromSdma(comm, r);
  }
  // A growth that failed failed on every rank (ranks that disagree on the
  // sizes included): none runs the call.
  if (grown != ncclSuccess)
    return grown;
  // With private buffers (SDMA_NCCL_PRIVATE, on by default), the caller's
  // buffers as they are where the call's path lets no peer reach them (a
  // low-latency call); sdma says at once, asking no rank, where they must be
  // staged. Otherwise, and across nodes, every buffer is staged.
  if (sdmaResult_t r = !comm->privateBuffers || windows ? sdmaNotSymmetric
                                                        : run(sendAs, recvAs);
      r != sdmaNotSymmetric) {
    if (r != sdmaSuccess)
      return fromSdma(comm, r);
    logCallPath(op, comm->sdma, "in place on the caller's buffers");
    return ncclSuccess;
  }
  // A null user buffer stays null for sdma, which refuses the call on
  // every rank (every rank staged alike up to here: the sizes are the
  // call's, not the rank's).
  bool sendNull = copyIn && !send, recvNull = copyOut && !recv;
  if (copyIn && sendBytes && !sendNull)
    if (sdmaResult_t r =
            sdmaMemcpyAsync(comm->sdma, in, send, sendBytes, stream))
      return fromSdma(comm, r);
  if (sdmaResult_t r = run(sendNull ? nullptr : in, recvNull ? nullptr : out))
    return fromSdma(comm, r);
  if (copyOut && recvBytes)
    if (sdmaResult_t r =
            sdmaMemcpyAsync(comm->sdma, recv, out, recvBytes, stream))
      return fromSdma(comm, r);
  logCallPath(op, comm->sdma, "staged through symmetric memory");
  return ncclSuccess;
}

/// A collective made inside the open group: NCCL runs a group's calls at
/// its end, on any of the process's communicators (one thread may make
/// every rank's: nccl-tests' -g, ncclCommInitAll). Kept here, whole, and
/// made at the outermost ncclGroupEnd through sdma's group (sdmaGroupCall:
/// on its communicator's thread, where `run` makes the call as outside a
/// group).
struct PendingCall {
  std::shared_ptr<ncclComm> comm;
  std::function<ncclResult_t()> run;
  ncclResult_t result = ncclSuccess;
  std::string why;
};
thread_local std::vector<PendingCall> pendingCalls;

/// Inside a group: keeps `call` on `comm` for the group's end (true).
bool deferred(ncclComm_t comm, std::function<ncclResult_t()> call) {
  if (!inGroup())
    return false;
  std::shared_ptr<ncclComm> keep = acquire(comm);
  if (!keep)
    return false; // refused when made, as outside a group
  pendingCalls.push_back({std::move(keep), std::move(call)});
  return true;
}

sdmaResult_t runPending(void *ctx) {
  auto *call = static_cast<PendingCall *>(ctx);
  call->result = call->run();
  if (call->result != ncclSuccess)
    call->why = ncclGetLastError(call->comm.get());
  return static_cast<sdmaResult_t>(call->result);
}

sdmaDataType_t toSdma(ncclDataType_t type) {
  return static_cast<sdmaDataType_t>(type);
}
sdmaRedOp_t toSdma(ncclRedOp_t op) { return static_cast<sdmaRedOp_t>(op); }

} // namespace

// PreMulSum: sdma's operator of the same number (both count from five).
static_assert(int(ncclNumOps) == int(sdmaNumOps) &&
                  int(ncclScalarDevice) == int(sdmaScalarDevice) &&
                  int(ncclScalarHostImmediate) == int(sdmaScalarHostImmediate),
              "sdma's operators and scalar residences are numbered as NCCL's");
NCCL_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                               ncclDataType_t datatype,
                                               ncclScalarResidence_t residence,
                                               ncclComm_t comm) {
  std::shared_ptr<ncclComm> keep = acquire(comm);
  if (!keep)
    return checkComm(comm, "ncclRedOpCreatePreMulSum");
  std::lock_guard<std::mutex> lock(comm->mutex);
  if (!acquire(comm)) // destroyed while this call waited for the lock
    return checkComm(comm, "ncclRedOpCreatePreMulSum");
  if (!op)
    return fail(comm, ncclInvalidArgument,
                "ncclRedOpCreatePreMulSum: op is NULL");
  sdmaRedOp_t made = sdmaSum;
  if (ncclResult_t r = fromSdma(
          comm, sdmaRedOpCreatePreMulSum(
                    &made, scalar, static_cast<sdmaDataType_t>(datatype),
                    static_cast<sdmaScalarResidence_t>(residence), comm->sdma)))
    return r;
  *op = static_cast<ncclRedOp_t>(made);
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  std::shared_ptr<ncclComm> keep = acquire(comm);
  if (!keep)
    return checkComm(comm, "ncclRedOpDestroy");
  // In a group after the calls that use it (torch destroys a PreMulSum
  // operator as its call returns, inside its coalescing group): the
  // operator stays until they have run.
  if (deferred(comm, [=] { return ncclRedOpDestroy(op, comm); }))
    return ncclSuccess;
  std::lock_guard<std::mutex> lock(comm->mutex);
  if (!acquire(comm))
    return checkComm(comm, "ncclRedOpDestroy");
  return fromSdma(comm,
                  sdmaRedOpDestroy(static_cast<sdmaRedOp_t>(op), comm->sdma));
}

NCCL_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                                    size_t sendcount, ncclDataType_t datatype,
                                    ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclAllGather"))
    return r;
  if (deferred(comm, [=] {
        return ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm,
                             stream);
      }))
    return ncclSuccess;
  size_t in = 0, out = 0;
  bool ok = bytesOf(sendcount, datatype, 1, in) &&
            bytesOf(sendcount, datatype, comm->nranks, out);
  return staged(comm, "AllGather", sendbuff, in, true, recvbuff, out, true, ok,
                stream, [&](const void *s, void *r) {
                  return sdmaAllGather(s, r, sendcount, toSdma(datatype),
                                       comm->sdma, stream);
                });
}

NCCL_API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff,
                                   size_t count, ncclDataType_t datatype,
                                   ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclAlltoAll"))
    return r;
  if (deferred(comm, [=] {
        return ncclAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream);
      }))
    return ncclSuccess;
  size_t bytes = 0;
  bool ok = bytesOf(count, datatype, comm->nranks, bytes);
  return staged(comm, "AlltoAll", sendbuff, bytes, true, recvbuff, bytes, true,
                ok, stream, [&](const void *s, void *r) {
                  return sdmaAlltoAll(s, r, count, toSdma(datatype), comm->sdma,
                                      stream);
                });
}

NCCL_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff,
                                    size_t count, ncclDataType_t datatype,
                                    int root, ncclComm_t comm,
                                    cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclBroadcast"))
    return r;
  if (deferred(comm, [=] {
        return ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm,
                             stream);
      }))
    return ncclSuccess;
  size_t bytes = 0;
  bool isRoot = comm->rank == root;
  bool ok = bytesOf(count, datatype, 1, bytes);
  return staged(comm, "Broadcast", sendbuff, bytes, isRoot, recvbuff, bytes,
                true, ok, stream, [&](const void *s, void *r) {
                  return sdmaBroadcast(s, r, count, toSdma(datatype), root,
                                       comm->sdma, stream);
                });
}

NCCL_API ncclResult_t ncclBcast(void *buff, size_t count,
                                ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclBcast"))
    return r;
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

NCCL_API ncclResult_t ncclGather(const void *sendbuff, void *recvbuff,
                                 size_t count, ncclDataType_t datatype,
                                 int root, ncclComm_t comm,
                                 cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclGather"))
    return r;
  if (deferred(comm, [=] {
        return ncclGather(sendbuff, recvbuff, count, datatype, root, comm,
                          stream);
      }))
    return ncclSuccess;
  size_t in = 0, out = 0;
  bool isRoot = comm->rank == root;
  bool ok = bytesOf(count, datatype, 1, in) &&
            bytesOf(count, datatype, comm->nranks, out);
  return staged(comm, "Gather", sendbuff, in, true, recvbuff, out, isRoot, ok,
                stream, [&](const void *s, void *r) {
                  return sdmaGather(s, r, count, toSdma(datatype), root,
                                    comm->sdma, stream);
                });
}

NCCL_API ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff,
                                  size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclScatter"))
    return r;
  if (deferred(comm, [=] {
        return ncclScatter(sendbuff, recvbuff, count, datatype, root, comm,
                           stream);
      }))
    return ncclSuccess;
  size_t in = 0, out = 0;
  bool isRoot = comm->rank == root;
  bool ok = bytesOf(count, datatype, comm->nranks, in) &&
            bytesOf(count, datatype, 1, out);
  return staged(comm, "Scatter", sendbuff, in, isRoot, recvbuff, out, true, ok,
                stream, [&](const void *s, void *r) {
                  return sdmaScatter(s, r, count, toSdma(datatype), root,
                                     comm->sdma, stream);
                });
}

NCCL_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff,
                                    size_t count, ncclDataType_t datatype,
                                    ncclRedOp_t op, ncclComm_t comm,
                                    cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclAllReduce"))
    return r;
  if (deferred(comm, [=] {
        return ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm,
                             stream);
      }))
    return ncclSuccess;
  size_t bytes = 0;
  bool ok = op >= 0 && bytesOf(count, datatype, 1, bytes);
  return staged(comm, "AllReduce", sendbuff, bytes, true, recvbuff, bytes, true,
                ok, stream, [&](const void *s, void *r) {
                  return sdmaAllReduce(s, r, count, toSdma(datatype),
                                       toSdma(op), comm->sdma, stream);
                });
}

NCCL_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                                        size_t recvcount,
                                        ncclDataType_t datatype, ncclRedOp_t op,
                                        ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclReduceScatter"))
    return r;
  if (deferred(comm, [=] {
        return ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op,
                                 comm, stream);
      }))
    return ncclSuccess;
  size_t in = 0, out = 0;
  bool ok = op >= 0 && bytesOf(recvcount, datatype, comm->nranks, in) &&
            bytesOf(recvcount, datatype, 1, out);
  return staged(comm, "ReduceScatter", sendbuff, in, true, recvbuff, out, true,
                ok, stream, [&](const void *s, void *r) {
                  return sdmaReduceScatter(s, r, recvcount, toSdma(datatype),
                                           toSdma(op), comm->sdma, stream);
                });
}

NCCL_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff,
                                 size_t count, ncclDataType_t datatype,
                                 ncclRedOp_t op, int root, ncclComm_t comm,
                                 cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm, "ncclReduce"))
    return r;
  if (deferred(comm, [=] {
        return ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm,
                          stream);
      }))
    return ncclSuccess;
  size_t bytes = 0;
  bool isRoot = comm->rank == root;
  bool ok = op >= 0 && bytesOf(count, datatype, 1, bytes);
  return staged(comm, "Reduce", sendbuff, bytes, true, recvbuff, bytes, isRoot,
                ok, stream, [&](const void *s, void *r) {
                  return sdmaReduce(s, r, count, toSdma(datatype), toSdma(op),
                                    root, comm->sdma, stream);
                });
}

// Point-to-point: sdma's sendRecv on the caller's buffers as they are.
// Only bytes move, so every NCCL type is served (the fp8 ones as bytes).
// Inside a group the operations wait here and run together (sdma's
// sdmaGroupStart/End around them) when the group ends.
namespace {
struct PendingOp {
  std::shared_ptr<ncclComm> comm;
  bool send;
  void *buffer;
  size_t bytes;
  int peer;
  cudaStream_t stream;
};
thread_local std::vector<PendingOp> pendingOps;
/// The first send or receive refused inside the open group (NCCL's group
/// error: the group's end runs none of it and returns it).
thread_local ncclResult_t groupRefusal = ncclSuccess;
thread_local std::string groupWhy;

ncclResult_t issue(const PendingOp &op) {
  std::lock_guard<std::mutex> lock(op.comm->mutex);
  sdmaResult_t r = op.send ? sdmaSend(op.buffer, op.bytes, sdmaUint8, op.peer,
                                      op.comm->sdma, op.stream)
                           : sdmaRecv(op.buffer, op.bytes, sdmaUint8, op.peer,
                                      op.comm->sdma, op.stream);
  return fromSdma(op.comm.get(), r);
}

ncclResult_t checkPeerOp(bool send, size_t count, ncclDataType_t datatype,
                         int peer, ncclComm_t comm);

ncclResult_t peerOp(bool send, void *buffer, size_t count,
                    ncclDataType_t datatype, int peer, ncclComm_t comm,
                    cudaStream_t stream) {
  ncclResult_t r = checkPeerOp(send, count, datatype, peer, comm);
  if (r == ncclSuccess) {
    std::shared_ptr<ncclComm> keep = acquire(comm);
    if (!keep)
      return checkComm(comm, send ? "ncclSend" : "ncclRecv");
    bool fp8 = datatype == ncclFloat8e4m3 || datatype == ncclFloat8e5m2;
    logPath(send ? "Send" : "Recv", "sdma");
    PendingOp op{keep,   send,
                 buffer, count * (fp8 ? 1 : elementBytes(datatype)),
                 peer,   stream};
    if (!inGroup())
      return issue(op);
    pendingOps.push_back(std::move(op));
    return ncclSuccess;
  }
  if (inGroup() && groupRefusal == ncclSuccess) {
    groupRefusal = r;
    groupWhy = std::string(send ? "ncclSend" : "ncclRecv") +
               " in the group was refused: " + ncclGetLastError(comm);
  }
  return r;
}

ncclResult_t checkPeerOp(bool send, size_t count, ncclDataType_t datatype,
                         int peer, ncclComm_t comm) {
  const char *name = send ? "ncclSend" : "ncclRecv";
  if (ncclResult_t r = checkComm(comm, name))
    return r;
  bool fp8 = datatype == ncclFloat8e4m3 || datatype == ncclFloat8e5m2;
  size_t e = fp8 ? 1 : elementBytes(datatype);
  if (!e)
    return fail(comm, ncclInvalidArgument,
                std::string(name) + ": invalid datatype " +
                    std::to_string(int(datatype)));
  if (count > SIZE_MAX / e)
    return fail(comm, ncclInvalidArgument,
                std::string(name) + ": " + std::to_string(count) +
                    " elements do not fit 64 bits of bytes");
  if (peer < 0 || peer >= comm->nranks)
    return fail(comm, ncclInvalidArgument,
                std::string(name) + ": peer " + std::to_string(peer) +
                    " is not a rank of the communicator (0.." +
                    std::to_string(comm->nranks - 1) + ")");
  return ncclSuccess;
}
} // namespace

ncclResult_t sdma::nccl::endGroupCalls(bool run) {
  std::vector<PendingCall> calls = std::move(pendingCalls);
  pendingCalls.clear();
  // A send or receive refused in the group: none of it runs
  // (endGroupPeerOps returns the refusal).
  if (!run || calls.empty() || groupRefusal != ncclSuccess)
    return ncclSuccess;
  sdmaGroupStart();
  for (PendingCall &call : calls)
    if (sdmaResult_t r =
            sdmaGroupCall(call.comm->sdma, runPending, &call, nullptr)) {
      sdmaGroupEnd(); // refused inside the group: nothing of it runs
      return fail(call.comm.get(), static_cast<ncclResult_t>(r),
                  std::string("ncclGroupEnd: ") +
                      sdmaGetLastError(call.comm->sdma));
    }
  sdmaResult_t ended = sdmaGroupEnd();
  for (PendingCall &call : calls)
    if (call.result != ncclSuccess)
      return fail(nullptr, call.result, "ncclGroupEnd: " + call.why);
  if (ended != sdmaSuccess)
    return fail(nullptr, static_cast<ncclResult_t>(ended),
                std::string("ncclGroupEnd: ") + sdmaGetLastError(nullptr));
  return ncclSuccess;
}

ncclResult_t sdma::nccl::endGroupPeerOps(bool run) {
  std::vector<PendingOp> ops = std::move(pendingOps);
  pendingOps.clear();
  ncclResult_t refused = groupRefusal;
  groupRefusal = ncclSuccess;
  if (run && refused != ncclSuccess)
    return fail(nullptr, refused,
                "ncclGroupEnd: nothing of the group ran, since " + groupWhy);
  if (!run || ops.empty())
    return ncclSuccess;
  // NCCL serves a send and a receive on one buffer in a group (nccl-tests'
  // in-place sendrecv: each rank sends its buffer on and receives into it).
  // A receive may land before the send has read, so such a send goes from
  // a copy taken first, in its stream's order.
  auto overlaps = [](const PendingOp &a, const PendingOp &b) {
    auto x = reinterpret_cast<uintptr_t>(a.buffer);
    auto y = reinterpret_cast<uintptr_t>(b.buffer);
    return a.bytes && b.bytes && x < y + b.bytes && y < x + a.bytes;
  };
  std::map<ncclComm *, size_t> stageBytes;
  std::vector<size_t> at(ops.size(), SIZE_MAX);
  for (size_t i = 0; i < ops.size(); ++i)
    for (const PendingOp &other : ops)
      if (ops[i].send && !other.send && other.comm == ops[i].comm &&
          overlaps(ops[i], other)) {
        size_t &used = stageBytes[ops[i].comm.get()];
        at[i] = used;
        used += (ops[i].bytes + 255) / 256 * 256;
        break;
      }
  for (auto &[comm, bytes] : stageBytes) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    char *stage = static_cast<char *>(peerStage(comm, bytes));
    if (!stage)
      return fail(comm, ncclSystemError,
                  "ncclGroupEnd: no memory for the copy of a send whose "
                  "buffer a receive of the group overlaps");
    for (size_t i = 0; i < ops.size(); ++i) {
      if (at[i] == SIZE_MAX || ops[i].comm.get() != comm)
        continue;
      if (sdmaResult_t r =
              sdmaMemcpyAsync(comm->sdma, stage + at[i], ops[i].buffer,
                              ops[i].bytes, ops[i].stream))
        return fromSdma(comm, r);
      ops[i].buffer = stage + at[i];
    }
  }
  sdmaGroupStart();
  for (const PendingOp &op : ops)
    if (ncclResult_t r = issue(op)) {
      sdmaGroupEnd(); // refused inside the group: nothing of it runs
      return r;
    }
  sdmaResult_t r = sdmaGroupEnd();
  if (r == sdmaSuccess)
    return ncclSuccess;
  std::string why = sdmaGetLastError(nullptr);
  for (const PendingOp &op : ops)
    op.comm->error = why;
  return fail(nullptr, static_cast<ncclResult_t>(r), why);
}

NCCL_API ncclResult_t ncclSend(const void *sendbuff, size_t count,
                               ncclDataType_t datatype, int peer,
                               ncclComm_t comm, cudaStream_t stream) {
  return peerOp(true, const_cast<void *>(sendbuff), count, datatype, peer, comm,
                stream);
}

NCCL_API ncclResult_t ncclRecv(void *recvbuff, size_t count,
                               ncclDataType_t datatype, int peer,
                               ncclComm_t comm, cudaStream_t stream) {
  return peerOp(false, recvbuff, count, datatype, peer, comm, stream);
}
