//===- MultiNode.cpp - a communicator across nodes ------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/MultiNode.h"
#include "comm/Collectives.h"
#include "compile/KernelCache.h"
#include "exec/FileBytes.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/ScheduleCompiler.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <unistd.h>

using namespace sdma::rt;

namespace {
struct HierSchedule {
  const char *name, *text;
};
const HierSchedule kHierSchedules[] = {
#include "HierSchedules.inc"
};
} // namespace

std::unique_ptr<MultiNodeComm>
MultiNodeComm::create(std::unique_ptr<Communicator> node, Transport &transport,
                      Error &error) {
  if (!node)
    return error.fail(ErrorKind::InvalidArgument, "no node communicator"),
           nullptr;
  std::unique_ptr<MultiNodeComm> comm(
      new MultiNodeComm(std::move(node), transport));
  int local = comm->localRanks(), rank = transport.rank();
  // Node-major numbering: this rank's local index is its node
  // communicator's rank, and every node holds the same G ranks.
  uint64_t shape = (static_cast<uint64_t>(local) << 32) |
                   static_cast<uint32_t>(transport.ranks());
  if (!comm->agree("the ranks per node and job size", shape, error))
    return nullptr;
  Error numbering;
  if (transport.ranks() % local != 0 || rank % local != comm->node_->rank())
    numbering.fail(
        ErrorKind::InvalidUsage,
        "rank " + std::to_string(rank) + " of the " + transport.name() +
            " transport is local rank " + std::to_string(comm->node_->rank()) +
            " of its node's communicator of " + std::to_string(local) +
            ": ranks must be node-major (rank = node x " +
            std::to_string(local) + " + local rank) over " +
            std::to_string(transport.ranks()) + " ranks");
  if (!comm->agreeUnless(numbering, "whether ranks are node-major", error))
    return nullptr;
  return comm;
}

/// This host's identity: $SDMA_HOST_ID, else the hostname.
static std::string hostIdentity() {
  if (const char *id = std::getenv("SDMA_HOST_ID"); id && *id)
    return id;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0)
    return "";
  return name;
}

/// $name as a positive int, or 0.
static int positiveEnv(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == 0 && value > 0 && value <= INT32_MAX ? static_cast<int>(value)
                                                      : 0;
}

