//===- CallPath.cpp - a collective call from its plan to its launch -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/CallPath.h"

#include "comm/GroupLaunch.h"

#include <algorithm>
#include <cstdint>

using namespace sdma::rt;

bool CallPath::stage(size_t bytes, void *&ptr, Error &error) {
  if (bytes <= stageBytes_) {
    ptr = stage_;
    return true;
  }
  // Doubling: the stages outgrown stay allocated (a kernel still on a
  // stream may read one), at most as much again as the largest.
  size_t want = size_t(64) << 10;
  while (want < bytes && want <= SIZE_MAX / 2)
    want *= 2;
  void *grown = nullptr;
  if (!c_.heap->allocate(std::max(want, bytes), grown, error))
    return error.context(
        "in place, each rank stages its value in the symmetric heap");
  ptr = stage_ = grown;
  stageBytes_ = std::max(want, bytes);
  return true;
}

bool CallPath::replayed(const CallKey &key, void *stream, Error &error,
                        bool &ok) {
  GroupPhaseTimer timer(GroupLaunch::current() ? GroupPhase::Replayed
                                               : GroupPhase::Count);
  std::shared_ptr<const ReplayedCall> call =
      c_.options->replayCalls ? replay_.find(key, c_.heap->generation())
                              : nullptr;
  if (!call)
    return false;
  if (!call->refused.empty()) {
    error = call->refused;
    ok = false;
    return true;
  }
  if (!c_.p2p->healthy(error)) {
    ok = error.context("the communicator has failed");
    return true;
  }
  setLastPath(call->path);
  if (call->copy) {
    ok = !call->copyBytes || copy(call->copyTo, call->copyFrom, call->copyBytes,
                                  stream, nullptr, error);
    return true;
  }
  ok = c_.launcher->replay(call->launch, stream, error);
  return true;
}

bool CallPath::notSymmetric(const CallKey *replayKey, Error &error) {
  if (replayKey && c_.options->replayCalls) {
    ReplayedCall refused;
    refused.refused = error;
    refused.generation = c_.heap->generation();
    replay_.remember(*replayKey, std::move(refused));
  }
  return false;
}

bool CallPath::run(bool planned, const CollectivePlan &plan,
                   const Error &refused, void *stream, Error &error,
                   const CallKey *replayKey) {
  // runGroup's probe: the whole way may meet the other ranks on the host;
  // the call runs again on a thread of its communicator's.
  if (GroupLaunch::probing()) {
    GroupLaunch::defer();
    return false;
  }
  const std::string &signature = plan.call.signature;
  if (c_.options->checkCalls && !agreedCalls_.count(signature)) {
    if (!c_.agreement->agreeUnless(refused, signature, "the call", error))
      return false;
    agreedCalls_.insert(signature);
  }
  if (!planned) {
    error = refused;
    return false;
  }
  if (plan.nothing)
    return true; // as NCCL: a call with nothing to move succeeds
  // One rank, the path left to sdma: a copy (an explicit ldst or dma is
  // honoured: it names the mechanism).
  if (c_.ranks == 1 && c_.options->path == "auto" &&
      plan.schedule.rfind("all_to_allv", 0) != 0)
    return single(plan.call, stream, error, replayKey);
  const Arithmetic *arithmetic = plan.arithmetic ? &*plan.arithmetic : nullptr;
  ProgramParams params{plan.root, plan.experts, plan.majorAlign};
  std::string key = ProgramCache::key(plan.schedule, params, arithmetic);
  int index = c_.programs->find(key);
  if (index < 0 &&
      !c_.programs->addBuiltin(plan.schedule, params, arithmetic, index, error))
    return false;
  Call call = plan.call;
  // Private memory in place (all_reduce_in_place) would be staged here on
  // top of the caller's own staging: the caller stages it instead (said in
  // the exchange first where the call shares its buffers).
  Error early;
  if (plan.stageBytes && c_.options->privateBuffers &&
      !c_.heap->contains(call.buffers[0], plan.stageBytes))
    early.fail(ErrorKind::NotSymmetric,
               "the buffer of an in-place all-reduce the rank count does not "
               "divide on rank " +
                   std::to_string(c_.rank) +
                   " is not symmetric memory: stage it");
  if (plan.stageBytes && early.empty()) {
    void *staged = nullptr;
    if (!stage(plan.stageBytes, staged, error))
      return false;
    call.buffers[1] = staged;
  }
  if (!c_.p2p->healthy(error))
    return error.context("the communicator has failed");
  ReplayedCall made;
  // A call that shared its buffers is never remembered, nor its refusal:
  // each such call exchanges (SharedBuffers.h), as every peer does.
  if (!launch(index, call, stream, error, &made, early)) {
    if (error.kind == ErrorKind::NotSymmetric)
      return notSymmetric(made.launch.shared ? nullptr : replayKey, error);
    return false;
  }
  // After the launch: a stage it grew is part of the heap it replays on.
  if (replayKey && c_.options->replayCalls && made.launch.index >= 0 &&
      !made.launch.shared) {
    made.generation = c_.heap->generation();
    replay_.remember(*replayKey, std::move(made));
  }
  return true;
}

