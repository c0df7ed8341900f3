//===- CoLaunch.cpp - the calls of ranks that share a GPU context ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/CoLaunch.h"
#include "comm/GroupLaunch.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <thread>

using namespace sdma::rt;

namespace {
/// Every CoLaunch of this process, by job and members.
struct Rooms {
  std::mutex mutex;
  std::map<std::pair<uint64_t, std::vector<int>>, std::weak_ptr<CoLaunch>> open;
  static Rooms &get() {
    static Rooms *rooms = new Rooms(); // outlives every communicator
    return *rooms;
  }
};

/// How long a member spins for the others before it sleeps: they are
/// usually a few microseconds behind (each thread's call ends here), and a
/// wake-up from sleep costs as much again.
constexpr auto kSpin = std::chrono::microseconds(200);
/// How often a spinning member whose hint says no looks under the lock
/// anyway (what the hint does not see: a broken room, a claim dropped).
constexpr auto kRecheck = std::chrono::microseconds(20);

/// SDMA_COLAUNCH_MARKS=1: each rank's own thread orders its stream around
/// the launch (CommKernel::markStream, waitMark), not the launching thread
/// alone: less serial work per round. Off by default: correct on one H100
/// (8 threads, one hardware queue: bench/results/gpu-runs/
/// h100-s66-call1.txt) but not yet timed.
bool ownMarksByDefault() {
  static const bool on = [] {
    const char *v = std::getenv("SDMA_COLAUNCH_MARKS");
    return v && std::string(v) == "1";
  }();
  return on;
}
} // namespace

std::shared_ptr<CoLaunch>
CoLaunch::join(uint64_t job, const std::vector<int> &members, Mode mode) {
  Rooms &rooms = Rooms::get();
  std::lock_guard<std::mutex> lock(rooms.mutex);
  auto key = std::make_pair(job, members);
  if (std::shared_ptr<CoLaunch> room = rooms.open[key].lock())
    return room;
  // Rooms whose members have all gone, dropped as they are found.
  for (auto it = rooms.open.begin(); it != rooms.open.end();)
    it = it->second.expired() ? rooms.open.erase(it) : std::next(it);
  auto room = std::make_shared<CoLaunch>(members);
  room->setOwnMarks(ownMarksByDefault());
  room->setMode(mode);
  rooms.open[key] = room;
  return room;
}

CoLaunch::CoLaunch(std::vector<int> members)
    : members_(std::move(members)),
      launchedNow_(new std::atomic<uint64_t>[members_.size()]()),
      slots_(members_.size()), came_(members_.size(), false),
      results_(members_.size()) {
  sentTo_.assign(members_.size(), std::vector<uint64_t>(members_.size(), 0));
  receivedFrom_ = sentTo_;
}

std::string CoLaunch::names(const std::vector<size_t> &which) const {
  std::string out;
  for (size_t i : which)
    out += (out.empty() ? "rank " : ", rank ") + std::to_string(members_[i]);
  return out;
}

std::string CoLaunch::missing() const {
  std::vector<size_t> absent;
  for (size_t i = 0; i < members_.size(); ++i)
    if (!came_[i])
      absent.push_back(i);
  return names(absent);
}