std::unique_ptr<MultiNodeComm> MultiNodeComm::create(Transport &transport,
                                                     int localRanks,
                                                     const CommOptions &options,
                                                     Error &error) {
  if (localRanks == 0)
    localRanks = positiveEnv("LOCAL_WORLD_SIZE");
  if (localRanks == 0)
    localRanks = positiveEnv("OMPI_COMM_WORLD_LOCAL_SIZE");
  Error local;
  int rank = transport.rank(), ranks = transport.ranks();
  if (localRanks <= 0 || localRanks > ranks || ranks % localRanks != 0)
    local.fail(ErrorKind::InvalidArgument,
               localRanks == 0
                   ? std::string("no ranks per node: pass them, or launch "
                                 "with torchrun (LOCAL_WORLD_SIZE) or "
                                 "mpirun (OMPI_COMM_WORLD_LOCAL_SIZE)")
                   : std::to_string(localRanks) +
                         " ranks per node do not "
                         "divide the job's " +
                         std::to_string(ranks));
  uint64_t shape =
      (static_cast<uint64_t>(localRanks) << 32) | static_cast<uint32_t>(ranks);
  if (!agreeOver(transport, "the ranks per node and job size",
                 local.message.empty() ? shape : ~0ull, error)) {
    if (!local.message.empty())
      error = local;
    return nullptr;
  }
  if (!local.message.empty())
    return error = local, nullptr;
  // A node's ranks share memory: they must be on one host (nodes simulated
  // on one host are fine the other way round).
  std::vector<uint64_t> hosts;
  if (!gatherOver(transport, "the hosts", hashBytes(hostIdentity()), hosts,
                  error))
    return nullptr;
  for (int r = 0; r < ranks; ++r)
    if (hosts[r] != hosts[r - r % localRanks])
      return error.fail(ErrorKind::InvalidUsage,
                        "ranks " + std::to_string(r - r % localRanks) +
                            " and " + std::to_string(r) + " are one node's (" +
                            std::to_string(localRanks) +
                            " ranks per node) but run on different hosts: a "
                            "node's ranks share memory, so the ranks per node "
                            "must be what the launcher put on each host"),
             nullptr;
  // The node's first rank makes its id; the others receive it. A failure
  // to make one travels as an id of zeros (and fails the agreement below).
  int first = rank - rank % localRanks;
  UniqueId id{};
  std::vector<TransportOp> ops;
  if (rank == first) {
    if (!createUniqueId(id, local))
      id = UniqueId{};
    for (int peer = first + 1; peer < first + localRanks; ++peer)
      ops.push_back({true, peer, id.bytes, sizeof(id.bytes), true});
  } else {
    ops.push_back({false, first, id.bytes, sizeof(id.bytes), true});
  }
  if (!transport.exchange(ops, nullptr, error))
    return error.fail(error.kind,
                      "handing out the node's unique id: " + error.message),
           nullptr;
  std::unique_ptr<Communicator> node;
  if (local.message.empty() && id.bytes[0] == 0 && id.bytes[4] == 0 &&
      id.bytes[8] == 0)
    local.fail(ErrorKind::Remote, "rank " + std::to_string(first) +
                                      " could not make the node's unique id");
  if (local.message.empty())
    node = Communicator::create(id, rank - first, localRanks, options, local);
  if (!agreeOver(transport, "whether every node communicator was created",
                 node ? 0 : 1, error)) {
    if (!local.message.empty())
      error = local;
    return nullptr;
  }
  return create(std::move(node), transport, error);
}

MultiNodeComm::MultiNodeComm(std::unique_ptr<Communicator> node,
                             Transport &transport)
    : node_(std::move(node)), transport_(transport) {}

MultiNodeComm::~MultiNodeComm() = default;

bool MultiNodeComm::agreeOver(Transport &transport, const std::string &what,
                              uint64_t value, Error &error) {
  std::vector<uint64_t> values;
  if (!gatherOver(transport, what, value, values, error))
    return false;
  for (size_t r = 1; r < values.size(); ++r)
    if (values[r] != values[0])
      return error.fail(ErrorKind::InvalidUsage,
                        "ranks disagree on " + what + ": rank " +
                            std::to_string(r) + " differs from rank 0");
  return true;
}

bool MultiNodeComm::gatherOver(Transport &transport, const std::string &what,
                               uint64_t value, std::vector<uint64_t> &values,
                               Error &error) {
  int ranks = transport.ranks(), me = transport.rank();
  values.assign(ranks, 0);
  values[me] = value;
  std::vector<TransportOp> ops;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == me)
      continue;
    ops.push_back({true, peer, &values[me], sizeof(uint64_t), true});
    ops.push_back({false, peer, &values[peer], sizeof(uint64_t), true});
  }
  Error exchanged;
  if (!transport.exchange(ops, nullptr, exchanged))
    return error.fail(exchanged.kind,
                      "agreeing on " + what + ": " + exchanged.message);
  return true;
}

bool MultiNodeComm::agreeUnless(const Error &local, const std::string &what,
                                Error &error) {
  bool agreed = agree(what, local.message.empty() ? 0 : 1, error);
  if (!local.message.empty()) { // this rank's own cause says more
    error = local;
    return false;
  }
  return agreed;
}

/// The file a precompiled node plan is read from.
static std::string nodePlanPath(const std::string &directory,
                                const std::string &name, int ranks,
                                int localRanks) {
  return directory + "/" + Communicator::programName(name) + "-" +
         std::to_string(ranks) + "." + std::to_string(localRanks) +
         ".node-plan.json";
}

