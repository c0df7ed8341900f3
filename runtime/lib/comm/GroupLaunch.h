//===- GroupLaunch.h - a group's calls, launched together -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A group of calls on several communicators of one process (NCCL's
// ncclGroupStart/End over the communicators ncclCommInitAll made; one
// thread driving the ranks of its GPUs). runGroup first makes, on the
// calling thread, each communicator's calls that start as made before
// (CallPath::replayed: a microsecond each, nothing to meet); the first call
// of a communicator that would go the whole way, and its later ones, run in
// order on a thread of their own (the first call of a signature meets
// every rank on the host, so one thread cannot make them one after
// another). What the calls would enqueue is held instead, and started when
// all have run, round by round (the n-th held launch of every
// communicator): launches of kernels with one group key (the same program
// built for the same GPU: ranks sharing it) as one launch, the rest alone.
//
//   calling thread:  replayed ─ replayed ─ ... (a miss: that communicator's
//                        │          │           rest on a thread of its own:
//                        v  hold    v           plan, agree, table, hold)
//   runGroup:   round 0: [rank 0, rank 1, ...] ─ launchGroup
//               round 1: [rank 0, rank 1, ...] ─ launchGroup
//
// Two ranks on one GPU then cost one launch, and ranks on one stream, which
// launched one by one would wait for each other, run.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_GROUPLAUNCH_H
#define SDMA_RUNTIME_LIB_COMM_GROUPLAUNCH_H