bool CallPath::single(const Call &call, void *stream, Error &error,
                      const CallKey *replayKey) {
  setLastPath("copy (auto: one rank, the collective is its input)");
  if (!c_.p2p->healthy(error))
    return error.context("the communicator has failed");
  // Planned once: a call with the same arguments while the heap is as it
  // was repeats the copy (replayed()). Not one with a private buffer: the
  // heap's generation does not see it go.
  ReplayedCall made;
  made.copy = true;
  made.generation = c_.heap->generation();
  auto done = [&](std::string path, bool replayable) {
    setLastPath(path);
    if (replayable && replayKey && c_.options->replayCalls) {
      made.path = std::move(path);
      replay_.remember(*replayKey, std::move(made));
    }
    return true;
  };
  // In place (one buffer, or the same one twice): already there.
  if (call.buffers.size() < 2 || call.buffers[0] == call.buffers[1])
    return done("copy (auto: one rank, the collective is its input, in "
                "place: nothing to move)",
                true);
  const void *from = call.buffers[0];
  void *to = const_cast<void *>(call.buffers[1]);
  // What the kernel's launch checks, the copy checks: both buffers are
  // this rank's symmetric memory, whole (any memory where they may be
  // private: no other rank reaches them).
  std::string why;
  bool symmetric = true;
  for (const void *buffer : {from, static_cast<const void *>(to)}) {
    bool inHeap = buffer && c_.heap->contains(buffer, call.chunkBytes);
    symmetric = symmetric && inHeap;
    if (!buffer || !(inHeap || (c_.options->privateBuffers &&
                                c_.heap->disjoint(buffer, call.chunkBytes) &&
                                c_.device->addressable(buffer, why))))
      return error.fail(
          buffer && c_.options->privateBuffers ? ErrorKind::NotSymmetric
                                               : ErrorKind::InvalidArgument,
          std::string(buffer == from ? "the send" : "the receive") +
              " buffer is not symmetric memory of " +
              std::to_string(call.chunkBytes) +
              " bytes (memAlloc or registerMemory)");
  }
  std::string how;
  if (!copy(to, from, call.chunkBytes, stream, &how, error))
    return false;
  made.copyTo = to;
  made.copyFrom = from;
  made.copyBytes = call.chunkBytes;
  return done("copy (auto: one rank, the collective is its input, copied by " +
                  how + ")",
              symmetric);
}

bool CallPath::copy(void *to, const void *from, size_t bytes, void *stream,
                    std::string *how, Error &error) {
  // In a group over several communicators: in its order, at its start.
  if (GroupLaunch *group = GroupLaunch::current()) {
    if (how)
      *how = "the device at the group's end";
    CommDevice *device = c_.device;
    ErrorKind kind = c_.deviceKind;
    group->hold(*c_.launcher, [=] {
      Error failed;
      std::string why;
      if (!device->localCopy(to, from, bytes, stream, nullptr, why))
        failed.fail(kind, why);
      return failed;
    });
    return true;
  }
  std::string why;
  return c_.device->localCopy(to, from, bytes, stream, how, why) ||
         error.fail(c_.deviceKind, why);
}

bool CallPath::launch(int index, const Call &call, void *stream, Error &error,
                      ReplayedCall *keep, const Error &refused) {
  PathChoice path;
  // Kernel-submitted packets may need aligned buffers
  // (DmaProgram::packetBaseAlign). Symmetric memory sits at one offset of
  // every rank's heap, so every rank computes the same.
  if (!c_.paths->choose(index, call.chunkBytes, commonAlignment(call.buffers),
                        path, error))
    return false;
  setLastPath(path.why);
  if (keep)
    keep->path = path.why;
  if (!c_.launcher->run(index, call, path.dma, path.lowLatency, stream, error,
                        keep ? &keep->launch : nullptr, refused))
    return false;
  if (keep && keep->launch.shared)
    setLastPath(", buffers shared for this call", true);
  return true;
}

std::string CallPath::lastPath() const {
  std::lock_guard<std::mutex> lock(lastPathMutex_);
  return lastPath_;
}

void CallPath::setLastPath(std::string path, bool append) {
  std::lock_guard<std::mutex> lock(lastPathMutex_);
  if (append)
    lastPath_ += path;
  else
    lastPath_ = std::move(path);
}