/// Compiles `text` into its node plan for `ranks` of `localRanks` per node;
/// false with why in `why`.
static bool compileNodePlan(ScheduleCompiler &compiler, const std::string &text,
                            const std::string &name, int ranks, int localRanks,
                            std::string &plan, std::string &why,
                            int root = -1) {
  ProgramCompileOptions options;
  options.ranks = ranks;
  options.localRanks = localRanks;
  if (root >= 0)
    options.root = root;
  options.name = name.size() < 256 ? name : "<schedule>";
  ScheduleCompileResult result;
  if (!compiler.compileProgram(text, options, result, why))
    return false;
  if (!result.ok) {
    why = result.error +
          (result.diagnostics.empty() ? "" : "\n" + result.diagnostics);
    return false;
  }
  plan = std::move(result.nodePlan);
  return true;
}

bool MultiNodeComm::loadSchedule(const std::string &textOrPath,
                                 Schedule &schedule, Error &error, int root) {
  bool inlineText = textOrPath.find("sdma.schedule") != std::string::npos;
  return load(textOrPath, inlineText ? "<schedule>" : textOrPath, schedule,
              error, nullptr, root);
}

/// Whether a node part reduces: schedule text (a compiled plan) or its
/// program (a precompiled one).
static bool partReduces(const std::string &part) {
  return part.rfind("// sdma-ldst: ", 0) == 0
             ? part.find("#ifndef SDMA_REDUCE_TYPE") != std::string::npos
             : part.find("sdma.reduce ") != std::string::npos;
}

/// Each phase's arithmetic for a built-in hierarchical reduction in
/// `arithmetic`, on a job of `ranks`. Avg sums in every phase but the last
/// in which any node reduces, whose reduce rows store each element's total
/// once (the hierarchical schedules' last node phase: a rank's chunk from
/// the node partials), and divides there by the job's ranks. PreMulSum
/// scales in the first such phase, whose reduce rows take each rank's
/// input once (the node partials: every node must reduce there, or its
/// inputs would go unscaled), and sums after. Others as they are.
static bool phaseArithmetic(const std::vector<NodePhase> &phases,
                            const Arithmetic &arithmetic, int ranks,
                            std::vector<Arithmetic> &parts, std::string &why) {
  parts.assign(phases.size(), arithmetic);
  if (arithmetic.op != ReduceOp::Avg && arithmetic.op != ReduceOp::PreMulSum)
    return true;
  std::vector<size_t> reducing;
  for (size_t k = 0; k < phases.size(); ++k)
    if (!phases[k].network &&
        std::any_of(phases[k].schedules.begin(), phases[k].schedules.end(),
                    partReduces))
      reducing.push_back(k);
  for (Arithmetic &part : parts)
    part.op = ReduceOp::Sum;
  if (reducing.empty())
    return true; // one rank per node and one node: nothing reduces
  size_t at =
      arithmetic.op == ReduceOp::Avg ? reducing.back() : reducing.front();
  if (arithmetic.op == ReduceOp::PreMulSum &&
      !std::all_of(phases[at].schedules.begin(), phases[at].schedules.end(),
                   partReduces)) {
    why = "premulsum on a multi-node communicator scales each rank's input "
          "as its node first reduces it; with one rank per node, a node's "
          "inputs are not reduced before they cross the network";
    return false;
  }
  parts[at] = arithmetic;
  parts[at].partOf = ranks;
  return true;
}

