//===- NvTimingModel.cpp - predicted time of a plan on NVIDIA GPUs --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/NvTimingModel.h"
#include "format/JsonFields.h"

#include <algorithm>

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

const char *const sdma::rt::kNvFeatureNames[kNvFeatures] = {
    "fixed", "queues", "commands", "syncs", "local_GB", "peer_GB", "queue_GB"};

std::optional<NvExecutor> sdma::rt::parseNvExecutor(std::string_view name) {
  if (name == "ldst")
    return NvExecutor::Ldst;
  if (name == "ce")
    return NvExecutor::Ce;
  if (name == "ce-batch")
    return NvExecutor::CeBatch;
  if (name == "ce-graph")
    return NvExecutor::CeGraph;
  return std::nullopt;
}

const char *sdma::rt::nvExecutorName(NvExecutor executor) {
  switch (executor) {
  case NvExecutor::Ldst:
    return "ldst";
  case NvExecutor::Ce:
    return "ce";
  case NvExecutor::CeBatch:
    return "ce-batch";
  case NvExecutor::CeGraph:
    return "ce-graph";
  }
  return "?";
}

std::array<double, kNvFeatures> sdma::rt::nvFeatures(const Plan &plan,
                                                     size_t chunkBytes,
                                                     NvExecutor executor,
                                                     int devices) {
  devices = std::max(1, std::min(devices, plan.ranks));
  int perDevice = (plan.ranks + devices - 1) / devices;
  auto deviceOf = [&](int rank) { return rank / perDevice; };
  std::vector<double> local(devices, 0), peer(devices, 0);
  std::vector<double> dataOps(plan.ranks, 0), waits(plan.ranks, 0);
  double commands = 0, queueBytes = 0, busiestQueue = 0;
  auto move = [&](const Slice &from, const Slice &to, int issuer) {
    double bytes = double(from.count) * chunkBytes;
    queueBytes += bytes;
    if (deviceOf(from.rank) == deviceOf(to.rank))
      local[deviceOf(issuer)] += bytes;
    else
      peer[deviceOf(issuer)] += bytes;
  };
  for (const Stream &stream : plan.streams) {
    bool inBatch = false;
    queueBytes = 0;
    for (const Command &c : stream.commands) {
      bool data = c.kind == Command::Kind::Copy ||
                  c.kind == Command::Kind::Bcast ||
                  c.kind == Command::Kind::Swap;
      switch (c.kind) {
      case Command::Kind::Copy:
        move(c.slices[0], c.slices[1], stream.rank);
        break;
      case Command::Kind::Bcast:
        move(c.slices[0], c.slices[1], stream.rank);
        move(c.slices[0], c.slices[2], stream.rank);
        break;
      case Command::Kind::Swap:
        move(c.slices[0], c.slices[1], stream.rank);
        move(c.slices[1], c.slices[0], stream.rank);
        break;
      case Command::Kind::Notify:
        if (c.flag != kDoneFlag)
          commands += executor != NvExecutor::Ldst;
        break;
      case Command::Kind::Poll:
        if (c.flag != kLaunchFlag) {
          commands += executor != NvExecutor::Ldst;
          waits[stream.rank] += 1;
        }
        break;
      }
      if (data) {
        dataOps[stream.rank] += 1;
        int host = c.kind == Command::Kind::Copy    ? 1
                   : c.kind == Command::Kind::Bcast ? 2
                                                    : 3;
        if (executor == NvExecutor::CeBatch && c.kind != Command::Kind::Swap)
          host = inBatch ? 0 : 1; // one cuMemcpyBatchAsync per run of copies
        if (executor != NvExecutor::Ldst)
          commands += host;
        inBatch = c.kind != Command::Kind::Swap;
      } else {
        inBatch = false;
      }
    }
    busiestQueue = std::max(busiestQueue, queueBytes);
  }
  double queues = executor == NvExecutor::Ldst ? devices : plan.streams.size();
  if (executor == NvExecutor::Ldst)
    commands = *std::max_element(dataOps.begin(), dataOps.end());
  double syncs = *std::max_element(waits.begin(), waits.end());
  return {1.0,
          queues,
          commands,
          syncs,
          *std::max_element(local.begin(), local.end()) / 1e9,
          *std::max_element(peer.begin(), peer.end()) / 1e9,
          executor == NvExecutor::Ldst ? 0.0 : busiestQueue / 1e9};
}

