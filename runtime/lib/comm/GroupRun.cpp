//===- GroupRun.cpp - runGroup: a group's calls, then its launches --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// runGroup (sdma/runtime/Communicator.h): the calls that replay first, on
// the calling thread; each communicator's others in order on a thread of
// its own; then what they held, started by GroupLaunch.
//
//===----------------------------------------------------------------------===//

#include "comm/GroupLaunch.h"

#include "sdma/runtime/Communicator.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

using namespace sdma::rt;

namespace {
/// One runGroup: its calls by communicator, their errors, and the launches
/// they hold.
class GroupRun {
public:
  explicit GroupRun(std::vector<GroupCall> &calls)
      : calls_(calls), errors_(calls.size()) {
    // Each communicator's calls, in order.
    for (size_t i = 0; i < calls.size(); ++i) {
      auto it = std::find(comms_.begin(), comms_.end(), calls[i].comm);
      if (it == comms_.end()) {
        comms_.push_back(calls[i].comm);
        of_.emplace_back();
        it = comms_.end() - 1;
      }
      of_[size_t(it - comms_.begin())].push_back(i);
    }
    from_.assign(comms_.size(), 0);
  }

  /// First, on this thread: each communicator's calls while they start as
  /// made before (a microsecond each: a thread's handoff would cost more).
  void probe() {
    GroupPhaseTimer probing(GroupPhase::Probe);
    for (size_t c = 0; c < comms_.size(); ++c)
      for (bool deferred = false; from_[c] < of_[c].size(); ++from_[c]) {
        if (!calls_[of_[c][from_[c]]].probe)
          break;
        if (!run(c, from_[c], true, false, deferred)) {
          if (!deferred)
            from_[c] = of_[c].size(); // failed: the rest are not run
          break;
        }
      }
  }

  /// Then the rest, each communicator's in order on a thread of its own,
  /// side by side (a call that meets every rank on the host waits for the
  /// others'); the first communicator's on this thread, whose device the
  /// caller made current, the others' on workers that make theirs current.
  void rest() {
    std::vector<std::function<void()>> tasks;
    for (size_t c = 0; c < comms_.size(); ++c) {
      if (from_[c] == of_[c].size()) {
        if (c == 0)
          tasks.push_back([] {});
        continue;
      }
      tasks.push_back([this, c] {
        for (size_t at = from_[c]; at < of_[c].size(); ++at)
          if (bool deferred;
              !run(c, at, false, c > 0 && at == from_[c], deferred))
            return;
      });
    }
    if (tasks.size() == 1 && from_[0] == of_[0].size())
      tasks.clear();
    GroupPhaseTimer calling(GroupPhase::Calls);
    runTasks(tasks);
  }

  /// Starts what the calls held; false where any call failed (its error).
  bool start() {
    {
      GroupPhaseTimer starting(GroupPhase::Start);
      group_.start(errors_);
    }
    bool ok = true;
    for (size_t i = 0; i < calls_.size(); ++i) {
      calls_[i].error = errors_[i];
      ok = ok && errors_[i].empty();
    }
    return ok;
  }

private:
  /// Call `at` of communicator `c`: false where it failed (the
  /// communicator's later calls are not run) or, probed, deferred
  /// (`deferred` set). With `bind`, first makes the communicator's device
  /// current (a worker's first call). Nothing thrown leaves it (a
  /// worker's would end the process).
  bool run(size_t c, size_t at, bool probe, bool bind, bool &deferred) {
    size_t i = of_[c][at];
    Error error;
    bool ok = false;
    deferred = false;
    try {
      if (bind)
        comms_[c]->bindThread();
      GroupLaunch::Scope scope(calls_[i].hold ? &group_ : nullptr, int(i),
                               probe);
      GroupPhaseTimer first(c == 0 ? GroupPhase::FirstCalls
                                   : GroupPhase::Count);
      ok = calls_[i].run(error);
      deferred = probe && GroupLaunch::deferred();
    } catch (const std::bad_alloc &) {
      error.fail(ErrorKind::System, "out of host memory");
    } catch (const std::exception &e) {
      error.fail(ErrorKind::Internal, e.what());
    }
    if (ok || deferred)
      return ok;
    if (error.empty())
      error.fail(ErrorKind::Internal, "a call failed without a reason");
    errors_[i] = error;
    for (size_t j = at + 1; j < of_[c].size(); ++j)
      errors_[of_[c][j]].fail(ErrorKind::InvalidUsage,
                              "not run: an earlier call of the group on this "
                              "communicator failed");
    return false;
  }

  std::vector<GroupCall> &calls_;
  std::vector<Communicator *> comms_;
  std::vector<std::vector<size_t>> of_; // [communicator]: its calls
  std::vector<size_t> from_; // [communicator]: its first call not yet made
  GroupLaunch group_;
  std::vector<Error> errors_;
};
} // namespace

bool sdma::rt::runGroup(std::vector<GroupCall> &calls) {
  GroupPhaseTimer timer(GroupPhase::End);
  // Inside another group's call (sdmaGroupCall's function opening a group
  // of its own): its calls are part of that call, in order, on this thread.
  if (GroupLaunch::current()) {
    bool ok = true;
    for (GroupCall &call : calls)
      if (ok)
        ok = call.run(call.error);
      else
        call.error.fail(ErrorKind::InvalidUsage,
                        "not run: an earlier call of the group failed");
    return ok;
  }
  // SDMA_GROUP_PROBE=0: every call on its communicator's thread, to
  // compare.
  static const bool probe = [] {
    const char *env = std::getenv("SDMA_GROUP_PROBE");
    return !env || std::string(env) != "0";
  }();
  GroupRun run(calls);
  if (probe)
    run.probe();
  run.rest();
  return run.start();
}
