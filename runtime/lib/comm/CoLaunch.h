//===- CoLaunch.h - the calls of ranks that share a GPU context -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ranks of one job that are threads of one process on one GPU (each its own
// communicator and stream) share the device's context, and a context's
// streams reach the GPU through a few hardware queues (CUDA: 8 unless
// CUDA_DEVICE_MAX_CONNECTIONS says otherwise; HIP: GPU_MAX_HW_QUEUES, 4).
// Two ranks' streams on one queue start their kernels in the order they
// were enqueued, and a kernel that waits for its own stream's previous one
// holds up every launch behind it. A rank a call ahead (a low-latency call
// ends once its peers' data is in, and the host enqueues the next at once)
// thus puts its next kernel at the queue's head with a peer's kernel of
// the previous call behind it, which that call's kernel waits for: until
// the timeout (8 ranks as threads on one H100: most runs timed out, the
// kernels that came late then seeing their peers gone).
//
// So the launches of such ranks meet on the host and start as one: each
// rank's thread hands its launch to the ranks' CoLaunch and waits; the last
// to come starts all of them as one group launch (CommKernel::launchGroup:
// a block row per rank, after what each rank's stream holds, before what
// it gets next). A call of the context is then one kernel, which waits for
// no kernel behind it.
//
//   rank 0's thread:  hand ─ wait ────────────────────────────── return
//   rank 1's thread:     hand ─ wait ─────────────────────────── return
//   rank 2's thread:        hand (the last) ─ launchGroup(0,1,2) ─ return
//
// Round k is every member's k-th handed launch: the load/store kernels of
// collectives, which every rank makes in the same order (a DMA or
// point-to-point launch starts alone). A thread may hand several members'
// launches at once (a group's, GroupLaunch.h). A member that does not come
// within the timeout fails the round for the ones that did, which withdraw
// (nothing started), and the room is broken: which call each member makes
// next is unknown from then on (a member that withdrew call k may hand in
// call k+1 beside a late member's call k, and calls of one signature
// would run together on different data), so every later launch of the
// room is refused at once, naming the first cause; the communicators'
// other calls (point-to-point outside an ordered room, DMA) go on, and a
// job recovers as after any timeout, by destroying and recreating them.
// A stopped member (its communicator aborted or failed) breaks the room
// alike, so the others fail at once instead of at the timeout. A round
// whose launches one group launch cannot take
// (builds differ, more ranks than it holds, or the device refused it)
// starts each launch alone, as before.
//
// The launching thread orders every rank's stream around the launch (an
// event on each before, a wait on each after: on one H100 at 8 ranks the
// round's serial part took 14-18 us, a call 30-36 us against 15 alone).
// With SDMA_COLAUNCH_MARKS=1 each rank's own thread marks its stream before
// it hands in and waits for the launch's end mark after (markStream,
// launchGroupMarked, waitMark), leaving the launching thread the waits on
// the marks, the launch and one record: correct on one H100 (8 threads,
// one hardware queue), not yet timed.
//
// Mode::Ordered (SDMA_COLAUNCH_MODE=ordered) keeps the rendezvous for the
// first round only. Where it shows every member on a stream of its own,
// each later launch is its own thread's, on its own stream, made as soon
// as every member has launched the round before (the gate):
//
//   rank 0:  launch k ─ return          gate(k) ─ launch k+1 ─ return
//   rank 1:        launch k ─ return                gate(k) ─ launch k+1
//                                      (gate(k): every rank launched k)
//
// A hardware queue then holds every round-k kernel ahead of every
// round-k+1 one. A queue blocks only at a kernel that waits for its own
// stream's previous kernel (round k); that one waits for round-k kernels,
// which are all ahead. The gate looks at whatever launch is last on the
// stream, whichever member made it (members may share or change streams):
// a launch behind one that waits for its own member is refused
// (InvalidUsage), one behind a launch that waits for others is held until
// they are in. Point-to-point launches (launchPeer) take the same
// gate, with what each waits for: a send the receiver's receives, a
// receive the sender's sends. Collectives ran correctly on one H100 (8
// threads, one hardware queue, every byte); not yet timed, nor
// point-to-point on a GPU: so not the default.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_COLAUNCH_H
#define SDMA_RUNTIME_LIB_COMM_COLAUNCH_H

#include "comm/CommDevice.h"
#include "sdma/runtime/Error.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sdma::rt {

class CoLaunch {
public:
  /// How a room's rounds start once every member's stream is known.
  enum class Mode {
    /// Every round as one launch (the last member to come starts it).
    Together,
    /// From the second round on, where the first showed every member on
    /// a stream of its own: each member launches its own kernel on its own
    /// stream at once, but not before every member has launched the round
    /// before (the gate). A hardware queue then holds every round-k kernel
    /// ahead of any round-k+1 one: a kernel that blocks the queue (it waits
    /// for its own stream's previous one) has the peers that one waits for
    /// ahead of it. No rendezvous per call, no stream ordering.
    Ordered,
  };

  /// One member's launch handed in: its kernel (the launcher's) and launch.
  struct Hand {
    CommKernel *kernel = nullptr;
    KernelLaunch launch;
  };

