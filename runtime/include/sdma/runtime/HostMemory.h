//===- HostMemory.h - every rank's buffers and flags in host memory -*- C++
//-*-//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_HOSTMEMORY_H
#define SDMA_RUNTIME_HOSTMEMORY_H

#include "sdma/runtime/MemoryBudget.h"
#include "sdma/runtime/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sdma::rt {

/// The buffers of every rank of a plan, at one chunk size, plus each rank's
/// flags: what the simulators execute on and what checks read.
class HostMemory {
public:
  /// Every rank's buffers and flags for `plan` at `chunkBytes`, or
  /// std::nullopt with `error` (before allocating anything) if the sizes
  /// overflow 64 bits or exceed `budget`, or `chunkBytes` is 0.
  static std::optional<HostMemory> create(const Plan &plan, size_t chunkBytes,
                                          std::string &error,
                                          const MemoryBudget &budget = {});
  /// The bytes create() allocates: every rank's buffers and flags, plus the
  /// bookkeeping per (rank, buffer). std::nullopt if that overflows.
  static std::optional<uint64_t> bytesNeeded(const Plan &plan,
                                             size_t chunkBytes);
  /// Unchecked against the budget: prefer create(). Sizes are computed
  /// with checked arithmetic all the same; if they overflow, this prints
  /// why and aborts rather than allocate a wrapped size.
  HostMemory(const Plan &plan, size_t chunkBytes);

  /// The bytes this memory holds (bytesNeeded at construction).
  uint64_t totalBytes() const { return totalBytes_; }
  /// Whether this memory has `plan`'s layout (ranks, buffers and their
  /// sizes at this chunk size, flags); else false with `error`.
  /// `withFlags` = false compares the buffers only (a load/store kernel
  /// keeps its own flags, so memory made for the DMA plan serves it too).
  bool matches(const Plan &plan, std::string &error,
               bool withFlags = true) const;

  size_t chunkBytes() const { return chunkBytes_; }
  uint8_t *buffer(int rank, int buffer) { return data_[rank][buffer].data(); }
  const uint8_t *buffer(int rank, int buffer) const {
    return data_[rank][buffer].data();
  }
  size_t bufferBytes(int rank, int buffer) const {
    return data_[rank][buffer].size();
  }
  /// The bytes of a slice.
  uint8_t *slice(const Slice &s) {
    return buffer(s.rank, s.buffer) + s.offset * chunkBytes_;
  }
  size_t sliceBytes(const Slice &s) const { return s.count * chunkBytes_; }
  std::vector<uint64_t> &flags(int rank) { return flags_[rank]; }

private:
  size_t chunkBytes_;
  uint64_t totalBytes_ = 0;
  std::vector<std::vector<std::vector<uint8_t>>> data_; // [rank][buffer]
  std::vector<std::vector<uint64_t>> flags_;            // [rank][flag]
};

/// What fillInputs writes to every buffer but the input.
inline constexpr uint8_t kPoison = 0xEE;

/// The byte a pattern-filled input holds at `index` of `buffer` on `rank`.
uint8_t patternByte(int rank, int buffer, uint64_t index);

/// The run-time counts an all-to-allv's send-count tables get (rows; a row
/// is a chunk in the executors sdma-run drives, and every builtin bound is
/// one chunk per pair): "uniform" (every pair at the bound), "zeros",
/// "skewed" (every rank sends to rank 0 only: one hot receiver), "random"
/// (0 or 1 per pair, from `seed`).
struct CountPattern {
  std::string shape = "uniform";
  uint64_t seed = 1;
  /// The count rank `from` sends rank `to`.
  int64_t count(int from, int to) const;
  /// True for a shape this knows.
  static bool known(const std::string &shape);
};

/// Fills the collective's input on every rank with the pattern and every
/// other buffer with a poison byte, so unwritten output shows up; an
/// all-to-allv's send-count tables with `counts`.
void fillInputs(const Plan &plan, HostMemory &memory,
                const CountPattern &counts = {});

/// Compares every output byte with what the plan's collective requires.
struct CheckResult {
  uint64_t wrongBytes = 0;
  uint64_t checkedBytes = 0;
  /// The first wrong byte, in words (empty if none).
  std::string firstWrong;
};
CheckResult checkOutputs(const Plan &plan, const HostMemory &memory);

/// Reductions (all_reduce, reduce_scatter, reduce): the input holds small
/// integers of the buffer's element type, from the same hash as
/// patternByte, chosen so that every result is exact in that type whatever
/// the order of combination (|x| <= 8, fewer for 16-bit floats at many
/// ranks; prod: +-1, +-2). The value of input element `element` on `rank`:
int64_t patternValue(const Plan &plan, int rank, uint64_t element);
/// `value` (exactly representable) as an element of `type`, written at `out`.
void encodeElement(const std::string &type, int64_t value, uint8_t *out);
/// The element of `type` at `in` (16-bit floats widened), as a double.
double decodeElement(const std::string &type, const uint8_t *in);
void fillReductionInput(const Plan &plan, HostMemory &memory);
/// Every output element against the operator applied, in exact integer
/// arithmetic, to every rank's input element (wrapping for i32 and i64).
CheckResult checkReduction(const Plan &plan, const HostMemory &memory);

/// all_to_allv and all_to_allv_packed: every output row and receive count
/// against the send counts in memory (AlltoAllvCheck.cpp): slots, slot p
/// of rank r's output holds rank p's first counts[p][r] rows of its slot r,
/// the rest untouched; packed, rank r's output holds every rank p's rows
/// for r (taken at p's prefix sum) in rank order, the rest untouched; the
/// receive table holds what arrived from each rank.
CheckResult checkAlltoAllv(const Plan &plan, const HostMemory &memory);

/// The MoE pair (MoeCheck.cpp), a row being a chunk: the counts sdma-run
/// gives, t[r][p * E + e] in {0, 1} (`counts` picks which (r, p) pairs
/// send, to expert (r + p) mod E), thinned where a receiver's padded
/// expert-major layout would not fit its output; empty with `why` where
/// even an empty layout (E segments of A rows) does not fit.
std::vector<std::vector<int64_t>> moeCounts(const Plan &plan,
                                            const CountPattern &counts,
                                            std::string *why = nullptr);
/// Writes them as the collective's send tables: all_to_allv_2d's
/// rank-major counts; all_to_allv_2d_offset's expert-major splits and
/// offsets (the dispatch's layout of the same counts on the expert rank).
void fillMoeCounts(const Plan &plan, HostMemory &memory,
                   const CountPattern &counts);
/// Every output row, untouched row and receive count of all_to_allv_2d
/// (expert-major, padded) or all_to_allv_2d_offset (packed rank-major),
/// against the send tables in memory.
CheckResult checkMoe(const Plan &plan, const HostMemory &memory);

/// How many bytes of the plan's buffers (every rank's) differ between `a`
/// and `b` (same plan and chunk size); the bytes compared go to `compared`.
uint64_t differingBytes(const Plan &plan, const HostMemory &a,
                        const HostMemory &b, uint64_t *compared = nullptr);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_HOSTMEMORY_H
