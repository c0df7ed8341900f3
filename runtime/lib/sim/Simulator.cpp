//===- Simulator.cpp - the CPU reference executor of a plan ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Simulator.h"
#include "sdma/runtime/CheckedMath.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>

using namespace sdma::rt;

namespace {

/// One queue's progress.
struct QueueState {
  size_t next = 0;                // next command to start
  bool inFlight = false;          // started but not finished (adversarial mode)
  std::vector<uint8_t> staged[2]; // what the started command read
};

const char *kindName(Command::Kind kind) {
  switch (kind) {
  case Command::Kind::Copy:
    return "copy";
  case Command::Kind::Bcast:
    return "bcast";
  case Command::Kind::Swap:
    return "swap";
  case Command::Kind::Notify:
    return "notify";
  case Command::Kind::Poll:
    return "poll";
  }
  return "?";
}

class Simulator {
public:
  Simulator(const Plan &plan, HostMemory &memory,
            const SimulatorOptions &options)
      : plan(plan), memory(memory), options(options), rng(options.seed),
        queues(plan.streams.size()) {}

  bool run(std::string &error);

private:
  bool blocked(size_t q) const {
    const Stream &stream = plan.streams[q];
    const Command &command = stream.commands[queues[q].next];
    return command.kind == Command::Kind::Poll &&
           memory.flags(stream.rank)[command.flag] <
               static_cast<uint64_t>(command.value);
  }
  bool finished(size_t q) const {
    return !queues[q].inFlight &&
           queues[q].next == plan.streams[q].commands.size();
  }
  /// Reads the sources of the next command of queue q.
  void start(size_t q);
  /// Writes the destinations of queue q's started command.
  void finish(size_t q);
  /// Runs the next command of queue q completely, with no staging copy
  /// (the slices of one command are disjoint or identical).
  void step(size_t q);

  const Plan &plan;
  HostMemory &memory;
  SimulatorOptions options;
  std::mt19937_64 rng;
  std::vector<QueueState> queues;
};

} // namespace

void Simulator::step(size_t q) {
  QueueState &state = queues[q];
  const Command &command = plan.streams[q].commands[state.next];
  const Slice *s = command.slices;
  size_t bytes = memory.sliceBytes(s[0]);
  switch (command.kind) {
  case Command::Kind::Copy:
    if (s[1] != s[0])
      std::memcpy(memory.slice(s[1]), memory.slice(s[0]), bytes);
    break;
  case Command::Kind::Bcast:
    if (s[1] != s[0])
      std::memcpy(memory.slice(s[1]), memory.slice(s[0]), bytes);
    if (s[2] != s[0] && s[2] != s[1])
      std::memcpy(memory.slice(s[2]), memory.slice(s[0]), bytes);
    break;
  case Command::Kind::Swap:
    if (s[1] != s[0])
      std::swap_ranges(memory.slice(s[0]), memory.slice(s[0]) + bytes,
                       memory.slice(s[1]));
    break;
  case Command::Kind::Notify:
    ++memory.flags(command.target)[command.flag];
    break;
  case Command::Kind::Poll:
    break;
  }
  ++state.next;
}

void Simulator::start(size_t q) {
  QueueState &state = queues[q];
  const Command &command = plan.streams[q].commands[state.next];
  auto stage = [&](int i, const Slice &s) {
    state.staged[i].assign(memory.slice(s),
                           memory.slice(s) + memory.sliceBytes(s));
  };
  if (!command.isNoOp())
    switch (command.kind) {
    case Command::Kind::Copy:
    case Command::Kind::Bcast:
      stage(0, command.slices[0]);
      break;
    case Command::Kind::Swap:
      stage(0, command.slices[0]);
      stage(1, command.slices[1]);
      break;
    case Command::Kind::Notify:
    case Command::Kind::Poll:
      break;
    }
  state.inFlight = true;
}

