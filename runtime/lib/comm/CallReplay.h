//===- CallReplay.h - a repeated call started as it was ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Jobs make the same calls over and over (a training step's collectives on
// the same tensors). Planning a call, finding its instance, choosing its
// path, locating its buffers, building its signature, tag and table are
// functions of its arguments and of the communicator's state, so a call
// whose arguments match one made before, while no allocation or
// registration has been made or gone since (SymmetricHeap::generation),
// is started with that call's table as it was: the same kernel, buffers
// and tag, already agreed by every rank. The first call of any arguments,
// and every call after the heap changed, goes the whole way.
//
//   call(args) ── seen, same generation? ── yes ──> Launcher::replay
//                          │ no
//                          └──> plan, instance, path, table ──> remember
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_CALLREPLAY_H
#define SDMA_RUNTIME_LIB_COMM_CALLREPLAY_H

#include "comm/Launcher.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace sdma::rt {

/// A collective's, reduction's or all-to-allv's arguments, as the caller
/// passed them (the stream aside: it is not part of a launch's table).
struct CallKey {
  int kind = 0; // a CommOp, 16 + a CommReduction, or 32 + AllToAllvKind
  const void *send = nullptr;
  const void *recv = nullptr;
  size_t count = 0;
  int type = 0, op = -1, root = 0;
  bool deviceScalar = false;
  uint64_t scalar = 0;
  int partOf = 0; // Arithmetic::partOf
  /// An all-to-allv's (kind 32 + AllToAllvKind; count: its capacity): its
  /// count tables, a row's bytes, and the 2d variants' experts and
  /// alignment.
  const void *sendCounts = nullptr, *recvCounts = nullptr;
  size_t rowBytes = 0;
  int experts = 0, majorAlign = 0;
  bool operator==(const CallKey &o) const {
    return kind == o.kind && send == o.send && recv == o.recv &&
           count == o.count && type == o.type && op == o.op && root == o.root &&
           deviceScalar == o.deviceScalar && scalar == o.scalar &&
           partOf == o.partOf && sendCounts == o.sendCounts &&
           recvCounts == o.recvCounts && rowBytes == o.rowBytes &&
           experts == o.experts && majorAlign == o.majorAlign;
  }
};

/// The all-to-allv calls (CallKey::kind 32 + this).
enum class AllToAllvKind { Slots, Packed, TwoD, TwoDOffset };

/// An all-to-allv's replay key (CallKey: the count tables, not the counts).
inline CallKey allToAllvKey(AllToAllvKind kind, const void *send,
                            const int64_t *sendCounts, const void *recv,
                            const int64_t *recvCounts, size_t capacity,
                            size_t rowBytes, int experts = 0,
                            int majorAlign = 0) {
  CallKey key;
  key.kind = 32 + int(kind);
  key.send = send;
  key.recv = recv;
  key.count = capacity;
  key.sendCounts = sendCounts;
  key.recvCounts = recvCounts;
  key.rowBytes = rowBytes;
  key.experts = experts;
  key.majorAlign = majorAlign;
  return key;
}

struct CallKeyHash {
  size_t operator()(const CallKey &k) const {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(uint64_t(k.kind));
    mix(reinterpret_cast<uintptr_t>(k.send));
    mix(reinterpret_cast<uintptr_t>(k.recv));
    mix(k.count);
    mix(uint64_t(k.type) << 32 | uint32_t(k.op));
    mix(uint64_t(uint32_t(k.root)) << 1 | k.deviceScalar);
    mix(k.scalar);
    mix(uint64_t(uint32_t(k.partOf)));
    mix(reinterpret_cast<uintptr_t>(k.sendCounts));
    mix(reinterpret_cast<uintptr_t>(k.recvCounts));
    mix(k.rowBytes);
    mix(uint64_t(uint32_t(k.experts)) << 32 | uint32_t(k.majorAlign));
    return size_t(h);
  }
};

/// What a call started: its launch and the path it reported.
struct ReplayedCall {
  PreparedLaunch launch;
  /// A one-rank call (CallPath::single): its copy instead of a launch,
  /// none where it is in place (copyBytes 0).
  bool copy = false;
  void *copyTo = nullptr;
  const void *copyFrom = nullptr;
  size_t copyBytes = 0;
  uint64_t generation = 0;
  std::string path;
  /// With private buffers: the call must be staged (nothing started).
  Error refused;
};

class CallReplay {
public:
  /// The call made with `key` at heap generation `generation`, if one was
  /// remembered (shared: another thread may remember meanwhile).
  std::shared_ptr<const ReplayedCall> find(const CallKey &key,
                                           uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = calls_.find(key);
    if (it == calls_.end() || it->second->generation != generation)
      return nullptr;
    return it->second;
  }
  void remember(const CallKey &key, ReplayedCall call) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (calls_.size() >= kMostCalls) // ever new buffers: start afresh
      calls_.clear();
    calls_[key] = std::make_shared<const ReplayedCall>(std::move(call));
  }

private:
  static constexpr size_t kMostCalls = 1024;
  std::mutex mutex_;
  std::unordered_map<CallKey, std::shared_ptr<const ReplayedCall>, CallKeyHash>
      calls_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_CALLREPLAY_H
