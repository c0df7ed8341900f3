//===- GroupLaunch.cpp - a group's calls, launched together ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/GroupLaunch.h"
#include "comm/CoLaunch.h"

#include "comm/Launcher.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

using namespace sdma::rt;

namespace {

/// SDMA_GROUP_PROFILE's samples, printed at exit: each phase's median (a
/// signature's first call compiles and meets, which would swamp a mean) and
/// mean.
class GroupProfile {
public:
  static GroupProfile &get() {
    // Never destroyed: detached workers may still time a phase at exit.
    static GroupProfile *profile = new GroupProfile();
    return *profile;
  }
  bool on() const { return on_; }
  void add(GroupPhase phase, int64_t ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto &samples = ns_[size_t(phase)];
    if (samples.size() < kMostSamples)
      samples.push_back(ns);
  }
  void print() {
    std::lock_guard<std::mutex> lock(mutex_);
    static const char *names[] = {"end",
                                  "calls",
                                  "rank 0 calls",
                                  "start",
                                  "fused launch",
                                  "join before",
                                  "launch call",
                                  "join after",
                                  "replayed call",
                                  "probed calls",
                                  "co-launch wait",
                                  "co-launch together",
                                  "co-launch alone",
                                  "co-launch ordered"};
    static_assert(sizeof(names) / sizeof(*names) == size_t(GroupPhase::Count));
    for (size_t i = 0; i < size_t(GroupPhase::Count); ++i) {
      std::vector<int64_t> &samples = ns_[i];
      if (samples.empty())
        continue;
      double sum = 0;
      for (int64_t ns : samples)
        sum += double(ns);
      std::nth_element(samples.begin(), samples.begin() + samples.size() / 2,
                       samples.end());
      std::fprintf(stderr,
                   "sdma group profile: %s median %.2f us, mean %.2f us x "
                   "%zu\n",
                   names[i], double(samples[samples.size() / 2]) / 1e3,
                   sum / 1e3 / double(samples.size()), samples.size());
    }
  }

private:
  GroupProfile() {
    const char *env = std::getenv("SDMA_GROUP_PROFILE");
    on_ = env && std::string(env) == "1";
    if (on_)
      std::atexit([] { get().print(); });
  }
  bool on_ = false;
  std::mutex mutex_;
  static constexpr size_t kMostSamples = size_t(1) << 20;
  std::vector<int64_t> ns_[size_t(GroupPhase::Count)];
};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

thread_local GroupLaunch *currentGroup = nullptr;
thread_local int currentCall = 0;
/// The calling thread's call as runGroup's probe sees it.
enum { kNotProbing, kProbing, kDeferred };
thread_local int currentProbe = kNotProbing;

/// Threads that run a group's communicators side by side, kept for the
/// next group (a group's end is a job's fixed cost per step: starting
/// threads each time would cost more than its launches). An idle worker
/// spins a while before it sleeps, so back-to-back groups find it awake.
class Workers {
public:
  static Workers &get() {
    static Workers *workers = new Workers(); // never destroyed: detached
    return *workers;
  }
  /// Runs tasks[0] on this thread and the others on idle workers (more
  /// made where none is idle: groups of several threads run at once, and
  /// may wait for each other's ranks); returns when all are done.
  void run(std::vector<std::function<void()>> &tasks) {
    std::vector<Worker *> mine;
    {
      std::lock_guard<std::mutex> lock(idleMutex_);
      while (mine.size() + 1 < tasks.size()) {
        if (idle_.empty()) {
          all_.push_back(std::make_unique<Worker>());
          idle_.push_back(all_.back().get());
        }
        mine.push_back(idle_.back());
        idle_.pop_back();
      }
    }
    for (size_t i = 1; i < tasks.size(); ++i)
      mine[i - 1]->post(&tasks[i]);
    tasks[0]();
    for (Worker *w : mine)
      w->wait();
    std::lock_guard<std::mutex> lock(idleMutex_);
    idle_.insert(idle_.end(), mine.begin(), mine.end());
  }

private:
  struct Worker {
    std::mutex mutex;
    std::condition_variable wake;
    std::function<void()> *task = nullptr; // guarded by mutex
    std::atomic<int> state{0};             // 0 idle, 1 posted, 2 done
    std::thread thread;
    Worker() : thread([this] { loop(); }) { thread.detach(); }
    void post(std::function<void()> *work) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        task = work;
        state.store(1, std::memory_order_release);
      }
      wake.notify_one();
    }
    /// Spins a while (a replayed call's work is microseconds), then
    /// sleeps in steps (a first call's compile or a host meeting is not).
    void wait() {
      for (int spins = 0; state.load(std::memory_order_acquire) != 2; ++spins)
        if (spins > 20000)
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        else if (spins > 1000)
          std::this_thread::yield();
      state.store(0, std::memory_order_relaxed);
    }
    void loop() {
      for (;;) {
        auto until =
            std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (state.load(std::memory_order_acquire) != 1 &&
               std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        std::function<void()> *work = nullptr;
        {
          std::unique_lock<std::mutex> lock(mutex);
          wake.wait(lock, [&] { return state.load() == 1; });
          work = task;
        }
        (*work)();
        state.store(2, std::memory_order_release);
      }
    }
  };
  std::mutex idleMutex_;
  std::vector<std::unique_ptr<Worker>> all_;
  std::vector<Worker *> idle_;
};

} // namespace