  /// The CoLaunch of `job`'s ranks `members` (program ranks, ascending: the
  /// job's ranks in this process on one GPU), made by the first to ask;
  /// every member's launcher holds it.
  static std::shared_ptr<CoLaunch> join(uint64_t job,
                                        const std::vector<int> &members,
                                        Mode mode = Mode::Together);
  explicit CoLaunch(std::vector<int> members);

  const std::vector<int> &members() const { return members_; }
  /// CommOptions::coLaunchMode (join's); set before the first launch.
  void setMode(Mode mode) { mode_ = mode; }
  /// Whether the rounds now start through the gate (Mode::Ordered, after
  /// a first round that found every member on its own stream).
  bool ordered() const { return ordered_.load(std::memory_order_acquire); }
  /// Whether each rank's own thread orders its stream around the launch
  /// (SDMA_COLAUNCH_MARKS=1, join's default), not the launching thread.
  /// Set before the first launch.
  void setOwnMarks(bool on) { ownMarks_ = on; }
  /// Hands `hands` (launches of distinct members, each its programRank)
  /// in and returns once their round has started or failed: `errors` then
  /// holds each hand's failure (empty where it started: Remote where a
  /// member did not come within `timeoutMs`, nothing started; Device where
  /// its launch failed; `stop`'s error where, asked every few milliseconds
  /// while waiting, it said to stop: the communicator was aborted or has
  /// failed). False where any failed.
  bool launch(std::vector<Hand> hands, uint64_t timeoutMs,
              std::vector<Error> &errors,
              const std::function<bool(Error &)> &stop = nullptr);

  /// Member `rank`'s communicator was aborted (from any thread, between
  /// calls or in one): the room breaks, so the others' launches, waiting
  /// or to come, fail at once naming it rather than at the timeout.
  void memberAborted(int rank);

  /// How a point-to-point launch went (launchPeer).
  enum class PeerStart {
    Started,
    /// Nothing started (the gate timed out or was stopped; not a member).
    Refused,
    /// The launch itself failed.
    Failed,
  };
  /// Member `rank`'s point-to-point launch (PointToPoint::run) on `stream`,
  /// which peers make in pairs, not rounds: in an ordered room, where the
  /// kernel `queues` on its stream (not the CPU device's, which runs
  /// before `start` returns), once what `rank`'s last launch on `stream`
  /// waits for is enqueued (the gate, as launch's), `start` is
  /// called (the lock released); in any room the launch's pair counts are
  /// then noted: the chunks `rank` has sent to and received from each rank
  /// (cumulative, by rank; `depth` chunks a sender may run ahead). What it
  /// waits for, which the member's next launch's gate awaits: each peer
  /// member it receives from having launched its sends through the last
  /// chunk, each it sends to its receives through the last chunk less
  /// `depth`.
  PeerStart launchPeer(int rank, const void *stream, bool queues,
                       const std::vector<uint64_t> &sent,
                       const std::vector<uint64_t> &received, uint64_t depth,
                       uint64_t timeoutMs,
                       const std::function<bool(std::string &)> &start,
                       Error &error,
                       const std::function<bool(Error &)> &stop = nullptr);

private:
  /// What the last launch on a stream waits for (Mode::Ordered), whoever
  /// made it (member `member`): every member's `round` collective
  /// launches, and peers' sends or receives, as (member, chunks that
  /// member has launched to or from `member`).
  struct Pending {
    size_t member = 0;
    uint64_t round = 0;
    std::vector<std::pair<size_t, uint64_t>> sends, receives;
    uint64_t claim = 0; // note's number for it
  };
  /// The members (indices) whose launches the last launch on `stream`
  /// (any member's) waits for and are not all enqueued; empty: a launch
  /// may go there (one on another stream does not queue behind it).
  std::vector<size_t> awaited(const void *stream) const;
  /// Where member `m`'s launch `hand` queues: its stream, or where its
  /// kernel does not queue there (the CPU device's runs before it
  /// returns) a lane of the member's own.
  const void *lane(const Hand &hand, size_t m) const;
  /// What the launch now on `stream` waits for (a launch in flight claims
  /// it before the lock is released); satisfied entries are dropped. The
  /// claim's number.
  uint64_t note(const void *stream, Pending next);
  /// A launch that did not start: its claim on `stream` goes, unless a
  /// later launch's replaced it.
  void unclaim(const void *stream, uint64_t claim);
  /// Waits until each (member, stream) of `at` may launch (awaited), the
  /// timeout (then `error` names the members awaited, Remote) or `stop`
  /// (its error). Refused at once (InvalidUsage) where the last launch on
  /// one of the streams waits for one of `at`'s members: behind it, that
  /// member's launch would wait for itself. Holds `lock` on entry and on
  /// return.
  bool gate(const std::vector<std::pair<size_t, const void *>> &at,
            uint64_t timeoutMs, const std::function<bool(Error &)> &stop,
            std::unique_lock<std::mutex> &lock, Error &error);
  /// Mode::Ordered's call: waits until every other member has launched
  /// the round before this one (the timeout, or `stop`), then launches
  /// `hands` on their own streams (one group launch where several, as
  /// GroupLaunch's units). Holds `lock` on entry and on return.
  bool launchOrdered(std::vector<Hand> &hands, const std::vector<size_t> &at,
                     uint64_t timeoutMs, std::vector<Error> &errors,
                     const std::function<bool(Error &)> &stop,
                     std::unique_lock<std::mutex> &lock);
  /// Waits (spinning, then asleep, `lock` released) until `ready()` or the
  /// timeout, or `stop` says this member must not wait (then in `stopped`);
  /// whether `ready()`. Holds `lock` on entry and on return.
  /// `mayBeReady` (read without the lock; false only where ready() is)
  /// spares the lock while spinning: checked each time something changed,
  /// ready() itself only once it holds, or every kRecheck.
  bool waitUntil(const std::function<bool()> &ready, uint64_t timeoutMs,
                 const std::function<bool(Error &)> &stop, Error &stopped,
                 std::unique_lock<std::mutex> &lock,
                 const std::function<bool()> &mayBeReady = nullptr);
  /// After the first round of a Mode::Ordered room (together, every
  /// member's launch started, on `streams` by member): ordered from now on
  /// where every member was on a stream of its own, or (no kernel
  /// `queues` on its stream: each launch runs before it returns, the CPU
  /// device's) the streams do not matter.
  void decideOrdered(std::vector<const void *> streams, bool queues);
  /// Starts the round's launches (all members'), into results_: as one
  /// where fusable, else each alone.
  void startRound();
  /// Two of `hands` (indices, the earlier first) on one stream their
  /// kernels queue on: launched one by one, the later would wait behind
  /// the earlier, which waits for it. None: nullopt.
  static std::optional<std::pair<size_t, size_t>>
  sharedStream(const std::vector<Hand> &hands);
  /// Whether one group launch takes all of `round` (one build, path and
  /// chunk, and no more ranks than the build holds).
  static bool fusable(const std::vector<Hand> &round);
  /// Starts each of `hands` alone: in order on this thread where every
  /// kernel queues on its stream, else side by side (a launch that runs
  /// before it returns, the CPU device's, waits for the others'). Each
  /// hand's failure ("" started) in `why`.
  static void startEach(const std::vector<Hand> &hands,
                        std::vector<std::string> &why);
  /// The members that did not come to the open round, as "rank 1, rank 3".
  std::string missing() const;
  /// Members `which` (indices) as "rank 1, rank 3".
  std::string names(const std::vector<size_t> &which) const;