bool MultiNodeComm::load(const std::string &textOrPath, const std::string &name,
                         Schedule &schedule, Error &error,
                         const Arithmetic *arithmetic, int root) {
  std::string text = textOrPath;
  Error local;
  if (name != "<schedule>" && textOrPath == name &&
      !readFileBytes(textOrPath, text))
    local.fail(ErrorKind::InvalidArgument,
               "cannot read schedule " + textOrPath);
  if (!agreeUnless(local, "whether the schedule could be read", error) ||
      !agree("the loaded schedule", hashBytes(text), error))
    return false;
  std::string why, planText;
  const CommOptions &options = node_->options();
  if (!compilerTried_) {
    compilerTried_ = true;
    compiler_ = ScheduleCompiler::load(compilerError_, options.compilerLibrary,
                                       options.cacheDirectory);
  }
  bool ok = false;
  if (compiler_) {
    ok = compileNodePlan(*compiler_, text, name, ranks(), localRanks(),
                         planText, why, root);
  } else if (options.programDirectory.empty() || name == "<schedule>") {
    why = compilerError_ + (name == "<schedule>"
                                ? "; and a schedule given as text has no "
                                  "precompiled node plan"
                                : "; and no program directory "
                                  "(SDMA_PROGRAM_DIR) is set");
  } else {
    // sdma-precompile --local-ranks: the plan, its node parts compiled.
    std::string path =
        nodePlanPath(options.programDirectory, name, ranks(), localRanks());
    ok = readFileBytes(path, planText);
    if (!ok)
      why = compilerError_ + "; and no precompiled node plan " + path;
  }
  std::optional<NodePlan> plan;
  if (ok && !(plan = NodePlan::parse(planText, why)))
    ok = false;
  if (ok && root >= 0 &&
      (!plan->collective || plan->collective->root != root)) {
    why = "the node plan is rooted at " +
          std::to_string(plan->collective ? plan->collective->root : -1) +
          ", not at " + std::to_string(root) +
          " (a precompiled plan has the root it was compiled for)";
    ok = false;
  }
  if (ok && (plan->ranks != ranks() || plan->localRanks != localRanks())) {
    why = "the node plan is for " + std::to_string(plan->ranks) + " ranks of " +
          std::to_string(plan->localRanks) + " per node, the job has " +
          std::to_string(ranks()) + " of " + std::to_string(localRanks());
    ok = false;
  }
  if (!ok)
    local.fail(ErrorKind::InvalidArgument, "multi-node schedule: " + why);
  // The same text compiles the same everywhere; agree anyway, so that a
  // rank whose compiler is missing fails every rank, not a hang.
  if (!agreeUnless(local, "whether the schedule compiled", error))
    return false;
  schedule.plan = std::move(*plan);
  const std::vector<NodePhase> &phases = schedule.plan.phases;
  schedule.local.assign(phases.size(), {});
  // Built-in reductions only (a loaded schedule has no arithmetic).
  std::vector<Arithmetic> parts;
  std::string refused;
  if (arithmetic &&
      !phaseArithmetic(phases, *arithmetic, ranks(), parts, refused))
    local.fail(ErrorKind::InvalidUsage, refused);
  schedule.rowIsScalar = arithmetic && arithmetic->op == ReduceOp::PreMulSum;
  for (size_t k = 0; k < phases.size() && local.message.empty(); ++k) {
    const NodePhase &phase = phases[k];
    if (phase.network || phase.schedules[node()].empty())
      continue;
    const Arithmetic *part = arithmetic ? &parts[k] : nullptr;
    if (!node_->loadSchedule(phase.schedules[node()], schedule.local[k], local,
                             part)) {
      local.message = "phase " + std::to_string(k) + " on node " +
                      std::to_string(node()) + ": " + local.message;
      break;
    }
  }
  // A node that could not load its part fails every node.
  return agreeUnless(local, "whether every node loaded its parts", error);
}