void sdma::rt::runTasks(std::vector<std::function<void()>> &tasks) {
  if (tasks.size() == 1)
    tasks[0]();
  else if (!tasks.empty())
    Workers::get().run(tasks);
}

GroupPhaseTimer::GroupPhaseTimer(GroupPhase phase) : phase_(phase) {
  if (phase != GroupPhase::Count && GroupProfile::get().on())
    startNs_ = nowNs();
}

GroupPhaseTimer::~GroupPhaseTimer() {
  if (startNs_ >= 0)
    GroupProfile::get().add(phase_, nowNs() - startNs_);
}

GroupLaunch *GroupLaunch::current() { return currentGroup; }

GroupLaunch::Scope::Scope(GroupLaunch *group, int call, bool probe)
    : previous_(currentGroup), previousCall_(currentCall),
      previousProbe_(currentProbe) {
  currentGroup = group;
  currentCall = call;
  currentProbe = probe ? kProbing : kNotProbing;
}

GroupLaunch::Scope::~Scope() {
  currentGroup = previous_;
  currentCall = previousCall_;
  currentProbe = previousProbe_;
}

bool GroupLaunch::probing() { return currentProbe != kNotProbing; }

void GroupLaunch::defer() {
  if (currentProbe == kProbing)
    currentProbe = kDeferred;
}

bool GroupLaunch::deferred() {
  bool was = currentProbe == kDeferred;
  if (was)
    currentProbe = kProbing;
  return was;
}

void GroupLaunch::hold(Launcher &launcher, CommKernel &kernel,
                       KernelLaunch launch, bool dma) {
  Held held;
  held.launcher = &launcher;
  held.kernel = &kernel;
  held.launch = std::move(launch);
  held.dma = dma;
  held.call = currentCall;
  std::lock_guard<std::mutex> lock(mutex_);
  held_.push_back(std::move(held));
}

void GroupLaunch::hold(Launcher &launcher, std::function<Error()> work) {
  Held held;
  held.launcher = &launcher;
  held.work = std::move(work);
  held.call = currentCall;
  std::lock_guard<std::mutex> lock(mutex_);
  held_.push_back(std::move(held));
}

std::string sdma::rt::streamConflict(const std::vector<RoundLaunch> &launches,
                                     uint64_t *job) {
  for (size_t i = 0; i < launches.size(); ++i)
    for (size_t j = i + 1; j < launches.size(); ++j) {
      const RoundLaunch &a = launches[i], &b = launches[j];
      if (a.unit == b.unit || a.job != b.job || a.stream != b.stream ||
          !a.queues || !b.queues ||
          (a.domain && b.domain && a.domain != b.domain))
        continue;
      if (job)
        *job = a.job;
      char stream[32];
      std::snprintf(stream, sizeof(stream), "%p", a.stream);
      return "ranks " + std::to_string(a.rank) + " and " +
             std::to_string(b.rank) + " of one job are on one stream (" +
             stream +
             ") but their calls cannot start as one launch: the first would "
             "wait for the other, queued behind it, until the timeout (give "
             "each rank a stream of its own)";
    }
  return "";
}

std::string GroupLaunch::conflict(const std::vector<std::vector<Held *>> &units,
                                  uint64_t *job) {
  std::vector<RoundLaunch> launches;
  for (size_t u = 0; u < units.size(); ++u)
    for (Held *h : units[u])
      launches.push_back({u, h->launcher->job(), h->launch.programRank,
                          h->launch.stream, h->kernel->queuesOnStream(),
                          h->kernel->streamDomain()});
  return streamConflict(launches, job);
}

