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

#include "sdma/runtime/Version.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdma::rt {

// kPlanVersion, the plan version this runtime reads, is in Version.h.
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

  bool operator==(const Slice &o) const {
    return rank == o.rank && buffer == o.buffer && offset == o.offset &&
           count == o.count;
  }
  bool operator!=(const Slice &o) const { return !(*this == o); }
  /// Whether the two share a byte (same rank and buffer, ranges meet).
  bool overlaps(const Slice &o) const {
    return rank == o.rank && buffer == o.buffer &&
           offset < o.offset + o.count && o.offset < offset + count;
  }
};

/// One command of an engine queue. The slices of one data command are
/// pairwise either disjoint or identical (the loader rejects a partial
/// overlap): an identical pair moves nothing onto itself, so a copy whose
/// source is its destination, or a swap of a slice with itself, is a no-op
/// that every executor skips (isNoOp), and a bcast writes an identical
/// destination once (or not at all where it is the source).
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
  /// Copy: a pull, issued by the destination's rank (src is read there).
  bool pull = false;

  /// The slice whose rank issues the command (notifies and polls: none).
  const Slice &issuer() const { return slices[pull ? 1 : 0]; }

  /// How many of `slices` the command uses: 3 for a bcast, 2 for a copy
  /// or swap, 0 for a notify or poll.
  int sliceCount() const {
    return kind == Kind::Bcast                        ? 3
           : kind == Kind::Copy || kind == Kind::Swap ? 2
                                                      : 0;
  }

  /// A copy or swap whose two slices are the same (moves no byte), or a
  /// bcast whose destinations are both its source.
  bool isNoOp() const {
    switch (kind) {
    case Kind::Copy:
    case Kind::Swap:
      return slices[0] == slices[1];
    case Kind::Bcast:
      return slices[0] == slices[1] && slices[0] == slices[2];
    default:
      return false;
    }
  }
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
  /// A count table (counts[N] in the schedule): `chunks` 64-bit integers
  /// that sdma.copyv reads its run-time counts from.
  bool counts = false;
  /// A typed buffer's element type (NCCL's: "f16", "bf16", "f32", "f64",
  /// "i8", "ui8", "i32", "ui32", "i64", "ui64"), or empty: bytes. Chunks
  /// hold whole elements (see elementBytes()).
  std::string type;
  /// The size of one element; 1 for an untyped buffer, 0 for an unknown
  /// type.
  size_t elementBytes() const {
    if (type.empty() || type == "i8" || type == "ui8")
      return 1;
    if (type == "f16" || type == "bf16")
      return 2;
    if (type == "f32" || type == "i32" || type == "ui32")
      return 4;
    if (type == "f64" || type == "i64" || type == "ui64")
      return 8;
    return 0;
  }
  /// The bytes at a chunk size (8 per entry for a count table).
  uint64_t bytes(uint64_t chunkBytes) const {
    return uint64_t(chunks) * (counts ? 8 : chunkBytes);
  }
};

/// The collective a plan implements, if it declares one.
struct Collective {
  /// all_gather, all_to_all, broadcast, scatter, gather, all_to_allv(_packed),
  /// all_reduce, reduce_scatter, reduce
  std::string kind;
  int input = 0; // buffer indices
  int output = 0;
  int root = 0;
  /// all_to_allv(_packed, _2d, _2d_offset): the send- and receive-count
  /// tables (-1: none).
  int sendCounts = -1, recvCounts = -1;
  /// all_to_allv_2d(_offset): local experts per rank, and the rows an
  /// expert-major segment is padded to a multiple of.
  int experts = 1, majorAlign = 1;
  /// A reduction's operator: sum, max, min or prod (empty otherwise).
  std::string op;

  bool isReduction() const {
    return kind == "all_reduce" || kind == "reduce_scatter" || kind == "reduce";
  }
};

struct Plan {
  std::string schedule;
  /// False for the layout of a load/store program that has no DMA plan (a
  /// schedule that reduces or reads counts at run time): its buffers and
  /// collective, no queues for the simulators to run.
  bool hasQueues = true;
  int ranks = 0;
  int engines = 0;
  int flags = 0;
  bool prelaunch = false;
  std::vector<Buffer> buffers;
  std::optional<Collective> collective;
  /// Per rank: the value its completion flag reaches when the plan is done.
  std::vector<int64_t> done;
  std::vector<Stream> streams;

  /// Commands over every queue.
  size_t commandCount() const {
    size_t commands = 0;
    for (const Stream &stream : streams)
      commands += stream.commands.size();
    return commands;
  }

  /// Parses and validates a plan. On failure returns std::nullopt and sets
  /// `error` to a message naming what is wrong and where (a JSON path).
  static std::optional<Plan> parse(std::string_view text, std::string &error);
  /// Reads and parses a plan file; errors name the file.
  static std::optional<Plan> load(const std::string &path, std::string &error);

  /// The index of a buffer by name, or -1.
  int findBuffer(std::string_view name) const;
  /// Whether a plan built in code keeps the rules the loader enforces
  /// (ranks, buffers, flags and slices in range, slices of one command of
  /// one size and disjoint or identical, one count per rank in `done`);
  /// false with `error` naming the stream and command otherwise. Executors
  /// call it before running, so a plan that did not come from parse() is
  /// refused rather than run out of bounds.
  bool check(std::string &error) const;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_PLAN_H