bool CoLaunch::launch(std::vector<Hand> hands, uint64_t timeoutMs,
                      std::vector<Error> &errors,
                      const std::function<bool(Error &)> &stop) {
  errors.assign(hands.size(), Error());
  // Set in round 0, which every member's first call is part of: the same
  // for the whole of this call.
  const bool ordered = ordered_.load(std::memory_order_acquire);
  // Each hand's stream marked by its own thread (a group launch then only
  // waits for the marks); where marking fails, the launch marks it.
  std::vector<std::pair<CommKernel *, void *>> own;
  for (Hand &h : hands) {
    std::string ignored;
    if (ordered || !ownMarks_ || !h.kernel ||
        !h.kernel->markStream(h.launch.stream, h.launch.before, ignored))
      h.launch.before = nullptr;
    own.emplace_back(h.kernel, h.launch.stream);
  }
  std::vector<size_t> at(hands.size());
  std::unique_lock<std::mutex> lock(mutex_);
  for (size_t k = 0; k < hands.size(); ++k) {
    int rank = hands[k].launch.programRank;
    auto it = std::lower_bound(members_.begin(), members_.end(), rank);
    bool taken = it == members_.end() || *it != rank || !hands[k].kernel ||
                 slots_[size_t(it - members_.begin())].kernel;
    for (size_t j = 0; j < k && !taken; ++j)
      taken = at[j] == size_t(it - members_.begin());
    if (taken) {
      for (Error &e : errors)
        e.fail(ErrorKind::Internal,
               "a launch of rank " + std::to_string(rank) +
                   " handed in twice, or by a rank that shares no GPU "
                   "context with the others (CoLaunch)");
      return false;
    }
    at[k] = size_t(it - members_.begin());
  }
  if (!broken_.empty()) {
    errors.assign(hands.size(), broken_);
    return false;
  }
  if (ordered)
    return launchOrdered(hands, at, timeoutMs, errors, stop, lock);
  for (size_t k = 0; k < hands.size(); ++k) {
    slots_[at[k]] = std::move(hands[k]);
    came_[at[k]] = true;
  }
  handed_ += hands.size();
  const uint64_t round = done_.load(std::memory_order_relaxed);
  if (handed_ == members_.size()) {
    // The first round of an ordered room shows every member's stream.
    std::vector<const void *> streams;
    bool queues = false; // a stream shared is a hazard only where queued
    if (round == 0 && mode_ == Mode::Ordered)
      for (const Hand &h : slots_) {
        streams.push_back(h.launch.stream);
        queues = queues || h.kernel->queuesOnStream();
      }
    // A round that throws is failed, never left half started: the
    // members' waits end as for any round.
    try {
      startRound();
    } catch (const std::exception &e) {
      results_.assign(members_.size(),
                      std::string("starting the launch: ") + e.what());
    }
    if (!streams.empty() &&
        std::all_of(results_.begin(), results_.end(),
                    [](const std::string &why) { return why.empty(); }))
      decideOrdered(std::move(streams), queues);
    done_.store(round + 1, std::memory_order_release);
    progress_.fetch_add(1, std::memory_order_release);
    lock.unlock();
    wake_.notify_all();
  } else {
    GroupPhaseTimer timer(GroupPhase::CoWait);
    Error stopped;
    auto started = [&] {
      return done_.load(std::memory_order_relaxed) != round;
    };
    if (!waitUntil([&] { return started() || !broken_.empty(); }, timeoutMs,
                   stop, stopped, lock) ||
        !started()) {
      // Withdrawn, nothing started; the room breaks (broken_).
      std::string who = missing();
      for (size_t k = 0; k < at.size(); ++k) {
        slots_[at[k]] = Hand();
        came_[at[k]] = false;
      }
      handed_ -= at.size();
      Error why = stopped;
      if (why.empty() && broken_.empty())
        why.fail(ErrorKind::Remote,
                 who +
                     " (threads of this process on this GPU, whose calls "
                     "start as one launch with this rank's) did not make "
                     "the call within " +
                     std::to_string(timeoutMs) +
                     " ms: nothing was started (it exited, failed, or made "
                     "a different number of calls)");
      if (!stopped.empty())
        breakRoomStopped(at, stopped);
      else if (!why.empty())
        breakRoom(why);
      errors.assign(at.size(), why.empty() ? broken_ : why);
      return false;
    }
    lock.unlock();
  }
  // The round is started: no member hands in again before every one of its
  // own has read its result and ordered its stream after the launch, so
  // results_ and after_ hold this round's.
  bool ok = true;
  for (size_t k = 0; k < at.size(); ++k) {
    std::string why = results_[at[k]];
    if (why.empty() && after_ && own[k].second != afterStream_ &&
        !own[k].first->waitMark(own[k].second, after_, why))
      why += " (ordering this rank's stream after the launch)";
    if (!why.empty()) {
      errors[k].fail(ErrorKind::Device, why);
      ok = false;
    }
  }
  return ok;
}

bool CoLaunch::waitUntil(const std::function<bool()> &ready, uint64_t timeoutMs,
                         const std::function<bool(Error &)> &stop,
                         Error &stopped, std::unique_lock<std::mutex> &lock,
                         const std::function<bool()> &mayBeReady) {
  const auto start = std::chrono::steady_clock::now();
  if (ready())
    return true;
  // Spinning, the lock taken again only once something changed (and the
  // hint says it may be ready, or it was not looked at for kRecheck).
  uint64_t seen = progress_.load(std::memory_order_acquire);
  auto looked = start;
  lock.unlock();
  bool done = false;
  for (auto now = start; !done && now - start < kSpin;
       now = std::chrono::steady_clock::now()) {
    std::this_thread::yield();
    uint64_t moved = progress_.load(std::memory_order_acquire);
    if (moved == seen ||
        (mayBeReady && !mayBeReady() && now - looked < kRecheck))
      continue;
    seen = moved;
    looked = now;
    lock.lock();
    done = ready();
    lock.unlock();
  }
  lock.lock();
  // Asleep until ready, the timeout, or (checked every few milliseconds,
  // the lock released) `stop` says this member must not wait.
  const auto deadline = start + std::chrono::milliseconds(timeoutMs);
  while (!ready()) {
    auto until = std::min(deadline, std::chrono::steady_clock::now() +
                                        std::chrono::milliseconds(5));
    if (wake_.wait_until(lock, until, ready))
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    if (stop) {
      lock.unlock();
      bool halt = stop(stopped);
      lock.lock();
      if (halt)
        return ready();
    }
  }
  return true;
}

