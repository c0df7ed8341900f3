//===- LdstProgram.h - a generated load/store kernel and its metadata -*- C++
//-*-//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LDSTPROGRAM_H
#define SDMA_RUNTIME_LDSTPROGRAM_H

#include "sdma/runtime/Plan.h"

namespace sdma::rt {

// kLdstVersion is in Version.h.

/// The source written by `sdma-translate --sdma-to-hip`, with what its
/// first line (`// sdma-ldst: {...}`) says about it.
struct LdstProgram {
  std::string source; // HIP/CUDA source, without a prelude
  std::string entry;  // kernel name
  std::string schedule;
  int ranks = 0;
  int flagSlots = 0;
  /// Each rank's steps written as code (`"kernel": "specialised"`), not
  /// the table kernel; SDMA_STAGED_OPS only changes the table kernel.
  bool specialised = false;
  std::vector<Buffer> buffers;
  std::optional<Collective> collective;
  /// A program with the low-latency tables (`"low_latency"`, SDMA_LL:
  /// lib/Target/HIP/LowLatency.h): the most chunks one rank sends another
  /// in a call; -1 for a program without them. Its SdmaTable ends with the
  /// low-latency words (ll[R], llSeq, llPairBytes).
  int64_t lowLatencyPairChunks = -1;

  static std::optional<LdstProgram> parse(std::string source,
                                          std::string &error);
  static std::optional<LdstProgram> load(const std::string &path,
                                         std::string &error);
  /// A Plan with this program's ranks, buffers and collective (and no
  /// queues), for HostMemory, fillInputs and checkOutputs.
  Plan layout() const;

  /// A reduction program (compiled for one element type and operator)
  /// made to compute in `type` ("f16", "bf16", "f32", "f64", "i8", "ui8",
  /// "i32", "ui32", "i64", "ui64") with `op` ("sum", "prod", "max",
  /// "min", "avg", "premulsum"): the kernel's SDMA_REDUCE_TYPE/OP and the
  /// metadata's buffer types and operator ("premulsum" multiplies each
  /// operand by its rank's scalar, which each launch passes). A schedule's
  /// proof holds for any one type and operator (contribution sets do not
  /// depend on them); avg and premulsum only where each element is reduced
  /// once. False with `error` for a program that does not reduce or an
  /// unknown name. `partOf` > 0: the program is a node part of a job of
  /// that many ranks (a built-in hierarchical schedule's, MultiNodeComm),
  /// and the caller vouches for avg that every reduce row of it stores its
  /// element's final value once (avg divides by `partOf`), for premulsum
  /// that every operand of its reduce rows is a rank's input.
  bool setReduction(const std::string &type, const std::string &op,
                    std::string &error, int partOf = 0);
  /// Whether its kernel computes a premulsum (setReduction's, or a node
  /// part's: SDMA_REDUCE_OP 5), whose scalars travel with the entry
  /// barrier.
  bool premulsum() const {
    return source.find("#define SDMA_REDUCE_OP 5\n") != std::string::npos;
  }
  /// Whether its kernel reduces (has an element type and operator to set).
  bool reduces() const {
    return source.find("#ifndef SDMA_REDUCE_TYPE") != std::string::npos;
  }

  /// The ranks whose steps signal flag `slot` of `rank` (read from the
  /// source's sdma_steps and sdma_rank_begin tables): whom a timed-out wait
  /// was waiting for. Empty where the tables cannot be read.
  std::vector<int> signalers(int rank, int slot) const;
  /// The (rank, buffer) pairs the ops of `rank` read or write (from
  /// sdma_ops and sdma_steps): the buffers a launch of that rank needs.
  /// Every pair where the tables cannot be read.
  std::vector<std::pair<int, int>> touched(int rank) const;
};

/// `program` built for one chunk size (a size class): its source with
/// SDMA_CHUNK_BYTES defined, so that every offset and count is a constant;
/// the kernel stops if launched with another chunk.
LdstProgram sizeClassProgram(const LdstProgram &program, uint64_t chunkBytes);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LDSTPROGRAM_H
