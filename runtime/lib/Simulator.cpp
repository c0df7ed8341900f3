//===- Simulator.cpp - the CPU reference executor of a plan ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Simulator.h"

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
  /// Runs the next command of queue q completely.
  void step(size_t q) {
    start(q);
    finish(q);
  }

  const Plan &plan;
  HostMemory &memory;
  SimulatorOptions options;
  std::mt19937_64 rng;
  std::vector<QueueState> queues;
};

} // namespace

void Simulator::start(size_t q) {
  QueueState &state = queues[q];
  const Command &command = plan.streams[q].commands[state.next];
  auto stage = [&](int i, const Slice &s) {
    state.staged[i].assign(memory.slice(s),
                           memory.slice(s) + memory.sliceBytes(s));
  };
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
  auto write = [&](const Slice &s, const std::vector<uint8_t> &bytes) {
    std::memcpy(memory.slice(s), bytes.data(), bytes.size());
  };
  switch (command.kind) {
  case Command::Kind::Copy:
    write(command.slices[1], state.staged[0]);
    break;
  case Command::Kind::Bcast:
    write(command.slices[1], state.staged[0]);
    write(command.slices[2], state.staged[0]);
    break;
  case Command::Kind::Swap:
    write(command.slices[0], state.staged[1]);
    write(command.slices[1], state.staged[0]);
    break;
  case Command::Kind::Notify:
    ++memory.flags(command.target)[command.flag];
    break;
  case Command::Kind::Poll:
    break;
  }
  state.inFlight = false;
  ++state.next;
}

bool Simulator::run(std::string &error) {
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