std::optional<NvTimingProfile> NvTimingProfile::parse(const std::string &text,
                                                      std::string &error) {
  auto parseExecutors = [](const json &executors, const std::string &where) {
    if (!executors.is_object())
      fail(where, "expected an object");
    NvTimingProfile::Coefficients result;
    for (auto it = executors.begin(); it != executors.end(); ++it) {
      std::string at = keyPath(where, it.key());
      std::optional<NvExecutor> executor = parseNvExecutor(it.key());
      if (!executor)
        fail(at, "unknown executor (ldst, ce, ce-batch, ce-graph)");
      const json &coefficients = field(*it, at, "coefficients");
      std::array<double, kNvFeatures> c{};
      for (int i = 0; i < kNvFeatures; ++i) {
        c[i] = nonNegative(
            field(coefficients, at + ".coefficients", kNvFeatureNames[i]),
            at + ".coefficients." + kNvFeatureNames[i]);
      }
      result[*executor] = c;
    }
    return result;
  };
  auto parse = [&](const json &root) {
    NvTimingProfile profile;
    profile.target = stringField(root, "$", "target");
    profile.coefficients =
        parseExecutors(field(root, "$", "executors"), "$.executors");
    if (root.contains("by_devices")) {
      const json &sizes = field(root, "$", "by_devices");
      if (!sizes.is_object())
        fail("$.by_devices", "expected an object");
      for (auto it = sizes.begin(); it != sizes.end(); ++it) {
        std::string where = keyPath("$.by_devices", it.key());
        int devices = 0;
        for (char ch : it.key())
          if (ch < '0' || ch > '9' ||
              (devices = devices * 10 + (ch - '0')) > (1 << 20))
            fail(where, "expected a GPU count as the key");
        if (devices < 1)
          fail(where, "expected a GPU count as the key");
        profile.byDevices[devices] = parseExecutors(
            field(*it, where, "executors"), where + ".executors");
      }
    }
    if (root.contains("communicator")) {
      const json &comm = field(root, "$", "communicator");
      if (!comm.is_object())
        fail("$.communicator", "expected an object");
      for (auto it = comm.begin(); it != comm.end(); ++it) {
        std::string at = keyPath("$.communicator", it.key());
        if (it.key() == "measured") {
          if (!it->is_string())
            fail(at, "expected a string (how the extras were measured)");
          continue;
        }
        std::optional<NvExecutor> executor = parseNvExecutor(it.key());
        if (!executor || *executor == NvExecutor::CeGraph)
          fail(at, "unknown path (ldst, ce, ce-batch)");
        profile.communicatorExtra[*executor] = nonNegative(*it, at);
      }
    }
    return profile;
  };
  return parseJson<NvTimingProfile>(text, "timing profile", parse, error);
}

std::optional<NvTimingProfile> NvTimingProfile::load(const std::string &path,
                                                     std::string &error) {
  std::optional<std::string> text = readFile(path, "timing profile", error);
  if (!text)
    return std::nullopt;
  std::optional<NvTimingProfile> profile = parse(*text, error);
  if (!profile)
    error = path + ": " + error;
  return profile;
}

bool sdma::rt::nvBatchApplies(const Plan &plan) {
  for (const Stream &stream : plan.streams) {
    int run = 0;
    for (const Command &c : stream.commands) {
      run = c.kind == Command::Kind::Copy || c.kind == Command::Kind::Bcast
                ? run + 1
                : 0;
      if (run >= 2)
        return true;
    }
  }
  return false;
}

const NvTimingProfile::Coefficients &
NvTimingProfile::coefficientsFor(int devices) const {
  auto it = byDevices.find(std::max(1, devices));
  return it == byDevices.end() ? coefficients : it->second;
}

std::optional<double> NvTimingProfile::predict(const Plan &plan,
                                               size_t chunkBytes,
                                               NvExecutor executor, int devices,
                                               std::string *why) const {
  // As nvFeatures counts them: no more GPUs than ranks.
  const Coefficients &table =
      coefficientsFor(std::max(1, std::min(devices, plan.ranks)));
  auto it = table.find(executor);
  if (it == table.end()) {
    if (why)
      *why = std::string("the profile has no coefficients for executor ") +
             nvExecutorName(executor);
    return std::nullopt;
  }
  if (executor == NvExecutor::CeBatch && !nvBatchApplies(plan)) {
    if (why)
      *why = "ce-batch does not apply to this plan: no queue has two copies "
             "in a row";
    return std::nullopt;
  }
  std::array<double, kNvFeatures> f =
      nvFeatures(plan, chunkBytes, executor, devices);
  double us = 0;
  for (int i = 0; i < kNvFeatures; ++i)
    us += it->second[i] * f[i];
  return us;
}

std::optional<NvTimingProfile::Pick>
NvTimingProfile::pickFastest(const std::vector<const Plan *> &candidates,
                             size_t chunkBytes, int devices) const {
  std::optional<Pick> best;
  for (size_t c = 0; c < candidates.size(); ++c)
    for (const auto &entry :
         coefficientsFor(std::min(devices, candidates[c]->ranks))) {
      NvExecutor executor = entry.first;
      if (c > 0 && executor == NvExecutor::Ldst)
        continue;
      std::optional<double> us =
          predict(*candidates[c], chunkBytes, executor, devices);
      if (us && (!best || *us < best->microseconds))
        best = Pick{c, executor, *us};
    }
  return best;
}