void GroupLaunch::startUnits(const std::vector<std::vector<Held *>> &units,
                             std::vector<Error> &errors,
                             std::vector<Launcher *> &failed) {
  // Kernels known to enqueue without waiting (those that name their
  // streams' domain: the CUDA load/store and point-to-point kernels) are
  // enqueued one after another on this thread, in the round's order (from
  // several threads, two jobs sharing two streams could queue in opposite
  // orders and wait for each other). The others start side by side: a
  // device whose launch runs before it returns (the CPU device) would wait
  // in one launch for ranks the next starts, and a DMA launch may wait on
  // the host.
  bool queue = std::all_of(units.begin(), units.end(), [](const auto &u) {
    return std::all_of(u.begin(), u.end(), [](const Held *h) {
      return h->kernel->queuesOnStream() && h->kernel->streamDomain();
    });
  });
  if (queue || units.size() == 1) {
    for (const std::vector<Held *> &unit : units)
      startUnit(unit, units, errors, failed);
    return;
  }
  std::vector<std::vector<Launcher *>> failedEach(units.size());
  std::vector<std::function<void()>> tasks;
  for (size_t i = 0; i < units.size(); ++i)
    tasks.push_back([&, i] {
      // Nothing thrown leaves a task (a worker's would end the process).
      try {
        startUnit(units[i], units, errors, failedEach[i]);
      } catch (const std::exception &e) {
        failHeld(units[i], std::string("starting the launch: ") + e.what(),
                 errors, failedEach[i]);
      }
    });
  runTasks(tasks);
  for (auto &some : failedEach)
    failed.insert(failed.end(), some.begin(), some.end());
}

void GroupLaunch::failHeld(const std::vector<Held *> &which,
                           const std::string &why, std::vector<Error> &errors,
                           std::vector<Launcher *> &failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Held *h : which) {
    Error error;
    h->launcher->startFailed(why, h->dma, error);
    if (errors[h->call].empty())
      errors[h->call] = error;
    failed.push_back(h->launcher);
  }
}

CoLaunch *GroupLaunch::roomOf(const std::vector<Held *> &unit) {
  CoLaunch *room = unit[0]->launcher->coLaunch();
  for (const Held *h : unit)
    if (h->dma || h->launcher->coLaunch() != room)
      return nullptr;
  return room;
}

void GroupLaunch::handRoomsWhole(std::vector<std::vector<Held *>> &units) {
  std::map<CoLaunch *, size_t> hands;
  for (const auto &unit : units)
    if (CoLaunch *room = roomOf(unit))
      hands[room] += unit.size();
  std::map<CoLaunch *, size_t> merged; // room -> its unit's index
  std::vector<std::vector<Held *>> out;
  for (auto &unit : units) {
    CoLaunch *room = roomOf(unit);
    if (!room || hands[room] >= room->members().size()) {
      out.push_back(std::move(unit));
      continue;
    }
    auto [it, first] = merged.try_emplace(room, out.size());
    if (first)
      out.push_back(std::move(unit));
    else
      out[it->second].insert(out[it->second].end(), unit.begin(), unit.end());
  }
  units = std::move(out);
}

CoLaunch *GroupLaunch::handInTo(const std::vector<Held *> &unit,
                                const std::vector<std::vector<Held *>> &round) {
  CoLaunch *room = roomOf(unit);
  if (!room)
    return nullptr;
  size_t inRound = 0;
  for (const auto &other : round)
    for (const Held *h : other)
      inRound += !h->dma && h->launcher->coLaunch() == room;
  return inRound == unit.size() && unit.size() < room->members().size()
             ? room
             : nullptr;
}

void GroupLaunch::startUnit(const std::vector<Held *> &unit,
                            const std::vector<std::vector<Held *>> &round,
                            std::vector<Error> &errors,
                            std::vector<Launcher *> &failed) {
  std::string why;
  if (CoLaunch *room = handInTo(unit, round)) {
    std::vector<CoLaunch::Hand> hands;
    for (Held *h : unit)
      hands.push_back({h->kernel, h->launch});
    std::vector<Error> handed;
    // An abort (or a failure) of one of the unit's communicators while
    // the other ranks are awaited: at once, as Launcher::start's.
    auto stop = [&unit](Error &why) {
      for (const Held *h : unit)
        if (!h->launcher->healthy(why))
          return why.context("the communicator has failed"), true;
      return false;
    };
    if (room->launch(std::move(hands), unit[0]->launcher->timeoutMs(), handed,
                     stop))
      return;
    for (size_t i = 0; i < unit.size(); ++i) {
      if (handed[i].empty())
        continue;
      Error error;
      unit[i]->launcher->coLaunchFailed(handed[i], error);
      std::lock_guard<std::mutex> lock(mutex_);
      if (errors[unit[i]->call].empty())
        errors[unit[i]->call] = error;
      failed.push_back(unit[i]->launcher);
    }
    return;
  }
  if (unit.size() == 1) {
    if (!unit[0]->kernel->launch(unit[0]->launch, why))
      failHeld(unit, why, errors, failed);
    return;
  }
  std::vector<const KernelLaunch *> launches;
  for (Held *h : unit)
    launches.push_back(&h->launch);
  bool started = false;
  if (GroupPhaseTimer timer(GroupPhase::FusedLaunch);
      unit[0]->kernel->launchGroup(launches, started, why))
    return;
  // Part of it ran or was enqueued: the ranks must not start again.
  if (started) {
    failHeld(unit, why, errors, failed);
    return;
  }
  // A group launch the device refused (its kernel then takes no more):
  // each rank's launch alone, unless two share a stream.
  std::vector<std::vector<Held *>> alone;
  for (Held *h : unit)
    alone.push_back({h});
  if (std::string clash = conflict(alone); !clash.empty()) {
    failHeld(unit, clash + "; the group launch before it: " + why, errors,
             failed);
    return;
  }
  startUnits(alone, errors, failed);
}