#include "comm/CommDevice.h"

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace sdma::rt {

class CoLaunch;
class Launcher;

/// The phases of a group's end whose time SDMA_GROUP_PROFILE=1 reports:
/// the whole of runGroup, the calls made first on its thread (probed), the
/// rest (every communicator's side by side), rank 0's calls alone, the
/// held work's start, the fused launches, and inside each (CUDA) the
/// streams joined before, the launch call and the streams joined after;
/// each call's replay lookup in a group (CallPath::replayed, with the
/// start it holds where it finds one); and for ranks sharing a GPU
/// context (CoLaunch.h) a member's wait for the others, a round's start
/// as one launch or as launches alone, and a member's own launch through
/// the gate (Mode::Ordered).
enum class GroupPhase {
  End,
  Calls,
  FirstCalls,
  Start,
  FusedLaunch,
  JoinBefore,
  Launch,
  JoinAfter,
  Replayed,
  Probe,
  CoWait,
  CoTogether,
  CoAlone,
  CoOrdered,
  Count
};
/// Times one phase while alive (GroupPhase::Count: none), where
/// SDMA_GROUP_PROFILE=1 (read once); else costs a flag test. At exit the
/// process's median, mean and count of each phase go to stderr, a line
/// each ("sdma group profile: PHASE median ...").
class GroupPhaseTimer {
public:
  explicit GroupPhaseTimer(GroupPhase phase);
  ~GroupPhaseTimer();
  GroupPhaseTimer(const GroupPhaseTimer &) = delete;
  GroupPhaseTimer &operator=(const GroupPhaseTimer &) = delete;

private:
  GroupPhase phase_;
  int64_t startNs_ = -1; // -1: not timing
};

/// A launch of one round of a group, as streamConflict sees it: which of
/// the round's launches it starts in (`unit`), its job, program rank and
/// stream, and whether its kernel queues on the stream (a GPU's).
struct RoundLaunch {
  size_t unit = 0;
  uint64_t job = 0;
  int rank = 0;
  const void *stream = nullptr;
  bool queues = true;
  /// CommKernel::streamDomain (null: unknown, compared with every one).
  const void *domain = nullptr;
};
/// Two ranks of one job on one queueing stream (of one domain) that start
/// in different launches: the first launch's ranks would wait for the
/// other's, queued behind it, until the timeout. The message names them,
/// and `job` gets their job; "" where none. (A rank on the legacy default
/// stream and another on a blocking stream of the same GPU wait for each
/// other too: not seen here, they wait until the timeout.)
std::string streamConflict(const std::vector<RoundLaunch> &launches,
                           uint64_t *job = nullptr);

/// Runs `tasks` side by side, the first on this thread, the others on
/// worker threads kept between groups (an idle one spins a while before it
/// sleeps); returns when all are done. None may throw.
void runTasks(std::vector<std::function<void()>> &tasks);

class GroupLaunch {
public:
  /// The group whose calls the calling thread makes, or null.
  static GroupLaunch *current();
  /// Makes `group` the calling thread's for call `call` of it while alive;
  /// with `probe`, a call that would go the whole way defers instead
  /// (probing()).
  class Scope {
  public:
    Scope(GroupLaunch *group, int call, bool probe = false);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    GroupLaunch *previous_;
    int previousCall_;
    int previousProbe_;
  };
  /// Whether the calling thread's call is runGroup's probe: it may start
  /// as made before (CallPath::replayed: nothing to meet), but one that
  /// would go the whole way (planning, agreement, an exchange: the host
  /// may meet the other ranks) calls defer() and returns, having done
  /// nothing, to run again on a thread of its communicator's.
  static bool probing();
  /// Said by a probed call that did nothing (false then, its error unset).
  static void defer();
  /// Whether the calling thread's probed call deferred (and clears it).
  static bool deferred();

  /// Holds `launch` of `kernel` for `launcher`'s communicator (a DMA
  /// launch: started alone).
  void hold(Launcher &launcher, CommKernel &kernel, KernelLaunch launch,
            bool dma);
  /// Holds other work of the communicator's (a one-rank copy), kept in its
  /// order; it returns a failure, if any.
  void hold(Launcher &launcher, std::function<Error()> work);
  /// Starts what was held; errors[call] gets each call's first failure.
  void start(std::vector<Error> &errors);

private:
  struct Held {
    Launcher *launcher = nullptr;
    CommKernel *kernel = nullptr; // null: `work`
    KernelLaunch launch;
    bool dma = false;
    std::function<Error()> work;
    int call = 0;
  };
  /// Starts `unit` (a launch alone, or launches of one group key that
  /// their kernel takes as one) of `round`; a group launch the device
  /// refuses falls back to each alone, side by side. Ranks that share a GPU
  /// context with other threads' hand their launches in (handInTo).
  void startUnit(const std::vector<Held *> &unit,
                 const std::vector<std::vector<Held *>> &round,
                 std::vector<Error> &errors, std::vector<Launcher *> &failed);
  /// The room every launch of `unit` goes to (null: none, or several, or
  /// a DMA launch among them).
  static CoLaunch *roomOf(const std::vector<Held *> &unit);
  /// Merges the units of a room that this round does not hold whole
  /// (ranks of other threads share the GPU context) into one: handed in
  /// part by part, the first part would wait for the next (a group split
  /// over launches: SDMA_GROUP_LAUNCH=0, a refused group launch, more
  /// ranks than one launch takes). The room then starts them with the
  /// other threads', as one launch where it can, else each alone.
  static void handRoomsWhole(std::vector<std::vector<Held *>> &units);
  /// The CoLaunch `unit` is handed to: its ranks share a GPU context with
  /// ranks of other threads, and it holds every one of them in `round` (a
  /// group that holds them all but split them over launches starts them
  /// as before: handing in one part would wait for the other). Null: none.
  static CoLaunch *handInTo(const std::vector<Held *> &unit,
                            const std::vector<std::vector<Held *>> &round);
  /// Starts a round's `units`: one after another where their kernels queue
  /// on streams, else side by side.
  void startUnits(const std::vector<std::vector<Held *>> &units,
                  std::vector<Error> &errors, std::vector<Launcher *> &failed);
  /// streamConflict of a round's `units`, each a launch.
  std::string conflict(const std::vector<std::vector<Held *>> &units,
                       uint64_t *job = nullptr);
  /// Fails `which` (each launcher's call) with `why`.
  void failHeld(const std::vector<Held *> &which, const std::string &why,
                std::vector<Error> &errors, std::vector<Launcher *> &failed);

  std::mutex mutex_;
  std::vector<Held> held_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_GROUPLAUNCH_H
