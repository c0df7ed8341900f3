//===- Plan.h - the runtime's view of a compiled plan -----------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// No MLIR in here: the plan (JSON, versioned, documented in README.md and
// runtime/plan.schema.json) is the only contract with the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_PLAN_H
#define SDMA_RUNTIME_PLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdma::rt {

/// The plan version this runtime reads.
constexpr int kPlanVersion = 1;
/// Flag 0 of every rank: set to 1 by the host to launch prelaunched queues.
constexpr int kLaunchFlag = 0;
/// Flag 1 of every rank: counts completions; the plan says how many.
constexpr int kDoneFlag = 1;

/// A run of chunks of one buffer on one rank.
struct Slice {
  int rank = 0;
  int buffer = 0; // index into Plan::buffers
  int64_t offset = 0;
  int64_t count = 0;
};

/// One command of an engine queue.
struct Command {
  enum class Kind { Copy, Bcast, Swap, Notify, Poll };
  Kind kind = Kind::Copy;
  /// Copy: src, dst. Bcast: src, dst0, dst1. Swap: a, b.
  Slice slices[3];
  /// Notify: the rank whose flag is incremented. Poll: unused.
  int target = 0;
  /// Notify, Poll: the flag.
  int flag = 0;
  /// Poll: the value to wait for (flag >= value).
  int64_t value = 0;
};

/// The in-order command queue of one DMA engine of one rank.
struct Stream {
  int rank = 0;
  int engine = 0;
  std::vector<Command> commands;
};

struct Buffer {
  std::string name;
  int64_t chunks = 0;
};

/// The collective a plan implements, if it declares one.
struct Collective {
  std::string kind; // all_gather, all_to_all, broadcast, scatter, gather
  int input = 0;    // buffer indices
  int output = 0;
  int root = 0;
};

struct Plan {
  std::string schedule;
  int ranks = 0;
  int engines = 0;
  int flags = 0;
  bool prelaunch = false;
  std::vector<Buffer> buffers;
  std::optional<Collective> collective;
  /// Per rank: the value its completion flag reaches when the plan is done.
  std::vector<int64_t> done;
  std::vector<Stream> streams;

  /// Parses and validates a plan. On failure returns std::nullopt and sets
  /// `error` to a message naming what is wrong and where (a JSON path).
  static std::optional<Plan> parse(std::string_view text, std::string &error);
  /// Reads and parses a plan file; errors name the file.
  static std::optional<Plan> load(const std::string &path, std::string &error);

  /// The index of a buffer by name, or -1.
  int findBuffer(std::string_view name) const;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_PLAN_H
