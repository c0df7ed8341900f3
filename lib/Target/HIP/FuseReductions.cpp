//===- FuseReductions.cpp - reduce rows that take over copies -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// See FuseReductions.h for the two rewrites and why they are sound.
//
//===----------------------------------------------------------------------===//

#include "FuseReductions.h"

#include <algorithm>
#include <string>

using namespace sdma::hip;

namespace {

/// A run of chunks of one buffer on one rank, and whether it is written.
struct Access {
  int64_t rank, buffer, begin, end;
  bool write;
};

bool overlap(const Access &a, const Access &b) {
  return a.rank == b.rank && a.buffer == b.buffer && a.begin < b.end &&
         b.begin < a.end;
}

/// What row `at` of `phase` reads and writes (chunks; count-table rows are
/// never fused, their accesses are reported whole-buffer).
std::vector<Access> accessesOf(const RawStep &phase, size_t at) {
  const int64_t *row = phase.opRows.data() + at;
  int64_t n = row[4];
  std::vector<Access> out;
  if (row[0] == 3 || row[11]) {
    // sdma.copyv and count tables: anything on the two ranks.
    for (int64_t rank : {row[1], row[5]})
      out.push_back({rank, -1, INT64_MIN, INT64_MAX, true});
    return out;
  }
  out.push_back({row[1], row[2], row[3], row[3] + n, row[0] != 0});
  if (row[0] == 4) {
    out.back().write = true; // the destination: read and written
    for (const SliceRef &s : phase.sources[row[7]])
      out.push_back({s[0], s[1], s[2], s[2] + n, false});
    for (const SliceRef &s : phase.dests[row[7]])
      out.push_back({s[0], s[1], s[2], s[2] + n, true});
    return out;
  }
  out.push_back({row[5], row[6], row[7], row[7] + n, true});
  if (row[0] == 1)
    out.push_back({row[8], row[9], row[10], row[10] + n, true});
  return out;
}

/// True when a row of `phase` other than those at `skip` touches `what`
/// (writes it, when `writesOnly`).
bool touchedByOthers(const RawStep &phase, const std::vector<size_t> &skip,
                     const Access &what, bool writesOnly) {
  for (size_t at = 0; at < phase.opRows.size(); at += kOpStride) {
    if (std::find(skip.begin(), skip.end(), at) != skip.end())
      continue;
    for (const Access &a : accessesOf(phase, at))
      if ((a.buffer < 0 ? a.rank == what.rank : overlap(a, what)) &&
          (a.write || !writesOnly))
        return true;
  }
  return false;
}

/// A plain local copy row (kind 0, chunks) and its slices.
bool isPlainCopy(const int64_t *row) { return row[0] == 0 && row[11] == 0; }

void eraseRow(RawStep &phase, size_t at) {
  phase.opRows.erase(phase.opRows.begin() + at,
                     phase.opRows.begin() + at + kOpStride);
}

/// copy A -> D; fence; reduce D <- S...  =>  reduce D <- A, S...
void fuseCopyIntoReduce(RawStep &first, RawStep &second) {
  for (size_t g = 0; g < second.opRows.size(); g += kOpStride) {
    int64_t *red = second.opRows.data() + g;
    if (red[0] != 4 || red[9] || !second.dests[red[7]].empty())
      continue;
    Access dst{red[1], red[2], red[3], red[3] + red[4], true};
    for (size_t c = 0; c < first.opRows.size(); c += kOpStride) {
      const int64_t *copy = first.opRows.data() + c;
      if (!isPlainCopy(copy) || copy[5] != red[1] || copy[6] != red[2] ||
          copy[7] != red[3] || copy[4] != red[4] || copy[1] != red[1])
        continue;
      Access src{copy[1], copy[2], copy[3], copy[3] + copy[4], false};
      if (touchedByOthers(first, {c}, dst, false) ||
          touchedByOthers(second, {g}, dst, false) ||
          touchedByOthers(first, {c}, src, true) ||
          touchedByOthers(second, {g}, src, true))
        continue;
      auto &list = second.sources[red[7]];
      list.insert(list.begin(), {copy[1], copy[2], copy[3]});
      red[9] = 1;
      eraseRow(first, c);
      break;
    }
  }
}

/// reduce D <- S...; fence; copy D -> E...  =>  reduce D <- S..., -> E...
void fuseCopiesOutOfReduce(RawStep &first, RawStep &second) {
  for (size_t g = 0; g < first.opRows.size(); g += kOpStride) {
    const int64_t *red = first.opRows.data() + g;
    if (red[0] != 4)
      continue;
    Access dst{red[1], red[2], red[3], red[3] + red[4], false};
    std::vector<size_t> copies;
    for (size_t c = 0; c < second.opRows.size(); c += kOpStride) {
      const int64_t *copy = second.opRows.data() + c;
      if (isPlainCopy(copy) && copy[1] == red[1] && copy[2] == red[2] &&
          copy[3] == red[3] && copy[4] == red[4])
        copies.push_back(c);
    }
    std::vector<size_t> moved;
    for (size_t c : copies) {
      const int64_t *copy = second.opRows.data() + c;
      Access to{copy[5], copy[6], copy[7], copy[7] + copy[4], true};
      if (touchedByOthers(first, {g}, to, false) ||
          touchedByOthers(second, copies, to, false) ||
          touchedByOthers(second, copies, dst, true))
        continue;
      first.dests[red[7]].push_back({copy[5], copy[6], copy[7]});
      moved.push_back(c);
    }
    std::sort(moved.rbegin(), moved.rend());
    for (size_t c : moved)
      eraseRow(second, c);
  }
}

/// The next phase after `i` with nothing but syncs between, or npos.
size_t nextPhase(const std::vector<RawStep> &steps, size_t i) {
  for (size_t j = i + 1; j < steps.size(); ++j) {
    if (steps[j].step.kind == kPhase)
      return j;
    if (steps[j].step.kind != kSync)
      return std::string::npos;
  }
  return std::string::npos;
}

} // namespace

void sdma::hip::fuseReductions(std::vector<RawStep> &steps) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].step.kind != kPhase)
      continue;
    size_t j = nextPhase(steps, i);
    if (j == std::string::npos)
      continue;
    fuseCopyIntoReduce(steps[i], steps[j]);
    fuseCopiesOutOfReduce(steps[i], steps[j]);
  }
  // Phases left empty go, and with them the syncs that fenced them (a
  // sync left first or last where none was orders nothing: the kernel's
  // run barriers frame the steps).
  if (steps.empty())
    return;
  bool syncFirst = steps.front().step.kind == kSync,
       syncLast = steps.back().step.kind == kSync;
  std::vector<RawStep> kept;
  for (RawStep &s : steps) {
    if (s.step.kind == kPhase && s.opRows.empty())
      continue;
    if (s.step.kind == kSync &&
        (kept.empty() ? !syncFirst : kept.back().step.kind == kSync))
      continue;
    kept.push_back(std::move(s));
  }
  if (!syncLast && !kept.empty() && kept.back().step.kind == kSync)
    kept.pop_back();
  steps = std::move(kept);
}