std::vector<size_t> CoLaunch::awaited(const void *stream) const {
  std::vector<size_t> out;
  auto it = pending_.find(stream);
  if (it == pending_.end())
    return out; // nothing on the stream waits for a peer
  const Pending &p = it->second;
  for (size_t n = 0; n < members_.size(); ++n)
    if (launched_[n] < p.round)
      out.push_back(n);
  for (auto [n, chunks] : p.sends)
    if (sentTo_[n][p.member] < chunks)
      out.push_back(n);
  for (auto [n, chunks] : p.receives)
    if (receivedFrom_[n][p.member] < chunks)
      out.push_back(n);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool CoLaunch::gate(const std::vector<std::pair<size_t, const void *>> &at,
                    uint64_t timeoutMs,
                    const std::function<bool(Error &)> &stop,
                    std::unique_lock<std::mutex> &lock, Error &error) {
  // Behind a launch that waits for one of these members, that member's
  // launch would wait for itself: refused, now or once another member's
  // launch there made it so while this one waited.
  auto behindItself = [&](Error &refusal) {
    for (auto [m, stream] : at)
      for (size_t n : awaited(stream))
        for (auto [self, unused] : at)
          if (n == self) {
            size_t before = pending_.at(stream).member;
            refusal.fail(
                ErrorKind::InvalidUsage,
                "rank " + std::to_string(members_[m]) +
                    "'s launch would go on a stream behind rank " +
                    std::to_string(members_[before]) + "'s, which waits for " +
                    (n == m ? "it"
                            : "rank " + std::to_string(members_[n]) + "'s") +
                    " (threads of this process on this GPU on one stream): "
                    "give each thread a stream of its own, or make such "
                    "calls from one thread in a group (sdmaGroupStart): "
                    "nothing was started");
            return true;
          }
    return false;
  };
  auto ready = [&] {
    return std::all_of(at.begin(), at.end(), [&](const auto &one) {
      return awaited(one.second).empty();
    });
  };
  // Without the lock: whether every member has launched the rounds that
  // the launches now last on these streams wait for (point-to-point ones
  // wait for chunks too: always looked at).
  uint64_t rounds = 0;
  bool chunks = false;
  for (auto [m, stream] : at)
    if (auto it = pending_.find(stream); it != pending_.end()) {
      rounds = std::max(rounds, it->second.round);
      chunks =
          chunks || !it->second.sends.empty() || !it->second.receives.empty();
    }
  auto mayBeReady = [&] {
    if (chunks)
      return true;
    for (size_t n = 0; n < members_.size(); ++n)
      if (launchedNow_[n].load(std::memory_order_acquire) < rounds)
        return false;
    return true;
  };
  Error stopped, refusal;
  GroupPhaseTimer timer(GroupPhase::CoWait);
  if (waitUntil(
          [&] { return ready() || !broken_.empty() || behindItself(refusal); },
          timeoutMs, stop, stopped, lock, mayBeReady) &&
      broken_.empty()) {
    if (!behindItself(refusal))
      return true;
    error = refusal;
    return false;
  }
  if (!stopped.empty()) {
    std::vector<size_t> who;
    for (auto [m, unused] : at)
      who.push_back(m);
    breakRoomStopped(who, stopped);
    error = stopped;
    return false;
  }
  if (!broken_.empty()) {
    error = broken_;
    return false;
  }
  std::vector<size_t> late;
  for (auto [m, stream] : at)
    for (size_t n : awaited(stream))
      late.push_back(n);
  std::sort(late.begin(), late.end());
  late.erase(std::unique(late.begin(), late.end()), late.end());
  error.fail(ErrorKind::Remote,
             names(late) +
                 " (threads of this process on this GPU, whose launches are "
                 "ordered with this rank's) did not make the call this "
                 "rank's previous one waits for within " +
                 std::to_string(timeoutMs) +
                 " ms: nothing was started (it exited, failed, or made a "
                 "different call)");
  breakRoom(error);
  return false;
}

void CoLaunch::breakRoom(const Error &why) {
  if (!broken_.empty())
    return;
  broken_.fail(why.kind,
               why.message +
                   "; the co-launched calls of this GPU's ranks are out of "
                   "step from here on: each later one is refused (destroy "
                   "and recreate the communicators)");
  progress_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();
}

void CoLaunch::breakRoomStopped(const std::vector<size_t> &who,
                                const Error &why) {
  breakRoom(Error{ErrorKind::Remote,
                  names(who) +
                      " stopped (its communicator was aborted or has "
                      "failed: " +
                      why.message + ")"});
}

void CoLaunch::memberAborted(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::lower_bound(members_.begin(), members_.end(), rank);
  if (it == members_.end() || *it != rank)
    return;
  breakRoom(Error{ErrorKind::Remote,
                  "rank " + std::to_string(rank) +
                      " (threads of this process on this GPU, whose calls "
                      "start with this rank's) aborted its communicator "
                      "(ncclCommAbort / sdmaCommAbort)"});
}

const void *CoLaunch::lane(const Hand &hand, size_t m) const {
  return hand.kernel->queuesOnStream() ? hand.launch.stream : &members_[m];
}

uint64_t CoLaunch::note(const void *stream, Pending next) {
  // What other streams wait for that is all in: forgotten.
  for (auto it = pending_.begin(); it != pending_.end();)
    it = it->first != stream && awaited(it->first).empty() ? pending_.erase(it)
                                                           : std::next(it);
  next.claim = ++claims_;
  pending_[stream] = std::move(next);
  return claims_;
}

void CoLaunch::unclaim(const void *stream, uint64_t claim) {
  auto it = pending_.find(stream);
  if (it != pending_.end() && it->second.claim == claim)
    pending_.erase(it);
}

CoLaunch::PeerStart
CoLaunch::launchPeer(int rank, const void *stream, bool queues,
                     const std::vector<uint64_t> &sent,
                     const std::vector<uint64_t> &received, uint64_t depth,
                     uint64_t timeoutMs,
                     const std::function<bool(std::string &)> &start,
                     Error &error, const std::function<bool(Error &)> &stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = std::lower_bound(members_.begin(), members_.end(), rank);
  if (it == members_.end() || *it != rank) {
    error.fail(ErrorKind::Internal, "a point-to-point launch of rank " +
                                        std::to_string(rank) +
                                        ", which is not a member (CoLaunch)");
    return PeerStart::Refused;
  }
  const size_t m = size_t(it - members_.begin());
  // A launch that runs before it returns (the CPU device's) waits in no
  // hardware queue: gating it could only hold up the peer it waits for.
  const bool ordered = ordered_.load(std::memory_order_relaxed) && queues;
  if (ordered && !broken_.empty()) {
    error = broken_;
    return PeerStart::Refused;
  }
  if (ordered && !gate({{m, stream}}, timeoutMs, stop, lock, error))
    return PeerStart::Refused;
  // What this launch waits for: a send's last chunk needs the receiver to
  // have taken chunk `depth` before it; a receive's, the sender's chunk.
  Pending next{m, 0, {}, {}};
  for (size_t n = 0; n < members_.size(); ++n) {
    size_t peer = size_t(members_[n]);
    if (n == m || peer >= sent.size() || peer >= received.size())
      continue;
    if (sent[peer] > sentTo_[m][n] && sent[peer] > depth)
      next.receives.emplace_back(n, sent[peer] - depth);
    if (received[peer] > receivedFrom_[m][n])
      next.sends.emplace_back(n, received[peer]);
  }
  // Claimed before the lock goes: a launch on this stream meanwhile sees
  // it (the stream's previous one, which the gate found all in, imposes
  // nothing).
  const uint64_t claim = ordered ? note(stream, next) : 0;
  lock.unlock();
  std::string why;
  bool ok;
  {
    GroupPhaseTimer timer(ordered ? GroupPhase::CoOrdered : GroupPhase::Count);
    ok = start(why);
  }
  lock.lock();
  if (!ok) {
    if (ordered)
      unclaim(stream, claim);
    error.fail(ErrorKind::Device, why);
    return PeerStart::Failed;
  }
  for (size_t n = 0; n < members_.size(); ++n) {
    size_t peer = size_t(members_[n]);
    if (n == m || peer >= sent.size() || peer >= received.size())
      continue;
    sentTo_[m][n] = std::max(sentTo_[m][n], sent[peer]);
    receivedFrom_[m][n] = std::max(receivedFrom_[m][n], received[peer]);
  }
  progress_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();
  return PeerStart::Started;
}

bool CoLaunch::launchOrdered(std::vector<Hand> &hands,
                             const std::vector<size_t> &at, uint64_t timeoutMs,
                             std::vector<Error> &errors,
                             const std::function<bool(Error &)> &stop,
                             std::unique_lock<std::mutex> &lock) {
  const uint64_t round = launched_[at[0]];
  auto failAll = [&](ErrorKind kind, const std::string &why) {
    for (Error &e : errors)
      e.fail(kind, why);
    return false;
  };
  for (size_t m : at)
    if (launched_[m] != round)
      return failAll(ErrorKind::Internal,
                     "ranks handed in together are at different calls "
                     "(CoLaunch)");
  // The gate: what each one's last launch on its stream waits for is
  // enqueued.
  std::vector<std::pair<size_t, const void *>> on;
  for (size_t k = 0; k < at.size(); ++k)
    on.emplace_back(at[k], lane(hands[k], at[k]));
  Error gated;
  if (!gate(on, timeoutMs, stop, lock, gated)) {
    for (Error &e : errors)
      e = gated;
    return false;
  }
  // Hands on one stream (a group's) go as one launch or not at all.
  const bool sharing = sharedStream(hands).has_value();
  if (sharing && !fusable(hands))
    return failAll(ErrorKind::InvalidUsage,
                   names(at) +
                       " (threads of this process on this GPU) launch on "
                       "one stream and one launch cannot take them: one by "
                       "one, the later would wait behind the earlier, which "
                       "waits for it; give each rank a stream of its own: "
                       "nothing was started");
  // Claimed before the lock goes: a launch on one of these streams
  // meanwhile waits for this round, or is refused where it is this round's
  // (the streams' previous launches, all in, impose nothing).
  std::vector<uint64_t> claims;
  for (size_t k = 0; k < hands.size(); ++k)
    claims.push_back(note(on[k].second, Pending{at[k], round + 1, {}, {}}));
  lock.unlock();
  // Each hand's failure ("" started). Where part of a group launch may
  // run, every hand's round is spent: none may start again.
  std::vector<std::string> why(hands.size());
  bool spent = false;
  {
    GroupPhaseTimer timer(GroupPhase::CoOrdered);
    // Several members of one thread (a group's): one launch, as together;
    // where it cannot take them (or one member), each alone.
    std::string refused;
    bool started = false;
    auto asOne = [&] {
      std::vector<const KernelLaunch *> launches;
      for (const Hand &h : hands)
        launches.push_back(&h.launch);
      return hands[0].kernel->launchGroup(launches, started, refused);
    };
    bool one = false;
    try {
      one = hands.size() > 1 && fusable(hands) && asOne();
    } catch (const std::exception &e) {
      // Failed before it was started: none of them goes.
      why.assign(hands.size(), std::string("starting the launch: ") + e.what());
      one = true;
    }
    if (!one) {
      if (started) {
        why.assign(hands.size(), refused);
        spent = true;
      } else if (sharing) {
        why.assign(hands.size(),
                   "the launch of all of them was refused (" + refused +
                       "), and they share a stream: one by one, the later "
                       "would wait behind the earlier, which waits for it");
      } else {
        startEach(hands, why);
        for (std::string &w : why)
          if (!w.empty() && !refused.empty())
            w += "; the launch of all of them refused before: " + refused;
      }
    }
  }
  lock.lock();
  bool ok = true;
  for (size_t k = 0; k < at.size(); ++k) {
    if (!why[k].empty()) {
      errors[k].fail(ErrorKind::Device, why[k]);
      ok = false;
    }
    if (!why[k].empty() && !spent) {
      // Not started: its stream is as the gate found it (its claim goes,
      // unless a hand on the same stream claimed it again). The peers'
      // launches of this round are in and wait for this one: the room is
      // out of step (its next call would pair with theirs).
      unclaim(on[k].second, claims[k]);
      breakRoom(
          Error{ErrorKind::Remote, "rank " + std::to_string(members_[at[k]]) +
                                       "'s launch failed (" + why[k] + ")"});
      continue;
    }
    // Launched (or may be, part of a group launch): the others may launch
    // the next round.
    launched_[at[k]] = round + 1;
    launchedNow_[at[k]].store(round + 1, std::memory_order_release);
    note(on[k].second, Pending{at[k], round + 1, {}, {}});
  }
  progress_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();
  return ok;
}

void CoLaunch::decideOrdered(std::vector<const void *> streams, bool queues) {
  std::vector<const void *> sorted(streams);
  std::sort(sorted.begin(), sorted.end());
  if (queues &&
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return; // members sharing a stream: every round as one launch
  launched_.assign(members_.size(), 1);
  for (size_t m = 0; m < members_.size(); ++m)
    launchedNow_[m].store(1, std::memory_order_release);
  pending_.clear();
  for (size_t m = 0; m < members_.size(); ++m)
    pending_[queues ? streams[m] : &members_[m]] = Pending{m, 1, {}, {}};
  ordered_.store(true, std::memory_order_release);
}

bool CoLaunch::fusable(const std::vector<Hand> &round) {
  const KernelLaunch &first = round[0].launch;
  const std::string key = round[0].kernel->groupKey();
  bool together = round.size() >= 2 && !key.empty() &&
                  round[0].kernel->groupLimit() >= int(round.size());
  for (const Hand &h : round)
    together = together && h.kernel->groupKey() == key &&
               h.launch.lowLatency == first.lowLatency &&
               h.launch.chunkBytes == first.chunkBytes &&
               h.launch.table.size() == first.table.size();
  return together;
}

void CoLaunch::startRound() {
  std::vector<Hand> round(members_.size());
  round.swap(slots_);
  handed_ = 0;
  came_.assign(members_.size(), false);
  results_.assign(members_.size(), "");
  std::string refused;
  after_ = nullptr;
  afterStream_ = nullptr;
  if (fusable(round)) {
    afterStream_ = round[0].launch.stream;
    GroupPhaseTimer timer(GroupPhase::CoTogether);
    std::vector<const KernelLaunch *> launches;
    for (const Hand &h : round)
      launches.push_back(&h.launch);
    bool started = false;
    if (ownMarks_ ? round[0].kernel->launchGroupMarked(launches, started,
                                                       after_, refused)
                  : round[0].kernel->launchGroup(launches, started, refused))
      return;
    if (started) {
      // Part of it may run: no rank starts again.
      results_.assign(members_.size(), refused);
      return;
    }
    refused = "; the launch of all of them refused before: " + refused;
  }
  // Each alone, in rank order; not where two share a stream.
  if (auto pair = sharedStream(round)) {
    results_.assign(
        members_.size(),
        "rank " + std::to_string(members_[pair->first]) + " and rank " +
            std::to_string(members_[pair->second]) +
            " (threads of this process on this GPU) launch on one "
            "stream, and one launch cannot take the round" +
            refused +
            ": launched one by one, the later would wait behind the "
            "earlier, which waits for it; give each thread a stream of "
            "its own: nothing was started");
    return;
  }
  GroupPhaseTimer timer(GroupPhase::CoAlone);
  startEach(round, results_);
  for (std::string &result : results_)
    if (!result.empty())
      result += refused;
}

std::optional<std::pair<size_t, size_t>>
CoLaunch::sharedStream(const std::vector<Hand> &hands) {
  for (size_t i = 0; i < hands.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (hands[i].kernel->queuesOnStream() &&
          hands[i].launch.stream == hands[j].launch.stream)
        return std::make_pair(j, i);
  return std::nullopt;
}

void CoLaunch::startEach(const std::vector<Hand> &hands,
                         std::vector<std::string> &why) {
  why.assign(hands.size(), "");
  bool queues = std::all_of(hands.begin(), hands.end(), [](const Hand &h) {
    return h.kernel->queuesOnStream();
  });
  std::vector<std::function<void()>> tasks;
  for (size_t i = 0; i < hands.size(); ++i) {
    auto one = [&hands, &why, i] {
      // Nothing thrown leaves a task (a worker's would end the process).
      try {
        std::string failed;
        if (!hands[i].kernel->launch(hands[i].launch, failed))
          why[i] = failed.empty() ? "the launch failed" : failed;
      } catch (const std::exception &e) {
        why[i] = std::string("starting the launch: ") + e.what();
      }
    };
    if (queues || hands.size() == 1)
      one();
    else
      tasks.push_back(one);
  }
  if (!tasks.empty())
    runTasks(tasks);
}
