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

/// SDMA_COLAUNCH_MARKS=1: each rank's own thread orders its stream around
/// the launch (CommKernel::markStream, waitMark), not the launching thread
/// alone: less serial work per round. Off by default: not yet run on a GPU
/// (the default was: 8 threads on one H100, bench/results/gpu-runs/
/// h100-s65-colaunch.txt).
bool ownMarksByDefault() {
  static const bool on = [] {
    const char *v = std::getenv("SDMA_COLAUNCH_MARKS");
    return v && std::string(v) == "1";
  }();
  return on;
}
} // namespace

std::shared_ptr<CoLaunch> CoLaunch::join(uint64_t job,
                                         const std::vector<int> &members) {
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
  rooms.open[key] = room;
  return room;
}

CoLaunch::CoLaunch(std::vector<int> members)
    : members_(std::move(members)), slots_(members_.size()),
      came_(members_.size(), false), results_(members_.size()) {}

std::string CoLaunch::missing() const {
  std::string out;
  for (size_t i = 0; i < members_.size(); ++i)
    if (!came_[i])
      out += (out.empty() ? "rank " : ", rank ") + std::to_string(members_[i]);
  return out;
}

bool CoLaunch::launch(std::vector<Hand> hands, uint64_t timeoutMs,
                      std::vector<Error> &errors,
                      const std::function<bool(Error &)> &stop) {
  errors.assign(hands.size(), Error());
  // Each hand's stream marked by its own thread (a group launch then only
  // waits for the marks); where marking fails, the launch marks it.
  std::vector<std::pair<CommKernel *, void *>> own;
  for (Hand &h : hands) {
    std::string ignored;
    if (!ownMarks_ || !h.kernel ||
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
  for (size_t k = 0; k < hands.size(); ++k) {
    slots_[at[k]] = std::move(hands[k]);
    came_[at[k]] = true;
  }
  handed_ += hands.size();
  const uint64_t round = done_.load(std::memory_order_relaxed);
  if (handed_ == members_.size()) {
    startRound();
    done_.store(round + 1, std::memory_order_release);
    lock.unlock();
    wake_.notify_all();
  } else {
    lock.unlock();
    GroupPhaseTimer timer(GroupPhase::CoWait);
    const auto start = std::chrono::steady_clock::now();
    while (done_.load(std::memory_order_acquire) == round &&
           std::chrono::steady_clock::now() - start < kSpin)
      std::this_thread::yield();
    // Asleep until the round starts, the timeout, or (checked every few
    // milliseconds, the lock released) `stop` says this rank must not wait.
    const auto deadline = start + std::chrono::milliseconds(timeoutMs);
    Error stopped;
    lock.lock();
    for (;;) {
      auto until = std::min(deadline, std::chrono::steady_clock::now() +
                                          std::chrono::milliseconds(5));
      if (wake_.wait_until(lock, until, [&] {
            return done_.load(std::memory_order_relaxed) != round;
          }))
        break;
      if (std::chrono::steady_clock::now() >= deadline)
        break;
      if (stop) {
        lock.unlock();
        bool halt = stop(stopped);
        lock.lock();
        if (halt && done_.load(std::memory_order_relaxed) == round)
          break;
      }
    }
    if (done_.load(std::memory_order_relaxed) == round) {
      // Withdrawn: a member that comes later finds this round without
      // these launches, and waits for them in turn.
      std::string who = missing();
      for (size_t k = 0; k < at.size(); ++k)
        slots_[at[k]] = Hand();
      handed_ -= at.size();
      if (!handed_)
        came_.assign(members_.size(), false); // every one withdrew
      for (Error &e : errors)
        if (!stopped.empty())
          e = stopped;
        else
          e.fail(ErrorKind::Remote,
                 who +
                     " (threads of this process on this GPU, whose calls "
                     "start as one launch with this rank's) did not make "
                     "the call within " +
                     std::to_string(timeoutMs) +
                     " ms: nothing was started (it exited, failed, or made "
                     "a different number of calls)");
      return false;
    }
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
  // Each alone, in rank order (where a launch runs before it returns, the
  // CPU device's, side by side: each waits for the others').
  GroupPhaseTimer timer(GroupPhase::CoAlone);
  bool queues = std::all_of(round.begin(), round.end(), [](const Hand &h) {
    return h.kernel->queuesOnStream();
  });
  std::vector<std::function<void()>> tasks;
  for (size_t i = 0; i < round.size(); ++i) {
    auto one = [this, &round, &refused, i] {
      std::string why;
      if (!round[i].kernel->launch(round[i].launch, why))
        results_[i] = why + refused;
    };
    if (queues)
      one();
    else
      tasks.push_back(one);
  }
  if (!tasks.empty())
    runTasks(tasks);
}