void Simulator::finish(size_t q) {
  QueueState &state = queues[q];
  const Command &command = plan.streams[q].commands[state.next];
  const Slice *s = command.slices;
  // A destination identical to the source (or to the other destination)
  // is not written: the command moves nothing onto itself.
  auto write = [&](const Slice &to, const std::vector<uint8_t> &bytes) {
    std::memcpy(memory.slice(to), bytes.data(), bytes.size());
  };
  switch (command.kind) {
  case Command::Kind::Copy:
    if (s[1] != s[0])
      write(s[1], state.staged[0]);
    break;
  case Command::Kind::Bcast:
    if (s[1] != s[0])
      write(s[1], state.staged[0]);
    if (s[2] != s[0] && s[2] != s[1])
      write(s[2], state.staged[0]);
    break;
  case Command::Kind::Swap:
    if (s[1] != s[0]) {
      write(s[0], state.staged[1]);
      write(s[1], state.staged[0]);
    }
    break;
  case Command::Kind::Notify:
    ++memory.flags(command.target)[command.flag];
    break;
  case Command::Kind::Poll:
    break;
  }
  for (std::vector<uint8_t> &staged : state.staged)
    std::vector<uint8_t>().swap(staged);
  state.inFlight = false;
  ++state.next;
}

bool Simulator::run(std::string &error) {
  if (!plan.check(error) || !memory.matches(plan, error))
    return false;
  // Adversarial mode holds what each started command read until it
  // finishes: at most every queue's largest staging at once.
  if (options.adversarial) {
    CheckedSize need;
    need.add(memory.totalBytes());
    for (const Stream &stream : plan.streams) {
      uint64_t largest = 0;
      for (const Command &c : stream.commands)
        if (c.kind == Command::Kind::Copy || c.kind == Command::Kind::Bcast ||
            c.kind == Command::Kind::Swap)
          largest = std::max<uint64_t>(largest,
                                       (c.kind == Command::Kind::Swap ? 2 : 1) *
                                           memory.sliceBytes(c.slices[0]));
      need.add(largest);
    }
    if (!options.budget.admit(need.value(),
                              "the adversarial simulation (host memory plus "
                              "each queue's staged command)",
                              error))
      return false;
  }
  for (int r = 0; r < plan.ranks; ++r) {
    std::fill(memory.flags(r).begin(), memory.flags(r).end(), 0);
    memory.flags(r)[kLaunchFlag] = 1; // the host's launch write
  }
  uint64_t steps = 0;
  std::vector<size_t> movable;
  while (true) {
    movable.clear();
    for (size_t q = 0; q < queues.size(); ++q)
      if (!finished(q) && (queues[q].inFlight || !blocked(q)))
        movable.push_back(q);
    if (movable.empty())
      break;
    if (++steps > options.maxSteps) {
      error = "simulation did not finish within " +
              std::to_string(options.maxSteps) + " steps";
      return false;
    }
    if (!options.adversarial) {
      // Each movable queue runs until it blocks or ends.
      for (size_t q : movable)
        while (!finished(q) && !blocked(q))
          step(q);
      continue;
    }
    size_t q = movable[rng() % movable.size()];
    if (queues[q].inFlight)
      finish(q);
    else
      start(q);
  }

  for (size_t q = 0; q < queues.size(); ++q) {
    if (finished(q))
      continue;
    const Stream &stream = plan.streams[q];
    const Command &command = stream.commands[queues[q].next];
    std::ostringstream os;
    os << "rank " << stream.rank << " engine " << stream.engine
       << " waits forever at command " << queues[q].next << " ("
       << kindName(command.kind) << "): flag " << command.flag << " must reach "
       << command.value << " but stays at "
       << memory.flags(stream.rank)[command.flag];
    error = os.str();
    return false;
  }
  for (int r = 0; r < plan.ranks; ++r)
    if (memory.flags(r)[kDoneFlag] != static_cast<uint64_t>(plan.done[r])) {
      error = "rank " + std::to_string(r) + " completion flag is " +
              std::to_string(memory.flags(r)[kDoneFlag]) + ", expected " +
              std::to_string(plan.done[r]);
      return false;
    }
  return true;
}

bool sdma::rt::simulate(const Plan &plan, HostMemory &memory,
                        const SimulatorOptions &options, std::string &error) {
  return Simulator(plan, memory, options).run(error);
}
