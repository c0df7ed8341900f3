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

// Rank-dependent numbers in the emitted text are marked (num()); a rank's
// body is then text between numbers. When every rank's text is the same
// and each number is affine in the rank, one body serves all ranks.
constexpr char kNumOpen = '\x01', kNumClose = '\x02';

std::string num(int64_t v) { return kNumOpen + std::to_string(v) + kNumClose; }

/// A rank's body split at its marked numbers: text[0] num[0] text[1] ...
struct SplitBody {
  std::vector<std::string> text;
  std::vector<int64_t> nums;
};

SplitBody split(const std::string &body) {
  SplitBody out;
  std::size_t p = 0;
  while (true) {
    std::size_t open = body.find(kNumOpen, p);
    out.text.push_back(
        body.substr(p, open == std::string::npos ? open : open - p));
    if (open == std::string::npos)
      return out;
    std::size_t close = body.find(kNumClose, open);
    out.nums.push_back(std::stoll(body.substr(open + 1, close - open - 1)));
    p = close + 1;
  }
}

std::string literal(int64_t v) {
  return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
}

/// `body` with its numbers written out.
std::string render(const std::string &body) {
  SplitBody b = split(body);
  std::string out = b.text[0];
  for (std::size_t i = 0; i < b.nums.size(); ++i)
    out += literal(b.nums[i]) + b.text[i + 1];
  return out;
}

/// The number at one position of every rank's body as code in `rank`:
/// `c + d * rank`, or `(c + d * rank) % R` for ranks counted around a ring
/// (a peer rank + 1 mod R, a chunk rank - step mod R); none if neither.
std::optional<std::string> rankExpression(const std::vector<int64_t> &v) {
  const auto ranks = static_cast<int64_t>(v.size());
  int64_t c = v[0], d = v[1] - v[0];
  bool affine = true, ring = true;
  for (int64_t r = 0; r < ranks; ++r) {
    affine &= v[r] == c + d * r;
    ring &= v[r] >= 0 && v[r] < ranks;
  }
  if (affine)
    return d == 0 ? literal(c)
                  : "(" + std::to_string(c) + " + " + literal(d) + " * rank)";
  int64_t step = ((d % ranks) + ranks) % ranks;
  for (int64_t r = 0; ring && r < ranks; ++r)
    ring = v[r] == (c + step * r) % ranks;
  if (!ring)
    return std::nullopt;
  return "((" + std::to_string(c) + " + " + std::to_string(step) +
         " * rank) % " + std::to_string(ranks) + ")";
}

/// One body for every rank, if the ranks' bodies differ only in numbers
/// that rankExpression writes as code in the rank.
std::optional<std::string> uniformBody(const std::vector<std::string> &bodies) {
  if (bodies.size() < 2)
    return std::nullopt;
  std::vector<SplitBody> split0;
  for (const std::string &body : bodies)
    split0.push_back(split(body));
  const SplitBody &first = split0[0];
  for (const SplitBody &b : split0)
    if (b.text != first.text)
      return std::nullopt;
  std::string out = first.text[0];
  std::vector<int64_t> values(bodies.size());
  for (std::size_t i = 0; i < first.nums.size(); ++i) {
    for (std::size_t r = 0; r < split0.size(); ++r)
      values[r] = split0[r].nums[i];
    std::optional<std::string> expr = rankExpression(values);
    if (!expr)
      return std::nullopt;
    out += *expr + first.text[i + 1];
  }
  return out;
}

/// Each op field sdma_seg_move reads as a + b * i over the segment's
/// rows, or none when one is not affine in the op index i.
std::optional<std::vector<std::pair<int64_t, int64_t>>>
affineFields(const std::vector<int64_t> &ops,
             std::pair<int64_t, int64_t> segment, int64_t kind) {
  std::vector<int> fields = {1, 2, 3, 5, 6, 7};
  if (kind == 1)
    fields.insert(fields.end(), {8, 9, 10});
  const int64_t *first = ops.data() + segment.first * kOpStride;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int f : fields) {
    int64_t a = first[f], b = segment.second > 1 ? first[kOpStride + f] - a : 0;
    for (int64_t i = 2; i < segment.second; ++i)
      if (first[i * kOpStride + f] != a + b * i)
        return std::nullopt;
    out.push_back({a, b});
  }
  return out;
}

