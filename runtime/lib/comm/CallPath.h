//===- CallPath.h - a collective call, from plan to launch ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What a communicator does with a planned call (Collectives.h), in order:
//   1. a call made before with the same arguments, while no allocation or
//      registration came or went, starts as it was (CallReplay.h);
//   2. the first call of a signature is agreed by every rank (a rank that
//      refuses makes every rank refuse, before any state is made);
//   3. one rank with the path left to sdma: the device copies the input;
//   4. the program is found or added (collective), an in-place all-reduce
//      is staged, the path is chosen (PathChoice.h) and the Launcher
//      starts it; a call with private buffers the path cannot take fails
//      with NotSymmetric (remembered, so the same arguments fail at once).
// The path each call took is kept for Communicator::lastPath.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_CALLPATH_H
#define SDMA_RUNTIME_LIB_COMM_CALLPATH_H

#include "comm/Agreement.h"
#include "comm/CallReplay.h"
#include "comm/Collectives.h"
#include "comm/Launcher.h"
#include "comm/PathChoice.h"
#include "comm/PointToPoint.h"

#include <mutex>
#include <set>
#include <string>

namespace sdma::rt {

class CallPath {
public:
  /// The communicator's parts a call uses (it owns them; they outlive
  /// this).
  struct Parts {
    int rank = 0, ranks = 0;
    /// What a failed device copy is (Communicator::Impl::deviceKind).
    ErrorKind deviceKind = ErrorKind::Device;
    const CommOptions *options = nullptr;
    Agreement *agreement = nullptr;
    CommDevice *device = nullptr;
    SymmetricHeap *heap = nullptr;
    ProgramCache *programs = nullptr;
    Launcher *launcher = nullptr;
    PointToPoint *p2p = nullptr;
    PathChooser *paths = nullptr;
  };
  explicit CallPath(const Parts &parts) : c_(parts) {}

  /// Runs `plan`, or refuses it with `refused` where this rank could not
  /// plan it (steps 2-4 above); `replayKey`: remembered for step 1.
  bool run(bool planned, const CollectivePlan &plan, const Error &refused,
           void *stream, Error &error, const CallKey *replayKey = nullptr);
  /// Starts the call of `key` as it was started before, if one was; `ok`
  /// is its result.
  bool replayed(const CallKey &key, void *stream, Error &error, bool &ok);
  /// Launches `call` of instance `index` on the path chosen for it (kept
  /// in `keep` with the path, for CallReplay, where given).
  bool launch(int index, const Call &call, void *stream, Error &error,
              ReplayedCall *keep = nullptr, const Error &refused = Error());
  /// The path the rank's last call took, and why.
  std::string lastPath() const;

private:
  /// Fails a call with private buffers that must be staged (`error` says
  /// why), remembering that for `replayKey`.
  bool notSymmetric(const CallKey *replayKey, Error &error);
  /// One rank: every built-in collective (not all-to-allv) is its input
  /// chunk copied to its output, which the device copies at copy speed (no
  /// kernel, no barrier; capturable), or nothing where they are one;
  /// remembered for `replayKey` where given.
  bool single(const Call &call, void *stream, Error &error,
              const CallKey *replayKey);
  /// The device's copy of `bytes` on `stream` (`how`: by what), held in
  /// a group over several communicators (GroupLaunch.h).
  bool copy(void *to, const void *from, size_t bytes, void *stream,
            std::string *how, Error &error);
  /// The staging buffer of at least `bytes` an in-place all-reduce needs.
  bool stage(size_t bytes, void *&ptr, Error &error);
  void setLastPath(std::string path, bool append = false);

  Parts c_;
  mutable std::mutex lastPathMutex_;
  std::string lastPath_;
  void *stage_ = nullptr;
  size_t stageBytes_ = 0;
  std::set<std::string> agreedCalls_;
  CallReplay replay_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_CALLPATH_H