bool MultiNodeComm::network(const NodePhase &phase, const NodePlan &plan,
                            const std::vector<void *> &buffers,
                            size_t chunkBytes, void *stream, Error &error) {
  int me = rank();
  std::vector<TransportOp> ops;
  for (const NodeTransfer &transfer : phase.transfers) {
    bool send = transfer.src.rank == me;
    if (!send && transfer.dst.rank != me)
      continue;
    const Slice &slice = send ? transfer.src : transfer.dst;
    // A count table's chunk is one 8-byte entry.
    size_t unit = plan.buffers[slice.buffer].counts ? 8 : chunkBytes;
    auto at = checkedMul(static_cast<uint64_t>(slice.offset), unit);
    auto bytes = checkedMul(static_cast<uint64_t>(slice.count), unit);
    if (!at || !bytes)
      return error.fail(ErrorKind::InvalidArgument,
                        "chunks of " + std::to_string(chunkBytes) +
                            " bytes overflow buffer " +
                            plan.buffers[slice.buffer].name);
    char *base = static_cast<char *>(buffers[slice.buffer]);
    if (!base)
      return error.fail(ErrorKind::InvalidArgument,
                        "buffer " + plan.buffers[slice.buffer].name +
                            " is null on rank " + std::to_string(me));
    ops.push_back({send, send ? transfer.dst.rank : transfer.src.rank,
                   base + *at, *bytes});
  }
  if (!transport_.deviceMemory() && node_->deviceName() != "cpu")
    return staged(std::move(ops), stream, error);
  return transport_.exchange(ops, stream, error);
}

bool MultiNodeComm::staged(std::vector<TransportOp> ops, void *stream,
                           Error &error) {
  staging_.resize(std::max(staging_.size(), ops.size()));
  std::vector<void *> device(ops.size());
  // The phase before wrote what the sends read: drain the stream first.
  if (!node_->synchronize(stream, error))
    return false;
  for (size_t i = 0; i < ops.size(); ++i) {
    staging_[i].resize(ops[i].bytes);
    device[i] = ops[i].buffer;
    ops[i].buffer = staging_[i].data();
    ops[i].host = true;
    if (ops[i].send &&
        !node_->copy(ops[i].buffer, device[i], ops[i].bytes, stream, error))
      return false;
  }
  if (!node_->synchronize(stream, error) ||
      !transport_.exchange(ops, stream, error))
    return false;
  for (size_t i = 0; i < ops.size(); ++i)
    if (!ops[i].send &&
        !node_->copy(device[i], ops[i].buffer, ops[i].bytes, stream, error))
      return false;
  // The host copies are reused by the next phase: let these finish.
  return node_->synchronize(stream, error);
}

