//===- DmaTimingModel.cpp - predicted time of a plan on DMA engines -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/DmaTimingModel.h"
#include "format/JsonFields.h"

#include <algorithm>
#include <map>

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

const char *sdma::rt::submissionName(DmaSubmission submission) {
  return submission == DmaSubmission::Gpu ? "gpu" : "host";
}

namespace {

struct Param {
  const char *name;
  double *value;
};

/// Reads every one of `params` from `$.parameters` (each a non-negative
/// number).
void readParams(const json &q, std::initializer_list<Param> params) {
  for (const Param &f : params)
    *f.value = nonNegative(field(q, "$.parameters", f.name),
                           std::string("$.parameters.") + f.name);
}

/// Whether `$.parameters` names any of `params`.
bool mentions(const json &q, std::initializer_list<Param> params) {
  for (const Param &f : params)
    if (q.contains(f.name))
      return true;
  return false;
}

void positiveRate(double value, const std::string &path) {
  if (value <= 0)
    fail(path, "a bandwidth must be positive");
}

LdstTimingProfile parseLdst(const json &object) {
  if (!object.is_object())
    fail("$.ldst", "expected an object");
  LdstTimingProfile l;
  Param params[] = {{"launch_us", &l.launchUs},
                    {"sync_us", &l.syncUs},
                    {"peer_GBps", &l.peerGBps},
                    {"local_GBps", &l.localGBps}};
  for (const Param &f : params)
    *f.value = nonNegative(field(object, "$.ldst", f.name),
                           std::string("$.ldst.") + f.name);
  positiveRate(l.peerGBps, "$.ldst.peer_GBps");
  positiveRate(l.localGBps, "$.ldst.local_GBps");
  return l;
}

DmaTimingProfile parseProfile(const json &root) {
  checkFormat(root, "sdma.dma-timing", "dma timing profile",
              kDmaProfileVersion);
  DmaTimingProfile p;
  if (root.contains("target"))
    p.target = stringField(root, "$", "target");
  if (root.contains("submission")) {
    std::string mode = stringField(root, "$", "submission");
    if (mode == "gpu")
      p.submission = DmaSubmission::Gpu;
    else if (mode != "host")
      fail("$.submission", "expected \"host\" or \"gpu\", not " + quote(mode));
  }
  const json &q = field(root, "$", "parameters");
  if (!q.is_object())
    fail("$.parameters", "expected an object");
  const json &sources = field(root, "$", "sources");
  if (!sources.is_object() && !sources.is_array())
    fail("$.sources", "expected an object or an array");
  // A mode's parameters are required when it is the profile's submission
  // and, all of them, when any is given.
  std::initializer_list<Param> host = {{"control_us", &p.controlUs},
                                       {"schedule_us", &p.scheduleUs},
                                       {"host_sync_us", &p.hostSyncUs}};
  std::initializer_list<Param> gpu = {{"kernel_launch_us", &p.kernelLaunchUs},
                                      {"dispatch_us", &p.dispatchUs},
                                      {"gpu_packet_us", &p.gpuPacketUs},
                                      {"gpu_poll_us", &p.gpuPollUs}};
  p.hasHost = p.submission == DmaSubmission::Host || mentions(q, host);
  p.hasGpu = p.submission == DmaSubmission::Gpu || mentions(q, gpu);
  if (p.hasHost)
    readParams(q, host);
  readParams(q, {{"engine_startup_us", &p.engineStartupUs},
                 {"per_command_us", &p.perCommandUs},
                 {"engine_atomic_us", &p.engineAtomicUs},
                 {"engine_GBps", &p.engineGBps},
                 {"link_GBps", &p.linkGBps}});
  if (p.hasGpu)
    readParams(q, gpu);
  positiveRate(p.engineGBps, "$.parameters.engine_GBps");
  positiveRate(p.linkGBps, "$.parameters.link_GBps");
  if (q.contains("engines_per_gpu"))
    p.enginesPerGpu =
        integerField(q, "$.parameters", "engines_per_gpu", 1, 1 << 16);
  if (root.contains("ldst"))
    p.ldst = parseLdst(root["ldst"]);
  return p;
}

} // namespace