/// The lambda that resolves op i of an affine segment (sdma_seg_move's
/// OPS): its fields as constants.
std::string affineResolver(const std::vector<std::pair<int64_t, int64_t>> &f) {
  auto field = [&](std::size_t k) {
    return "(" + num(f[k].first) + " + " + num(f[k].second) + " * k)";
  };
  auto address = [&](std::size_t k) {
    return "T->buf[" + field(k) + " * SDMA_BUFFERS + " + field(k + 1) + "] + " +
           field(k + 2) + " * unit";
  };
  std::string out = "[=](const SdmaTable *T, unsigned long long i,\n"
                    "        unsigned long long unit, char *&a, char *&b, "
                    "char *&c) {\n"
                    "      const long long k = (long long)i;\n"
                    "      a = " +
                    address(0) + ";\n      b = " + address(3) + ";\n";
  out += f.size() > 6 ? "      c = " + address(6) + ";\n" : "      c = b;\n";
  return out + "    }";
}

/// One segment's call; its op rows as constants when `affine` allows.
void emitSegment(std::ostream &os, const std::vector<int64_t> &ops,
                 std::pair<int64_t, int64_t> segment, bool affine) {
  const int64_t *row = ops.data() + segment.first * kOpStride;
  // Offsets and counts in chunks, or in row[11] bytes (count tables).
  std::string unit =
      row[11] ? std::to_string(row[11]) + "ull" : std::string("chunk");
  os << "    ";
  if (row[0] == 4) {
    os << "sdma_seg_reduce<" << row[8] << ", " << row[10] << ", " << row[9]
       << ">(T, sdma_ops + " << num(segment.first * kOpStride) << ", "
       << num(segment.second) << ", chunk, " << num(row[4]) << " * chunk";
  } else {
    auto fields = affine ? affineFields(ops, segment, row[0]) : std::nullopt;
    os << "sdma_seg_move<" << row[0]
       << (sharesSource(ops, segment) ? ", true" : "") << ">(T, ";
    if (fields)
      os << affineResolver(*fields);
    else
      os << "sdma_table_ops<" << row[0] << ">{sdma_ops + "
         << num(segment.first * kOpStride) << "}";
    os << ", " << num(segment.second) << ", " << unit << ", " << num(row[4])
       << " * " << unit;
  }
  os << ", nthreads, u, base);\n";
}