  const std::vector<int> members_;
  bool ownMarks_ = false;
  Mode mode_ = Mode::Together;
  std::atomic<bool> ordered_{false};
  /// Mode::Ordered: the rounds each member has launched.
  std::vector<uint64_t> launched_;
  /// launched_'s copy, read without the lock: a member spinning at the
  /// gate takes the lock again only once the rounds it waits for are in
  /// (with 8 members, each taking it at every peer's launch made a call
  /// 5x one launched alone).
  std::unique_ptr<std::atomic<uint64_t>[]> launchedNow_;
  /// By stream, what its last launch (any member's, one in flight
  /// included) waits for, while not all of it is enqueued.
  std::map<const void *, Pending> pending_;
  /// Point-to-point chunks each member has launched, [from][to]: sends
  /// and receives (noted in every room, so that an ordered one counts from
  /// the communicator's start as PointToPoint does).
  std::vector<std::vector<uint64_t>> sentTo_, receivedFrom_;
  std::mutex mutex_;
  std::condition_variable wake_;
  /// The open round's launches, by member index (kernel null: not yet).
  std::vector<Hand> slots_;
  size_t handed_ = 0;
  /// The members that came to the open round.
  std::vector<bool> came_;
  /// Set once a member withdrew a launch (a member did not come in time,
  /// or it was stopped): which call each member makes next is unknown
  /// from then on, so every later launch is refused with it (rounds would
  /// pair different calls, whose bytes no check tells apart).
  Error broken_;
  uint64_t claims_ = 0;
  /// Breaks the room (broken_, the first reason kept) with `why`: every
  /// waiting member withdraws, every later launch is refused. Under the
  /// lock.
  void breakRoom(const Error &why);
  /// breakRoom for members `who` stopped by `why` (their communicator
  /// aborted or failed), as the others see it (Remote, naming them).
  void breakRoomStopped(const std::vector<size_t> &who, const Error &why);
  /// Rounds started (the open one is this number).
  std::atomic<uint64_t> done_{0};
  /// Bumped whenever a round starts or a member launches through the
  /// gate: a spinning waiter takes the lock again only when it moved.
  std::atomic<uint64_t> progress_{0};
  /// The last started round's outcome by member ("" started): a member
  /// reads its own before it hands in again, so no later round overwrites
  /// it first.
  std::vector<std::string> results_;
  /// The last started round's group launch, marked at its end (null: none
  /// to wait for), and the stream it ran on: every member on another
  /// stream orders its own after the mark (CommKernel::waitMark).
  void *after_ = nullptr;
  const void *afterStream_ = nullptr;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_COLAUNCH_H
