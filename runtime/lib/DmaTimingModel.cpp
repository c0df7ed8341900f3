//===- DmaTimingModel.cpp - predicted time of a plan on DMA engines -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/DmaTimingModel.h"
#include "JsonFields.h"

#include <algorithm>
#include <map>

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

std::optional<DmaTimingProfile> DmaTimingProfile::parse(std::string_view text,
                                                        std::string &error) {
  auto parse = [](const json &root) {
    checkFormat(root, "sdma.dma-timing", "dma timing profile",
                kDmaProfileVersion);
    DmaTimingProfile p;
    if (root.contains("target"))
      p.target = stringField(root, "$", "target");
    const json &q = field(root, "$", "parameters");
    if (!q.is_object())
      fail("$.parameters", "expected an object");
    const json &sources = field(root, "$", "sources");
    if (!sources.is_object() && !sources.is_array())
      fail("$.sources", "expected an object or an array");
    struct Field {
      const char *name;
      double *value;
    } fields[] = {{"control_us", &p.controlUs},
                  {"schedule_us", &p.scheduleUs},
                  {"engine_startup_us", &p.engineStartupUs},
                  {"per_command_us", &p.perCommandUs},
                  {"engine_atomic_us", &p.engineAtomicUs},
                  {"host_sync_us", &p.hostSyncUs},
                  {"engine_GBps", &p.engineGBps},
                  {"link_GBps", &p.linkGBps}};
    for (const Field &f : fields)
      *f.value = nonNegative(field(q, "$.parameters", f.name),
                             std::string("$.parameters.") + f.name);
    if (p.engineGBps <= 0)
      fail("$.parameters.engine_GBps", "a bandwidth must be positive");
    if (p.linkGBps <= 0)
      fail("$.parameters.link_GBps", "a bandwidth must be positive");
    if (q.contains("engines_per_gpu"))
      p.enginesPerGpu =
          integerField(q, "$.parameters", "engines_per_gpu", 1, 1 << 16);
    return p;
  };
  std::optional<DmaTimingProfile> profile =
      parseJson<DmaTimingProfile>(text, "dma timing profile", parse, error);
  if (!profile && error == "dma timing profile is not valid JSON")
    error = "not an sdma.dma-timing profile, version 1, with parameters and "
            "sources: not valid JSON";
  return profile;
}

std::optional<DmaTimingProfile> DmaTimingProfile::load(const std::string &path,
                                                       std::string &error) {
  std::optional<std::string> text = readFile(path, "timing profile", error);
  std::optional<DmaTimingProfile> profile =
      text ? parse(*text, error) : std::nullopt;
  if (text && !profile)
    error = path + ": " + error;
  return profile;
}

std::optional<double> sdma::rt::predictDmaTime(const Plan &plan,
                                               size_t chunkBytes,
                                               const DmaTimingProfile &p,
                                               std::string &error) {
  // Copies sharing a link (source rank -> destination rank) share its rate.
  std::map<std::pair<int, int>, int> sharers;
  for (const Stream &stream : plan.streams) {
    std::map<std::pair<int, int>, bool> used;
    for (const Command &c : stream.commands)
      if (c.kind == Command::Kind::Copy || c.kind == Command::Kind::Bcast ||
          c.kind == Command::Kind::Swap)
        for (int d = 1; d < (c.kind == Command::Kind::Bcast ? 3 : 2); ++d)
          used[{c.slices[0].rank, c.slices[d].rank}] = true;
    for (auto &[link, yes] : used)
      ++sharers[link];
  }
  auto rateGBps = [&](int from, int to) {
    if (from == to)
      return p.engineGBps;
    return std::min(p.engineGBps, p.linkGBps / sharers[{from, to}]);
  };

  // When each queue may start: after the host has written and rung it.
  std::vector<double> start(plan.streams.size(), 0.0);
  if (!plan.prelaunch) {
    std::map<int, double> host;
    for (size_t q = 0; q < plan.streams.size(); ++q) {
      double &t = host[plan.streams[q].rank];
      t += p.controlUs * plan.streams[q].commands.size() + p.scheduleUs;
      start[q] = t;
    }
  }

  // Replay the queues; a poll waits for the value-th notify of its flag.
  struct QueueState {
    size_t next = 0;
    double time = 0;
    bool idle = true; // the next copy pays the engine's start-up
  };
  std::vector<QueueState> state(plan.streams.size());
  for (size_t q = 0; q < state.size(); ++q)
    state[q].time = start[q];
  std::map<std::pair<int, int>, std::vector<double>> notifies; // (rank, flag)
  std::map<int, int> doneSignals;
  std::map<int, double> lastDone;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t q = 0; q < state.size(); ++q) {
      QueueState &s = state[q];
      const Stream &stream = plan.streams[q];
      while (s.next < stream.commands.size()) {
        const Command &c = stream.commands[s.next];
        double bytes = double(c.slices[0].count) * chunkBytes;
        if (c.kind == Command::Kind::Poll) {
          if (c.flag != kLaunchFlag) {
            std::vector<double> &times = notifies[{stream.rank, c.flag}];
            if (static_cast<int64_t>(times.size()) < c.value)
              break; // not yet: another queue must move first
            std::vector<double> sorted = times;
            std::sort(sorted.begin(), sorted.end());
            s.time = std::max(s.time, sorted[c.value - 1]);
            s.idle = true;
          }
        } else if (c.kind == Command::Kind::Notify) {
          s.time += p.engineAtomicUs;
          notifies[{c.target, c.flag}].push_back(s.time);
          if (c.flag == kDoneFlag) {
            ++doneSignals[c.target];
            lastDone[c.target] = std::max(lastDone[c.target], s.time);
          }
        } else {
          double rate = rateGBps(c.slices[0].rank, c.slices[1].rank);
          double moved = bytes;
          if (c.kind == Command::Kind::Bcast) {
            // One engine writes both destinations: twice the bytes.
            rate = std::min(rate, rateGBps(c.slices[0].rank, c.slices[2].rank));
            moved = 2 * bytes;
          } else if (c.kind == Command::Kind::Swap) {
            // One engine moves both directions: twice the bytes.
            moved = 2 * bytes;
          }
          s.time += (s.idle ? p.engineStartupUs : 0) + p.perCommandUs +
                    moved / (rate * 1e3); // GB/s = 1e3 bytes/us
          s.idle = false;
        }
        ++s.next;
        progress = true;
      }
    }
  }
  for (size_t q = 0; q < state.size(); ++q)
    if (state[q].next < plan.streams[q].commands.size()) {
      error = "rank " + std::to_string(plan.streams[q].rank) + " engine " +
              std::to_string(plan.streams[q].engine) +
              " waits for a notify that never comes";
      return std::nullopt;
    }
  // The host of each rank polls its completion signals one by one.
  double total = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    double t = lastDone.count(r) ? lastDone[r] : 0.0;
    t += p.hostSyncUs * doneSignals[r];
    total = std::max(total, t);
  }
  return total;
}
