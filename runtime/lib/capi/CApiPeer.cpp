//===- CApiPeer.cpp - sdmaSend, sdmaRecv and groups -----------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// NCCL's point-to-point calls and groups. Outside a group a call runs
// alone; between sdmaGroupStart and sdmaGroupEnd (which nest, per thread)
// calls are collected and run when the outermost group ends: collectives
// and schedule launches of single-node communicators first, on any number
// of communicators of this process (runGroup: each communicator's in order,
// the communicators side by side, the launches of ranks sharing a GPU as
// one), then the sends and receives (Communicator::sendRecv: one launch,
// every operation at once), which span one communicator. A call the C layer
// refuses inside a group fails the group: its sdmaGroupEnd runs none of the
// group's operations and returns that error, as NCCL's does.
//
//===----------------------------------------------------------------------===//

#include "capi/CApiCommon.h"

#include "sdma/runtime/CheckedMath.h"

#include <functional>
#include <memory>
#include <vector>

using namespace sdma::capi;
using namespace sdma::rt;

namespace {

/// One communicator's operations in the open group.
struct Pending {
  sdmaComm *comm = nullptr;
  sdmaStream_t stream = nullptr;
  std::vector<PeerOp> ops;
};

/// A collective (or schedule launch, or sdmaGroupCall) made in the open
/// group.
struct Deferred {
  sdmaComm *comm = nullptr;
  std::string name;
  std::function<bool(Error &)> run;
  /// Its launches held for the group's (not a multi-node communicator's).
  bool hold = true;
  /// Made first on the group's thread (GroupCall::probe).
  bool probe = false;
};

/// The error kind of `result` (resultOf's inverse).
ErrorKind kindOf(sdmaResult_t result) {
  switch (result) {
  case sdmaInvalidArgument:
    return ErrorKind::InvalidArgument;
  case sdmaInvalidUsage:
    return ErrorKind::InvalidUsage;
  case sdmaRemoteError:
    return ErrorKind::Remote;
  case sdmaSystemError:
    return ErrorKind::System;
  case sdmaUnhandledCudaError:
    return ErrorKind::Device;
  case sdmaNotSymmetric:
    return ErrorKind::NotSymmetric;
  default:
    return ErrorKind::Internal;
  }
}

struct Group {
  int depth = 0;
  std::vector<Pending> pending; // in the order of first use
  std::vector<Deferred> calls;  // in the order made
  /// The first refusal inside the group.
  sdmaResult_t failed = sdmaSuccess;
  std::string why;
};
thread_local Group group;

/// Runs `ops` on `comm` (its last error kept on failure).
sdmaResult_t run(sdmaComm *comm, const std::vector<PeerOp> &ops,
                 sdmaStream_t stream, const char *what) {
  return guarded(comm, [&] {
    Error error;
    if (comm->multi ? comm->multi->sendRecv(ops, stream, error)
                    : comm->node->sendRecv(ops, stream, error))
      return sdmaSuccess;
    return fail(comm, what, error);
  });
}

sdmaResult_t peerOp(bool send, void *buffer, size_t count, sdmaDataType_t type,
                    int peer, sdmaComm_t comm, sdmaStream_t stream) {
  const char *name = send ? "sdmaSend" : "sdmaRecv";
  // fail() has noted the refusal in an open group (refusedInGroup).
  auto refuse = [](sdmaComm *, sdmaResult_t result) { return result; };
  if (comm && !liveHandles().has(comm))
    return refuse(nullptr, deadHandle("comm"));
  if (!comm)
    return refuse(nullptr, fail(nullptr, sdmaInvalidArgument,
                                std::string(name) + ": comm is NULL"));
  if (type < 0 || type >= sdmaNumTypes)
    return refuse(comm, fail(comm, sdmaInvalidArgument,
                             std::string(name) + ": invalid datatype " +
                                 std::to_string(type)));
  std::optional<uint64_t> bytes =
      checkedMul(count, dataTypeBytes(static_cast<DataType>(type)));
  if (!bytes)
    return refuse(comm, fail(comm, sdmaInvalidArgument,
                             std::string(name) + ": " + std::to_string(count) +
                                 " elements do not fit 64 bits of bytes"));
  int ranks = comm->multi ? comm->multi->ranks() : comm->node->ranks();
  if (peer < 0 || peer >= ranks)
    return refuse(comm,
                  fail(comm, sdmaInvalidArgument,
                       std::string(name) + ": peer " + std::to_string(peer) +
                           " is not a rank of the communicator (0.." +
                           std::to_string(ranks - 1) + ")"));
  PeerOp op;
  op.send = send;
  op.peer = peer;
  op.buffer = buffer;
  op.bytes = *bytes;
  if (group.depth == 0)
    return run(comm, {op}, stream, name);
  for (Pending &p : group.pending) {
    if (p.comm != comm)
      continue;
    if (p.stream != stream)
      return refuse(comm, fail(comm, sdmaInvalidUsage,
                               std::string(name) +
                                   ": a group's operations on one "
                                   "communicator must use one stream"));
    p.ops.push_back(op);
    return sdmaSuccess;
  }
  group.pending.push_back({comm, stream, {op}});
  return sdmaSuccess;
}

/// Runs the group's collectives (runGroup); the first failure, each failed
/// call's kept on its communicator.
sdmaResult_t runCalls(std::vector<Deferred> &deferred) {
  if (deferred.empty())
    return sdmaSuccess;
  std::vector<GroupCall> calls;
  for (Deferred &d : deferred) {
    if (!liveHandles().has(d.comm))
      return fail(nullptr, sdmaInvalidUsage,
                  "sdmaGroupEnd: nothing of the group ran: a communicator of "
                  "the group was destroyed before the group ended");
    calls.push_back({d.comm->node, d.run, Error(), d.hold, d.probe});
  }
  if (sdmaResult_t r = guarded(nullptr, [&] {
        runGroup(calls);
        return sdmaSuccess;
      }))
    return r;
  // Every failed call's message on its communicator; the first returned.
  sdmaResult_t first = sdmaSuccess;
  std::string why;
  for (size_t i = 0; i < calls.size(); ++i)
    if (!calls[i].error.empty()) {
      sdmaResult_t r = fail(deferred[i].comm, deferred[i].name, calls[i].error);
      if (first == sdmaSuccess) {
        first = r;
        why = deferred[i].comm->lastError;
      }
    }
  return first == sdmaSuccess ? first
                              : fail(nullptr, first, "sdmaGroupEnd: " + why);
}

} // namespace