void GroupLaunch::start(std::vector<Error> &errors) {
  // Each communicator's held work in its order; communicators in the order
  // of their first. Round k is every communicator's k-th launch, after the
  // other work it held before that launch (copies: a broadcast's root
  // stages its input, the others do not, so rounds count launches only).
  std::vector<Launcher *> order;
  std::map<Launcher *, std::vector<Held *>> of;
  for (Held &h : held_) {
    if (!of.count(h.launcher))
      order.push_back(h.launcher);
    of[h.launcher].push_back(&h);
  }
  // SDMA_GROUP_LAUNCH=0: no launch for several ranks (each rank's alone),
  // to compare or to work around a device that refuses it. (Read at each
  // group's end: a test turns it off for one group.)
  const char *fuse = std::getenv("SDMA_GROUP_LAUNCH");
  const bool fuseLaunches = !fuse || std::string(fuse) != "0";
  std::map<Launcher *, size_t> next; // each one's first item not started
  std::vector<Launcher *> failed;
  auto isFailed = [&](Launcher *l) {
    return std::find(failed.begin(), failed.end(), l) != failed.end();
  };
  // Runs l's work items up to its next launch (or its end); false where
  // one failed.
  auto runWork = [&](Launcher *l) {
    std::vector<Held *> &items = of[l];
    size_t &at = next[l];
    for (; at < items.size() && items[at]->work; ++at)
      if (Error error = items[at]->work(); !error.empty()) {
        if (errors[items[at]->call].empty())
          errors[items[at]->call] = error;
        failed.push_back(l);
        return false;
      }
    return true;
  };
  for (;;) {
    // This round's launches by group key, in communicator order: ranks of
    // one job (their blocks were sized for the ranks sharing the GPU), one
    // program and build, one path and chunk; an empty build: alone.
    struct Key {
      std::string build;
      uint64_t job;
      bool lowLatency;
      size_t chunk;
      bool operator==(const Key &o) const {
        return job == o.job && lowLatency == o.lowLatency && chunk == o.chunk &&
               build == o.build;
      }
    };
    std::vector<std::pair<Key, std::vector<Held *>>> together;
    for (Launcher *l : order) {
      if (isFailed(l) || !runWork(l) || next[l] >= of[l].size())
        continue;
      Held *h = of[l][next[l]++];
      Key key{h->dma || !fuseLaunches ? "" : h->kernel->groupKey(), l->job(),
              h->launch.lowLatency, h->launch.chunkBytes};
      auto it = std::find_if(together.begin(), together.end(),
                             [&](const auto &p) { return p.first == key; });
      if (key.build.empty() || it == together.end())
        together.push_back({std::move(key), {h}});
      else
        it->second.push_back(h);
    }
    if (together.empty())
      break;
    // The launches: a key's members, as many ranks a launch as their
    // kernel takes; the others alone.
    std::vector<std::vector<Held *>> units;
    for (auto &[key, members] : together) {
      size_t limit =
          key.build.empty()
              ? 1
              : size_t(std::max(1, members[0]->kernel->groupLimit()));
      for (size_t at = 0; at < members.size(); at += limit)
        units.emplace_back(members.begin() + at,
                           members.begin() +
                               std::min(members.size(), at + limit));
    }
    handRoomsWhole(units);
    // A job whose ranks clash on a stream fails this round (named); the
    // other jobs' launches start.
    for (uint64_t job = 0;;) {
      std::string clash = conflict(units, &job);
      if (clash.empty())
        break;
      auto of = [&](const std::vector<Held *> &unit) {
        return unit[0]->launcher->job() == job;
      };
      for (auto &unit : units)
        if (of(unit))
          failHeld(unit, clash, errors, failed);
      units.erase(std::remove_if(units.begin(), units.end(), of), units.end());
    }
    startUnits(units, errors, failed);
  }
  // A communicator stopped by a failure: its later calls did not run.
  for (Launcher *l : failed)
    for (size_t i = next[l]; i < of[l].size(); ++i)
      if (errors[of[l][i]->call].empty())
        errors[of[l][i]->call].fail(ErrorKind::InvalidUsage,
                                    "not run: an earlier call of the group "
                                    "on this communicator failed");
  held_.clear();
}
