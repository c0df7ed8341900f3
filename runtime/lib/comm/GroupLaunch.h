//===- GroupLaunch.h - a group's calls, launched together -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A group of calls on several communicators of one process (NCCL's
// ncclGroupStart/End over the communicators ncclCommInitAll made; one
// thread driving the ranks of its GPUs). Each communicator's calls run in
// order on a thread of their own (runGroup: the first call of a signature
// meets every rank on the host, so one thread cannot make them one after
// another); what they would enqueue is held instead, and started when all
// have run, round by round (the n-th held launch of every communicator):
// launches of kernels with one group key (the same program built for the
// same GPU: ranks sharing it) as one launch, the rest alone.
//
//   thread per communicator:  call ─ call ─ ...      (plan, agree, table)
//                                 │      │
//                                 v      v  hold
//   runGroup:              round 0: [rank 0, rank 1, ...] ─ launchGroup
//                          round 1: [rank 0, rank 1, ...] ─ launchGroup
//
// Two ranks on one GPU then cost one launch, and ranks on one stream, which
// launched one by one would wait for each other, run.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_GROUPLAUNCH_H
#define SDMA_RUNTIME_LIB_COMM_GROUPLAUNCH_H

#include "comm/CommDevice.h"

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace sdma::rt {

class Launcher;

class GroupLaunch {
public:
  /// The group whose calls the calling thread makes, or null.
  static GroupLaunch *current();
  /// Makes `group` the calling thread's for call `call` of it while alive.
  class Scope {
  public:
    Scope(GroupLaunch *group, int call);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    GroupLaunch *previous_;
    int previousCall_;
  };

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
  /// Starts `members` (one round's launches with one group key) in as few
  /// launches as their kernel takes.
  void startTogether(const std::vector<Held *> &members,
                     std::vector<Error> &errors,
                     std::vector<Launcher *> &failed);

  std::mutex mutex_;
  std::vector<Held> held_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_GROUPLAUNCH_H
