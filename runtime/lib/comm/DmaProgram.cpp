//===- DmaProgram.cpp - a schedule's DMA plan in a communicator -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/DmaProgram.h"

#include <algorithm>
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

bool DmaProgram::attachPackets(PacketPlan packed, std::string &error) {
  const std::string what = "the SDMA packets of " + packed.program + ": ";
  auto refuse = [&](const std::string &why) {
    error = what + why;
    return false;
  };
  if (packed.ranks != plan.ranks)
    return refuse(std::to_string(packed.ranks) + " ranks, the DMA plan " +
                  std::to_string(plan.ranks));
  if (packed.buffers.size() != plan.buffers.size())
    return refuse(std::to_string(packed.buffers.size()) +
                  " buffers, the DMA plan " +
                  std::to_string(plan.buffers.size()));
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    if (packed.buffers[b].name != plan.buffers[b].name ||
        packed.buffers[b].chunks != plan.buffers[b].chunks)
      return refuse("buffer " + std::to_string(b) + " is '" +
                    packed.buffers[b].name + "' of " +
                    std::to_string(packed.buffers[b].chunks) +
                    " chunks, in the DMA plan '" + plan.buffers[b].name +
                    "' of " + std::to_string(plan.buffers[b].chunks));
  if (packed.timestamps)
    return refuse("they write timestamps (compiled for profiling)");
  if (packed.flags <= kDoneFlag || packed.done.size() != size_t(plan.ranks))
    return refuse("no completion flag for every rank");
  packetQueues.clear();
  packetBaseAlign = 1;
  decodedPackets.assign(packed.queues.size(), {});
  packetNotifiers.clear();
  std::map<std::pair<int, int64_t>, std::set<int>> notify;
  for (size_t q = 0; q < packed.queues.size(); ++q) {
    const PacketQueue &queue = packed.queues[q];
    const std::string where = "queue " + std::to_string(queue.rank) + ":" +
                              std::to_string(queue.engine) + ": ";
    if (queue.rank < 0 || queue.rank >= plan.ranks ||
        (q && queue.rank < packed.queues[q - 1].rank))
      return refuse(where + "the queues are not grouped by rank in order");
    if (queue.rank == rank)
      packetQueues.push_back(q);
    std::string why;
    std::vector<Packet> &packets = decodedPackets[q];
    if (!decodePackets(queue.image, packets, why))
      return refuse(where + why);
    std::map<size_t, const Relocation *> flagAt;
    for (const Relocation &r : queue.relocations)
      if (r.kind == Relocation::Kind::Flag) {
        if (r.slot < 0 || r.slot >= packed.flags)
          return refuse(where + "flag slot " + std::to_string(r.slot) + " of " +
                        std::to_string(packed.flags));
        flagAt[r.dword] = &r;
      }
    for (const Packet &p : packets) {
      if (p.kind == Packet::Kind::CopySwap)
        packetBaseAlign = std::max(packetBaseAlign, 64u);
      if (p.kind == Packet::Kind::CopyBroadcast)
        packetBaseAlign = std::max(packetBaseAlign, 32u);
      auto r = flagAt.find(p.dword + p.addrAt[0]);
      if (r == flagAt.end() && p.kind == Packet::Kind::PollRegMem)
        return refuse(where + "a poll at dword " + std::to_string(p.dword) +
                      " reads no flag slot");
      if (r == flagAt.end())
        continue;
      if (p.kind == Packet::Kind::PollRegMem && r->second->slot == kLaunchFlag)
        return refuse(where + "it waits for a launch flag (prelaunched "
                              "packets): the ring writer is the launch");
      if (p.kind == Packet::Kind::AtomicAdd64 || p.kind == Packet::Kind::Fence)
        notify[{r->second->rank, r->second->slot}].insert(queue.rank);
    }
  }
  for (auto &[flag, ranks] : notify)
    packetNotifiers[flag] = {ranks.begin(), ranks.end()};
  packets = std::make_shared<const PacketPlan>(std::move(packed));
  return true;
}

std::string DmaProgram::packetRefusal(size_t chunkBytes,
                                      unsigned baseAlign) const {
  if (!packets)
    return "";
  const PacketPlan &p = *packets;
  if (baseAlign < packetBaseAlign)
    return "a buffer is not " + std::to_string(packetBaseAlign) +
           "-byte aligned, which the " + variant + " packets' " +
           (packetBaseAlign == 64 ? "swaps" : "broadcasts") + " need";
  if (p.chunkAlign > 1 && chunkBytes % uint64_t(p.chunkAlign))
    return "chunk " + std::to_string(chunkBytes) +
           " bytes is not a multiple of the " + std::to_string(p.chunkAlign) +
           " bytes the " + variant + " packets need";
  if (chunkBytes > uint64_t(p.maxChunkBytes))
    return "chunk " + std::to_string(chunkBytes) + " bytes exceeds the " +
           std::to_string(p.maxChunkBytes) + " bytes the " + p.target.name +
           " packets were split for";
  return "";
}

std::string DmaProgram::submission() const {
  return packets ? ", kernel-submitted " + packets->target.name + " packets"
                 : "";
}

std::vector<int> DmaProgram::notifiers(int rank, int flag) const {
  if (packets) {
    auto it = packetNotifiers.find({rank, flag});
    return it == packetNotifiers.end() ? std::vector<int>() : it->second;
  }
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