void sdma::capi::refusedInGroup(sdmaResult_t result,
                                const std::string &message) {
  if (group.depth > 0 && group.failed == sdmaSuccess) {
    group.failed = result;
    group.why = message;
  }
}

sdmaResult_t sdma::capi::runOrDefer(sdmaComm *comm, const std::string &name,
                                    std::function<bool(Error &)> call,
                                    bool probe) {
  if (group.depth > 0) {
    group.calls.push_back({comm, name, std::move(call), true, probe});
    return sdmaSuccess;
  }
  return guarded(comm, [&] {
    Error error;
    return call(error) ? sdmaSuccess : fail(comm, name, error);
  });
}

extern "C" {

sdmaResult_t sdmaSend(const void *sendbuff, size_t count,
                      sdmaDataType_t datatype, int peer, sdmaComm_t comm,
                      sdmaStream_t stream) {
  return peerOp(true, const_cast<void *>(sendbuff), count, datatype, peer, comm,
                stream);
}

sdmaResult_t sdmaRecv(void *recvbuff, size_t count, sdmaDataType_t datatype,
                      int peer, sdmaComm_t comm, sdmaStream_t stream) {
  return peerOp(false, recvbuff, count, datatype, peer, comm, stream);
}

sdmaResult_t sdmaGroupCall(sdmaComm_t comm, sdmaResult_t (*call)(void *),
                           void *ctx, void (*release)(void *)) {
  // Released once, whatever becomes of the call.
  std::shared_ptr<void> owned(ctx, [release](void *p) {
    if (release)
      release(p);
  });
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !call)
    return fail(comm, sdmaInvalidArgument,
                "sdmaGroupCall: comm or call is NULL");
  auto run = [comm, call, owned](Error &error) {
    comm->lastError.clear();
    sdmaResult_t r = call(owned.get());
    if (r != sdmaSuccess)
      error.fail(kindOf(r),
                 comm->lastError.empty()
                     ? std::string("the call failed: ") + sdmaGetErrorString(r)
                     : comm->lastError);
    return r == sdmaSuccess;
  };
  if (group.depth == 0)
    return call(owned.get());
  // A multi-node communicator's calls wait on their streams: run with no
  // launch held.
  group.calls.push_back({comm, "", run, comm->multi == nullptr});
  return sdmaSuccess;
}

sdmaResult_t sdmaGroupStart(void) {
  ++group.depth;
  return sdmaSuccess;
}

sdmaResult_t sdmaGroupEnd(void) {
  if (group.depth == 0)
    return fail(nullptr, sdmaInvalidUsage,
                "sdmaGroupEnd: no sdmaGroupStart is open on this thread");
  if (--group.depth > 0)
    return sdmaSuccess;
  Group ended = std::move(group);
  group = Group();
  if (ended.failed != sdmaSuccess)
    return fail(nullptr, ended.failed,
                "sdmaGroupEnd: the group's calls did not run, since " +
                    ended.why);
  // Every refusal before anything runs. One launch runs a communicator's
  // sends and receives; several communicators' would run one after
  // another, and could wait on each other where NCCL's fused group does
  // not.
  if (ended.pending.size() > 1)
    return fail(nullptr, sdmaInvalidUsage,
                "sdmaGroupEnd: nothing of the group ran: its sends and "
                "receives use " +
                    std::to_string(ended.pending.size()) +
                    " communicators; sdma runs a group on one (a group per "
                    "communicator)");
  for (Pending &p : ended.pending)
    if (!liveHandles().has(p.comm))
      return fail(nullptr, sdmaInvalidUsage,
                  "sdmaGroupEnd: nothing of the group ran: a communicator of "
                  "the group was destroyed before the group ended");
  // Collectives first (every communicator's, together), then the sends and
  // receives.
  if (sdmaResult_t r = runCalls(ended.calls))
    return r;
  for (Pending &p : ended.pending)
    if (sdmaResult_t r = run(p.comm, p.ops, p.stream, "sdmaGroupEnd"))
      return fail(nullptr, r, p.comm->lastError);
  return sdmaSuccess;
}

} // extern "C"