bool MultiNodeComm::launch(const Schedule &schedule,
                           const std::vector<void *> &buffers,
                           size_t chunkBytes, void *stream, Error &error,
                           std::vector<double> *phaseMicros, size_t rowBytes) {
  if (hasFailed_)
    return error.fail(failed_.kind, "the multi-node communicator failed "
                                    "earlier: " +
                                        failed_.message);
  const NodePlan &plan = schedule.plan;
  if (plan.ranks != ranks() || plan.localRanks != localRanks())
    return error.fail(ErrorKind::InvalidArgument, "schedule " + plan.schedule +
                                                      " was not loaded by this "
                                                      "communicator");
  if (buffers.size() != plan.buffers.size())
    return error.fail(ErrorKind::InvalidArgument,
                      "schedule " + plan.schedule + " takes " +
                          std::to_string(plan.buffers.size()) +
                          " buffers, given " + std::to_string(buffers.size()));
  if (chunkBytes == 0)
    return error.fail(ErrorKind::InvalidArgument, "a chunk of 0 bytes");
  // Every buffer is the node's symmetric memory of the plan's size: the node
  // phases reach peers' copies, and the transport writes whole slices
  // before any kernel's bounds check runs.
  Error local;
  for (size_t b = 0; b < buffers.size() && local.message.empty(); ++b) {
    auto bytes = checkedMul(static_cast<uint64_t>(plan.buffers[b].chunks),
                            plan.buffers[b].counts ? 8 : chunkBytes);
    if (!bytes || !buffers[b] || !node_->isSymmetric(buffers[b], *bytes))
      local.fail(
          ErrorKind::InvalidArgument,
          "buffer " + plan.buffers[b].name + " of " + plan.schedule +
              " on rank " + std::to_string(rank()) +
              " is not symmetric memory of the node (memAlloc or "
              "registerMemory) holding " +
              std::to_string(plan.buffers[b].chunks) +
              (plan.buffers[b].counts
                   ? " count entries of 8 bytes"
                   : " chunks of " + std::to_string(chunkBytes) + " bytes"));
  }
  // (A premulsum's scalar is each rank's own.)
  std::string call =
      plan.schedule + "/" + std::to_string(chunkBytes) + "/" +
      (schedule.rowIsScalar ? "scalar" : std::to_string(rowBytes));
  std::pair<std::string, size_t> signature{call, chunkBytes};
  if (!checked_.count(signature)) {
    // The first call of a signature: every rank's, and every rank's
    // buffers, agreed (later calls trust the signature; a rank whose
    // buffers are wrong then fails alone and its peers time out on it).
    if (!agreeUnless(local, "whether every rank's buffers are valid", error) ||
        !agree("the call (schedule " + plan.schedule + ", chunk and row bytes)",
               hashBytes(call), error))
      return false;
    checked_.insert(signature);
  } else if (!local.message.empty()) {
    return error = local, false;
  }
  if (phaseMicros)
    phaseMicros->assign(plan.phases.size(), 0.0);
  for (size_t k = 0; k < plan.phases.size(); ++k) {
    const NodePhase &phase = plan.phases[k];
    auto start = std::chrono::steady_clock::now();
    bool ok = true;
    if (phase.network)
      ok = network(phase, plan, buffers, chunkBytes, stream, error);
    else if (schedule.local[k].instance >= 0)
      // A premulsum's scalar goes to the phase that scales (the others
      // sum, and take no row size).
      ok = node_->launch(schedule.local[k], buffers, chunkBytes, stream, error,
                         schedule.rowIsScalar && !schedule.local[k].rowIsScalar
                             ? 0
                             : rowBytes);
    if (!ok) {
      // The node's kernels number ranks within the node: say how.
      std::string where =
          phase.network ? "network"
                        : "node " + std::to_string(node()) +
                              ", whose local rank k is job rank " +
                              std::to_string(node() * localRanks()) + " + k";
      error.message = plan.schedule + " phase " + std::to_string(k) + " (" +
                      where + ") on rank " + std::to_string(rank()) + ": " +
                      error.message;
      failed_ = error;
      hasFailed_ = true;
      return false;
    }
    if (phaseMicros)
      (*phaseMicros)[k] = std::chrono::duration<double, std::micro>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  }
  return true;
}

const MultiNodeComm::Schedule *MultiNodeComm::builtinWithScratch(
    const std::string &name, std::vector<void *> &buffers, size_t chunkBytes,
    void *stream, Error &error, const Arithmetic *arithmetic, int root) {
  // A rooted built-in is a plan per root (precompiled under this name).
  std::string planName =
      "hier_" + name + (root >= 0 ? "_root" + std::to_string(root) : "");
  std::string variant =
      arithmetic ? planName + " " + arithmeticName(*arithmetic) : planName;
  auto found = builtins_.find(variant);
  if (found == builtins_.end()) {
    const char *text = nullptr;
    for (const HierSchedule &s : kHierSchedules)
      if (name == s.name)
        text = s.text;
    if (!text)
      return error.fail(ErrorKind::Internal, "no built-in " + name), nullptr;
    Schedule schedule;
    if (!load(text, planName, schedule, error, arithmetic, root))
      return nullptr;
    // Ranks that disagree on the root, type or operator run different
    // variants of one schedule: name each by its variant, so that the
    // first call of each is agreed across the job and every node phase's
    // call tag (checked on the device every call) differs.
    schedule.plan.schedule = variant;
    for (Communicator::Schedule &part : schedule.local)
      if (part.instance >= 0)
        part.name += " (" + variant + ")";
    found = builtins_.emplace(variant, std::move(schedule)).first;
  }
  const NodePlan &plan = found->second.plan;
  // Scratch: every buffer past the caller's, in the node's heap (memAlloc
  // is collective within the node: its ranks make the same calls).
  for (size_t b = buffers.size(), k = 0; b < plan.buffers.size(); ++b, ++k) {
    auto bytes = checkedMul(plan.buffers[b].chunks,
                            plan.buffers[b].counts ? 8 : chunkBytes);
    if (!bytes)
      return error.fail(ErrorKind::InvalidArgument,
                        "scratch of " + name + " overflows"),
             nullptr;
    if (scratch_.size() <= k)
      scratch_.push_back({nullptr, 0});
    if (scratch_[k].second < *bytes) {
      // An earlier call's kernel may still use the old buffer.
      if (scratch_[k].first && (!node_->synchronize(stream, error) ||
                                !node_->memFree(scratch_[k].first, error)))
        return nullptr;
      scratch_[k] = {nullptr, 0};
      if (!node_->memAlloc(*bytes, scratch_[k].first, error))
        return nullptr;
      scratch_[k].second = *bytes;
    }
    buffers.push_back(scratch_[k].first);
  }
  return &found->second;
}