/// Rank `rank`'s steps as the body of its function; adds its segments to
/// `segments` and `lines`.
std::string rankBody(std::size_t rank, const std::vector<Step> &steps,
                     std::vector<int64_t> &sorted,
                     const std::vector<unsigned long long> &perEpoch,
                     int64_t slots, bool affine, std::size_t &lines,
                     std::size_t &segmentsTotal) {
  std::ostringstream os;
  auto waitValue = [&](const Step &s) {
    return "epoch * " +
           num(static_cast<int64_t>(perEpoch[rank * slots + s.a])) + " + " +
           num(s.b);
  };
  for (const Step &s : steps) {
    switch (s.kind) {
    case kPhase: {
      auto segments = sortPhase(sorted, s.a, s.b);
      lines += segments.size();
      segmentsTotal += segments.size();
      os << "  { // ops [" << num(s.a) << ", " << num(s.a + s.b) << ")\n"
         << "    unsigned long long u = (unsigned long long)SDMA_BID * "
            "SDMA_NTID + SDMA_TID, base = 0;\n";
      for (auto segment : segments)
        emitSegment(os, sorted, segment, affine);
      os << "  }\n";
      break;
    }
    case kSync:
      os << "  sdma_rank_sync(T, " << num(rank) << ");\n";
      break;
    case kSignal:
      os << "  sdma_signal(T, " << num(s.a) << ", " << num(s.b) << ");\n";
      break;
    case kWait:
      os << "  if (!sdma_wait(T, " << num(rank) << ", " << num(s.a) << ", "
         << waitValue(s) << "))\n    return false;\n";
      break;
    case kBarrier:
      os << "  if (!sdma_barrier_step(T, " << num(rank) << ", " << num(s.a)
         << ", " << waitValue(s) << "))\n    return false;\n";
      break;
    }
  }
  os << "  return true;\n";
  return os.str();
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

  const std::size_t stepLines = lines;
  std::vector<int64_t> sorted = ops;
  std::vector<std::string> bodies;
  std::optional<std::string> uniform;
  std::size_t segmentsTotal = 0, segmentsEmitted = 0;
  // Affine segments first; each is its own instantiation of sdma_seg_move,
  // so where the routines are not inlined (many segments) the table rows
  // come back (one instantiation per kind).
  for (bool affine : {true, false}) {
    lines = stepLines;
    segmentsTotal = 0;
    bodies.clear();
    for (std::size_t rank = 0; rank < steps.size(); ++rank) {
      bodies.push_back(rankBody(rank, steps[rank], sorted, perEpoch, slots,
                                affine, lines, segmentsTotal));
      if (lines > kSpecialiseMaxLines)
        return std::nullopt;
    }
    uniform = uniformBody(bodies);
    segmentsEmitted = uniform ? segmentsTotal / steps.size() : segmentsTotal;
    if (segmentsEmitted <= kInlineMaxSegments)
      break;
  }

  std::ostringstream os;
  const char *params = "(const SdmaTable *T, unsigned long long chunk,\n"
                       "    unsigned long long epoch) {\n";
  const char *prologue = "  const unsigned long long nthreads =\n"
                         "      (unsigned long long)SDMA_NBID * SDMA_NTID;\n"
                         "  (void)chunk, (void)epoch, (void)nthreads;\n";
  if (uniform) {
    // Every rank runs the same code: no switch, one copy of it in the
    // instruction cache.
    os << "static __device__ SDMA_INLINE bool sdma_rank_all(const SdmaTable "
          "*T, int rank,\n    unsigned long long chunk, unsigned long long "
          "epoch) {\n"
       << prologue << "  (void)rank;\n"
       << *uniform << "}\n"
       << "static __device__ bool sdma_run_rank(const SdmaTable *T, int rank,\n"
       << "                                     unsigned long long chunk,\n"
       << "                                     unsigned long long epoch) {\n"
       << "  return sdma_rank_all(T, rank, chunk, epoch);\n}\n";
  } else {
    for (std::size_t rank = 0; rank < steps.size(); ++rank)
      os << "static __device__ bool sdma_rank_" << rank << params << prologue
         << render(bodies[rank]) << "}\n";
    os << "static __device__ bool sdma_run_rank(const SdmaTable *T, int "
          "rank,\n"
       << "                                     unsigned long long chunk,\n"
       << "                                     unsigned long long epoch) {\n"
       << "  switch (rank) {\n";
    for (std::size_t rank = 0; rank < steps.size(); ++rank)
      os << "  case " << rank << ":\n    return sdma_rank_" << rank
         << "(T, chunk, epoch);\n";
    os << "  }\n  return true;\n}\n";
  }
  ops = std::move(sorted);
  // Affine fields constant over the segment: drop their zero terms.
  std::string text = os.str();
  for (std::size_t p; (p = text.find(" + 0 * k")) != std::string::npos;)
    text.erase(p, 8);
  // Inlined into every phase, the segment routines cost NVRTC seconds per
  // dozen calls (a ring of 8 ranks: 56 calls, 20 s); a call costs about a
  // microsecond per phase at small sizes. Few segments: inline.
  SpecialisedCode code;
  code.defines = "#define SDMA_SPECIALISED 1\n";
  if (segmentsEmitted <= kInlineMaxSegments)
    code.defines += "#ifndef SDMA_SEG_INLINE\n#define SDMA_SEG_INLINE "
                    "SDMA_INLINE\n#endif\n";
  code.ranks = std::move(text);
  return code;
}
