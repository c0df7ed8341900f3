//===- Specialise.cpp - each rank's steps as straight-line code -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "Specialise.h"

#include <algorithm>
#include <sstream>

using namespace sdma::hip;

namespace {

/// What makes two rows one segment: the kind, the count and its unit, and
/// for a reduce row its source and destination counts and first flag.
using SegmentKey = std::array<int64_t, 6>;

SegmentKey keyOf(const int64_t *row) {
  if (row[0] == 4)
    return {row[0], row[4], row[11], row[8], row[10], row[9]};
  return {row[0], row[4], row[11], 0, 0, 0};
}

/// Sorts the rows [first, first + count) of `ops` by segment key (stable:
/// equal rows keep their order) and returns the segments as (first row,
/// rows).
std::vector<std::pair<int64_t, int64_t>>
sortPhase(std::vector<int64_t> &ops, int64_t first, int64_t count) {
  std::vector<int64_t> order(count);
  for (int64_t i = 0; i < count; ++i)
    order[i] = i;
  const int64_t *rows = ops.data() + first * kOpStride;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return keyOf(rows + a * kOpStride) < keyOf(rows + b * kOpStride);
  });
  std::vector<int64_t> sorted;
  sorted.reserve(count * kOpStride);
  for (int64_t i : order)
    sorted.insert(sorted.end(), rows + i * kOpStride,
                  rows + (i + 1) * kOpStride);
  std::copy(sorted.begin(), sorted.end(), ops.begin() + first * kOpStride);

  std::vector<std::pair<int64_t, int64_t>> segments;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t *row = ops.data() + (first + i) * kOpStride;
    if (!segments.empty() &&
        keyOf(row) == keyOf(ops.data() + (first + i - 1) * kOpStride))
      ++segments.back().second;
    else
      segments.push_back({first + i, 1});
  }
  return segments;
}

/// Whether every op of a segment of several reads the same source slice
/// (an all-gather's copies of a rank's input, a broadcast's): the kernel
/// then interleaves the ops tile by tile so the source is read once
/// (sdma_seg_move's SHARED; LdstPhases.hip).
bool sharesSource(const std::vector<int64_t> &ops,
                  std::pair<int64_t, int64_t> segment) {
  if (segment.second < 2)
    return false;
  const int64_t *first = ops.data() + segment.first * kOpStride;
  for (int64_t i = 1; i < segment.second; ++i) {
    const int64_t *row = first + i * kOpStride;
    if (row[1] != first[1] || row[2] != first[2] || row[3] != first[3])
      return false;
  }
  return true;
}

/// One segment's call.
void emitSegment(std::ostream &os, const std::vector<int64_t> &ops,
                 std::pair<int64_t, int64_t> segment) {
  const int64_t *row = ops.data() + segment.first * kOpStride;
  // Offsets and counts in chunks, or in row[11] bytes (count tables).
  std::string unit =
      row[11] ? std::to_string(row[11]) + "ull" : std::string("chunk");
  os << "    ";
  if (row[0] == 4)
    os << "sdma_seg_reduce<" << row[8] << ", " << row[10] << ", " << row[9]
       << ">(T, sdma_ops + " << segment.first * kOpStride << ", "
       << segment.second << ", chunk, " << row[4] << "ull * chunk";
  else
    os << "sdma_seg_move<" << row[0]
       << (sharesSource(ops, segment) ? ", true" : "") << ">(T, sdma_ops + "
       << segment.first * kOpStride << ", " << segment.second << ", " << unit
       << ", " << row[4] << "ull * " << unit;
  os << ", nthreads, u, base);\n";
}

} // namespace

std::optional<SpecialisedCode> sdma::hip::specialiseRanks(
    const std::vector<std::vector<Step>> &steps, std::vector<int64_t> &ops,
    const std::vector<unsigned long long> &perEpoch, int64_t slots) {
  std::size_t lines = 0;
  for (const auto &rankSteps : steps)
    lines += rankSteps.size();
  for (std::size_t i = 0; i < ops.size(); i += kOpStride)
    if (ops[i] == 3) // sdma.copyv: counts known at run time only
      return std::nullopt;
  if (lines > kSpecialiseMaxLines)
    return std::nullopt;

  std::vector<int64_t> sorted = ops;
  std::size_t segmentsTotal = 0;
  std::ostringstream os;
  for (std::size_t rank = 0; rank < steps.size(); ++rank) {
    os << "static __device__ bool sdma_rank_" << rank
       << "(const SdmaTable *T, unsigned long long chunk,\n"
       << "    unsigned long long epoch) {\n"
       << "  const unsigned long long nthreads =\n"
       << "      (unsigned long long)SDMA_NBID * SDMA_NTID;\n"
       << "  (void)chunk, (void)epoch, (void)nthreads;\n";
    for (const Step &s : steps[rank]) {
      auto waitValue = [&] {
        return "epoch * " + std::to_string(perEpoch[rank * slots + s.a]) +
               "ull + " + std::to_string(s.b) + "ull";
      };
      switch (s.kind) {
      case kPhase: {
        auto segments = sortPhase(sorted, s.a, s.b);
        lines += segments.size();
        segmentsTotal += segments.size();
        if (lines > kSpecialiseMaxLines)
          return std::nullopt;
        os << "  { // ops [" << s.a << ", " << s.a + s.b << ")\n"
           << "    unsigned long long u = (unsigned long long)SDMA_BID * "
              "SDMA_NTID + SDMA_TID, base = 0;\n";
        for (auto segment : segments)
          emitSegment(os, sorted, segment);
        os << "  }\n";
        break;
      }
      case kSync:
        os << "  sdma_rank_sync(T, " << rank << ");\n";
        break;
      case kSignal:
        os << "  sdma_signal(T, " << s.a << ", " << s.b << ");\n";
        break;
      case kWait:
        os << "  if (!sdma_wait(T, " << rank << ", " << s.a << ", "
           << waitValue() << "))\n    return false;\n";
        break;
      case kBarrier:
        os << "  if (!sdma_barrier_step(T, " << rank << ", " << s.a << ", "
           << waitValue() << "))\n    return false;\n";
        break;
      }
    }
    os << "  return true;\n}\n";
  }
  os << "static __device__ bool sdma_run_rank(const SdmaTable *T, int rank,\n"
     << "                                     unsigned long long chunk,\n"
     << "                                     unsigned long long epoch) {\n"
     << "  switch (rank) {\n";
  for (std::size_t rank = 0; rank < steps.size(); ++rank)
    os << "  case " << rank << ":\n    return sdma_rank_" << rank
       << "(T, chunk, epoch);\n";
  os << "  }\n  return true;\n}\n";
  ops = std::move(sorted);
  // Inlined into every phase, the segment routines cost NVRTC seconds per
  // dozen calls (a ring of 8 ranks: 56 calls, 20 s); a call costs about a
  // microsecond per phase at small sizes. Few segments: inline.
  SpecialisedCode code;
  code.defines = "#define SDMA_SPECIALISED 1\n";
  if (segmentsTotal <= kInlineMaxSegments)
    code.defines += "#ifndef SDMA_SEG_INLINE\n#define SDMA_SEG_INLINE "
                    "SDMA_INLINE\n#endif\n";
  code.ranks = os.str();
  return code;
}