bool MultiNodeComm::precompile(const std::string &directory, int ranks,
                               int localRanks,
                               const std::vector<std::string> &schedules,
                               const CommOptions &options, Error &error) {
  std::string why;
  std::unique_ptr<ScheduleCompiler> compiler = ScheduleCompiler::load(
      why, options.compilerLibrary, options.cacheDirectory);
  if (!compiler)
    return error.fail(ErrorKind::System, why);
  struct Input {
    std::string name, text;
    int root; // a rooted built-in's plan per root; -1: as declared
  };
  std::vector<Input> inputs;
  for (const HierSchedule &s : kHierSchedules) {
    std::string name = std::string("hier_") + s.name;
    if (!std::strstr(s.text, " root 0 {"))
      inputs.push_back({name, s.text, -1});
    else
      for (int root = 0; root < ranks; ++root)
        inputs.push_back({name + "_root" + std::to_string(root), s.text, root});
  }
  for (const std::string &path : schedules) {
    std::string text;
    if (!readFileBytes(path, text))
      return error.fail(ErrorKind::InvalidArgument,
                        "cannot read schedule " + path);
    inputs.push_back({path, std::move(text), -1});
  }
  for (const auto &[name, text, root] : inputs) {
    std::string planText;
    if (!compileNodePlan(*compiler, text, name, ranks, localRanks, planText,
                         why, root))
      return error.fail(ErrorKind::InvalidArgument,
                        name + " for " + std::to_string(ranks) + " ranks of " +
                            std::to_string(localRanks) + " per node: " + why);
    // Each node's part of each local phase as its load/store program, which
    // the node's communicator loads as it loads any precompiled program.
    nlohmann::ordered_json plan = nlohmann::ordered_json::parse(planText);
    for (nlohmann::ordered_json &phase : plan["phases"]) {
      if (phase["kind"] != "local")
        continue;
      for (nlohmann::ordered_json &part : phase["schedules"]) {
        if (part.get<std::string>().empty())
          continue;
        ProgramCompileOptions program;
        program.name = name;
        ScheduleCompileResult result;
        if (!compiler->compileProgram(part.get<std::string>(), program, result,
                                      why) ||
            !result.ok)
          return error.fail(ErrorKind::Internal,
                            name + ": a node part does not compile: " +
                                (why.empty() ? result.error : why));
        part = result.ldst;
      }
    }
    std::string path = nodePlanPath(directory, name, ranks, localRanks);
    std::ofstream out(path, std::ios::binary);
    out << plan.dump(1);
    if (!out.flush())
      return error.fail(ErrorKind::System, "cannot write " + path);
  }
  return true;
}
