//===- DmaProgram.cpp - a schedule's DMA plan in a communicator -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/DmaProgram.h"

#include <set>

using namespace sdma::rt;

namespace {

/// Where the plan's buffers differ from the program's, or "".
std::string compareBuffers(const Plan &plan, const LdstProgram &ldst) {
  if (plan.buffers.size() != ldst.buffers.size())
    return "the DMA plan has " + std::to_string(plan.buffers.size()) +
           " buffers, the load/store program " +
           std::to_string(ldst.buffers.size());
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const Buffer &p = plan.buffers[b], &l = ldst.buffers[b];
    if (p.name != l.name || p.chunks != l.chunks || p.counts != l.counts)
      return "buffer " + std::to_string(b) + " is '" + p.name + "' of " +
             std::to_string(p.chunks) + " chunks in the DMA plan and '" +
             l.name + "' of " + std::to_string(l.chunks) +
             " in the load/store program";
    if (p.counts)
      return "buffer '" + p.name +
             "' is a count table: counts read at run time have no DMA plan";
  }
  const std::optional<Collective> &a = plan.collective, &b = ldst.collective;
  if (a.has_value() != b.has_value() ||
      (a && (a->kind != b->kind || a->input != b->input ||
             a->output != b->output || a->root != b->root)))
    return "the DMA plan implements " + (a ? a->kind : std::string("nothing")) +
           ", the load/store program " + (b ? b->kind : std::string("nothing"));
  return "";
}

} // namespace

std::optional<DmaProgram> DmaProgram::create(Plan plan, std::string variant,
                                             const LdstProgram &ldst, int rank,
                                             bool valueWaits,
                                             std::string &error) {
  std::string why;
  if (!plan.check(why)) {
    error = "the DMA plan of " + ldst.schedule + " is malformed: " + why;
    return std::nullopt;
  }
  if (plan.ranks != ldst.ranks || rank < 0 || rank >= plan.ranks) {
    error = "the DMA plan of " + ldst.schedule + " has " +
            std::to_string(plan.ranks) + " ranks, the load/store program " +
            std::to_string(ldst.ranks);
    return std::nullopt;
  }
  if (std::string differs = compareBuffers(plan, ldst); !differs.empty()) {
    error = ldst.schedule + ": " + differs;
    return std::nullopt;
  }
  DmaProgram program;
  program.rank = rank;
  program.variant = std::move(variant);
  std::set<std::pair<int, int>> allowed;
  for (const auto &pair : ldst.touched(rank))
    allowed.insert(pair);
  DmaScheduleOptions options;
  options.self = rank;
  options.valueWaits = valueWaits;
  for (size_t q = 0; q < plan.streams.size(); ++q) {
    const Stream &stream = plan.streams[q];
    options.process.push_back(stream.rank);
    if (stream.rank != rank)
      continue;
    program.queues.push_back(q);
    for (const Command &c : stream.commands) {
      for (int s = 0; s < c.sliceCount(); ++s)
        if (!allowed.count({c.slices[s].rank, c.slices[s].buffer})) {
          error = ldst.schedule + ": rank " + std::to_string(rank) +
                  "'s DMA queue " + std::to_string(q) + " touches buffer '" +
                  plan.buffers[c.slices[s].buffer].name + "' of rank " +
                  std::to_string(c.slices[s].rank) +
                  ", which its load/store kernel does not";
          return std::nullopt;
        }
    }
  }
  std::optional<DmaSchedule> schedule = scheduleDmaQueues(plan, why, options);
  if (!schedule) {
    error = ldst.schedule + "'s DMA plan: " + why;
    return std::nullopt;
  }
  program.schedule = std::move(*schedule);
  program.plan = std::move(plan);
  return program;
}

std::vector<int> DmaProgram::notifiers(int rank, int flag) const {
  std::set<int> ranks;
  for (const Stream &stream : plan.streams)
    for (const Command &c : stream.commands)
      if (c.kind == Command::Kind::Notify && c.target == rank && c.flag == flag)
        ranks.insert(stream.rank);
  return {ranks.begin(), ranks.end()};
}

bool DmaProgram::decode(const KernelLaunch &launch, LaunchTable &table,
                        std::string &error) const {
  if (!LaunchTable::decode(launch.table, plan.ranks, plan.buffers.size(), table,
                           error))
    return false;
  if (launch.programRank == rank)
    return true;
  error = "internal: rank " + std::to_string(rank) +
          "'s DMA program launched for rank " +
          std::to_string(launch.programRank);
  return false;
}

bool LaunchTable::decode(const std::vector<uint64_t> &t, int ranks,
                         size_t buffers, LaunchTable &table,
                         std::string &error) {
  size_t RB = size_t(ranks) * buffers;
  size_t plain = RB + 4 * size_t(ranks) + 10;
  bool lowLatency = t.size() == plain + size_t(ranks) + 2;
  if (t.size() != plain && !lowLatency) {
    error = "internal: a kernel table of " + std::to_string(t.size()) +
            " words for " + std::to_string(ranks) + " ranks and " +
            std::to_string(buffers) + " buffers";
    return false;
  }
  auto word = [&](size_t i) { return reinterpret_cast<void *>(t[i]); };
  table.buffers.clear();
  table.flags.clear();
  table.sync.clear();
  table.arrive.clear();
  table.tags.clear();
  for (size_t i = 0; i < RB; ++i)
    table.buffers.push_back(static_cast<char *>(word(i)));
  for (int r = 0; r < ranks; ++r) {
    table.flags.push_back(static_cast<unsigned long long *>(word(RB + r)));
    table.sync.push_back(static_cast<unsigned int *>(word(RB + ranks + r)));
  }
  size_t at = RB + 2 * size_t(ranks);
  table.error = static_cast<unsigned long long *>(word(at));
  table.timeoutNs = t[at + 1];
  table.epochs = static_cast<unsigned long long *>(word(at + 2));
  for (int r = 0; r < ranks; ++r)
    table.arrive.push_back(static_cast<unsigned long long *>(word(at + 3 + r)));
  at += 3 + ranks;
  table.errorMirror = static_cast<unsigned long long *>(word(at));
  table.rowBytes = t[at + 1];
  for (int i = 0; i < 4; ++i)
    table.counts[i] = static_cast<long long *>(word(at + 2 + i));
  table.callTag = t[at + 6];
  for (int r = 0; r < ranks; ++r)
    table.tags.push_back(static_cast<unsigned long long *>(word(at + 7 + r)));
  table.ll.clear();
  table.llSeq = nullptr;
  table.llPairBytes = 0;
  if (lowLatency) {
    at += 7 + ranks;
    for (int r = 0; r < ranks; ++r)
      table.ll.push_back(static_cast<char *>(word(at + r)));
    table.llSeq = static_cast<unsigned long long *>(word(at + ranks));
    table.llPairBytes = t[at + ranks + 1];
  }
  return true;
}