std::optional<DmaTimingProfile>
DmaTimingProfile::withSubmission(DmaSubmission mode, std::string &error) const {
  if (mode == DmaSubmission::Host ? !hasHost : !hasGpu) {
    error = "the dma timing profile" +
            (target.empty() ? std::string() : " of " + quote(target)) +
            " has no " + submissionName(mode) + " submission parameters";
    return std::nullopt;
  }
  DmaTimingProfile p = *this;
  p.submission = mode;
  return p;
}

std::optional<DmaTimingProfile> DmaTimingProfile::parse(std::string_view text,
                                                        std::string &error) {
  std::optional<DmaTimingProfile> profile = parseJson<DmaTimingProfile>(
      text, "dma timing profile", parseProfile, error);
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

  // When each queue may start: after the host has written and rung it, or
  // (gpu) after the kernel's launch and dispatch and its own wavefront's
  // packet writes, every queue in parallel.
  std::vector<double> start(plan.streams.size(), 0.0);
  bool gpu = p.submission == DmaSubmission::Gpu;
  if (gpu) {
    for (size_t q = 0; q < plan.streams.size(); ++q)
      start[q] =
          p.kernelLaunchUs + p.dispatchUs +
          (plan.prelaunch ? 0.0
                          : p.gpuPacketUs * plan.streams[q].commands.size());
  } else if (!plan.prelaunch) {
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
  // The host of each rank polls its completion signals one by one; (gpu)
  // a wavefront spinning on the rank's completion counter sees the last one.
  double total = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    double t = lastDone.count(r) ? lastDone[r] : 0.0;
    if (gpu)
      t += doneSignals[r] ? p.gpuPollUs : 0.0;
    else
      t += p.hostSyncUs * doneSignals[r];
    total = std::max(total, t);
  }
  return total;
}

double sdma::rt::predictLdstTime(const Plan &plan, size_t chunkBytes,
                                 const LdstTimingProfile &l, double linkGBps) {
  // Per rank whose kernel moves the bytes: bytes to or from peers, bytes
  // within the GPU; per link (source -> destination): bytes. A copy's
  // bytes are its issuer's (a pull's: the destination's), a broadcast's
  // its source's, a swap's each side's.
  std::map<int, double> peer, local;
  std::map<std::pair<int, int>, double> link;
  auto move = [&](int from, int to, double bytes, int by) {
    if (from == to) {
      local[by] += bytes;
    } else {
      peer[by] += bytes;
      link[{from, to}] += bytes;
    }
  };
  for (const Stream &stream : plan.streams)
    for (const Command &c : stream.commands) {
      double bytes = double(c.slices[0].count) * double(chunkBytes);
      const int s0 = c.slices[0].rank, s1 = c.slices[1].rank;
      if (c.isNoOp()) {
        continue;
      } else if (c.kind == Command::Kind::Copy) {
        move(s0, s1, bytes, c.issuer().rank);
      } else if (c.kind == Command::Kind::Bcast) {
        move(s0, s1, bytes, s0);
        if (c.slices[2] != c.slices[1])
          move(s0, c.slices[2].rank, bytes, s0);
      } else if (c.kind == Command::Kind::Swap) {
        move(s0, s1, bytes, s0);
        move(s1, s0, bytes, s1);
      }
    }
  double busiest = 0; // us; GB/s = 1e3 bytes/us
  for (auto &[rank, bytes] : peer)
    busiest = std::max(busiest, bytes / (l.peerGBps * 1e3));
  for (auto &[rank, bytes] : local)
    busiest = std::max(busiest, bytes / (l.localGBps * 1e3));
  for (auto &[pair, bytes] : link)
    busiest = std::max(busiest, bytes / (linkGBps * 1e3));
  return l.launchUs + l.syncUs + busiest;
}
