//===- Communicator.cpp - one rank of a job, its parts and its calls ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator owns its parts, each of which uses only those below it:
//
//   Communicator ── Collectives (plans: arguments -> schedule call, pure)
//        │
//        ├── CallPath (a planned call: replay, agreement, path, launch)
//        ├── Launcher ──> ProgramCache ──> CommDevice (kernels)
//        │       └──────> SymmetricHeap ─> CommDevice (memory)
//        └── Agreement (over the Bootstrap), used by all of them
//
// A call is planned first (every argument this rank can judge), then
// CallPath finds or adds its instance (collective: every rank adds it or
// none) and launches it (the first call of a signature agreed across
// ranks). A refused call changes nothing, so the communicator stays usable.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Communicator.h"

#include "comm/CallPath.h"
#include "comm/CoLaunch.h"
#include "comm/Collectives.h"
#include "comm/CommDevice.h"
#include "comm/GroupLaunch.h"
#include "comm/PathChoice.h"
#include "comm/PointToPoint.h"
#include "compile/KernelCache.h"
#include "exec/FileBytes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

using namespace sdma::rt;

namespace {
/// The control area's size: every instance's flags, counters, error
/// record and count tables.
constexpr size_t kControlBytes = 1 << 20;
/// The mailbox at the control area's end (shareAmong): a generation word,
/// a size word, then the bytes.
constexpr size_t kMailboxBytes = 256;
constexpr size_t kMailboxOffset = kControlBytes - kMailboxBytes;

/// One rank's part of the init exchange (exchangeJoin).
struct JoinFields {
  std::string identity, process, coLaunch, settings;
};

/// `part` of exchangeJoin's `all` as its fields.
JoinFields joinFields(std::string part) {
  JoinFields f;
  for (std::string *field : {&f.settings, &f.coLaunch, &f.process})
    if (size_t sep = part.rfind('\x1f'); sep != std::string::npos) {
      *field = part.substr(sep + 1);
      part.resize(sep);
    }
  f.identity = std::move(part);
  return f;
}

/// The init exchange: each rank's device identity ("!why": it has none),
/// process, co-launch setting and the settings every rank must share, in
/// `all` by rank (joinFields). An exchange holds 255 bytes and the
/// settings alone take about 190, so they travel as a hash; only where two
/// ranks' hashes differ does a second exchange carry them whole (every
/// rank sees the same hashes, so every rank takes part in it).
bool exchangeJoin(Agreement &agreement, std::string identity,
                  const std::string &process, const std::string &settings,
                  const std::string &coLaunch, std::vector<std::string> &all,
                  Error &error) {
  char hash[20];
  std::snprintf(hash, sizeof(hash), "%016llx",
                static_cast<unsigned long long>(hashBytes(settings)));
  std::string rest = '\x1f' + process + '\x1f' + coLaunch + '\x1f' + hash;
  // A reason for having no device may be long: cut to fit.
  if (identity[0] == '!' && identity.size() + rest.size() >= kExchangeBytes)
    identity.resize(kExchangeBytes - 1 - rest.size());
  if (identity.size() + rest.size() >= kExchangeBytes)
    return error.fail(ErrorKind::Internal,
                      "the init exchange takes " +
                          std::to_string(identity.size() + rest.size()) +
                          " bytes; at most " +
                          std::to_string(kExchangeBytes - 1) + " fit");
  if (!agreement.allGather(identity + rest, all, error))
    return false;
  bool alike = true;
  for (std::string &one : all) {
    one.resize(one.find('\0') == std::string::npos ? one.size()
                                                   : one.find('\0'));
    alike = alike && joinFields(one).settings == hash;
  }
  std::vector<std::string> whole;
  if (!alike && !agreement.allGather(settings, whole, error))
    return false;
  for (size_t r = 0; r < all.size(); ++r)
    all[r] = all[r].substr(0, all[r].rfind('\x1f') + 1) +
             (alike ? settings : whole[r].substr(0, whole[r].find('\0')));
  return true;
}
} // namespace

class Communicator::Impl {
public:
  bool init(const UniqueId &id, int rank, int ranks, Error &error);
  ~Impl();

  /// False, with the failure, once a kernel of the communicator (a
  /// schedule's or the point-to-point one) has failed: it stays failed.
  bool healthy(Error &error) {
    return launcher->healthy(error) && p2p->healthy(error);
  }
  CommShape shape() const { return {rank, ranks, options.twoShotBytes}; }
  ErrorKind deviceKind() const {
    return options.device == "cpu" ? ErrorKind::System : ErrorKind::Device;
  }

  int rank = 0, ranks = 0;
  /// The options as asked for, and as resolved (environment, defaults).
  CommOptions requested, options;
  /// shareAmong's calls so far on this rank (the mailbox's generation).
  uint64_t shares = 0;
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<Agreement> agreement;
  std::unique_ptr<CommDevice> device;
  std::unique_ptr<SymmetricHeap> heap;
  std::unique_ptr<ProgramCache> programs;
  std::unique_ptr<Launcher> launcher;
  std::unique_ptr<PointToPoint> p2p;
  std::unique_ptr<PathChooser> paths;
  /// The GPUs (devices) the ranks are on.
  int devices = 1;
  /// A call from its plan to its launch; made last, gone first.
  std::unique_ptr<CallPath> calls;
};

bool Communicator::Impl::init(const UniqueId &id, int rankIn, int ranksIn,
                              Error &error) {
  rank = rankIn;
  ranks = ranksIn;
  bootstrap = Bootstrap::connect(id, rank, ranks, options.timeoutMs, error);
  if (!bootstrap)
    return false;
  agreement = std::make_unique<Agreement>(*bootstrap);
  std::string why;
  device = createCommDevice(id, rank, options, why);
  // Every rank learns whether every rank has a device, and which, and the
  // settings below (exchangeJoin).
  std::string mine = device ? device->identity() : "!" + why;
  // For tests: an identity as long as a GPU's on a host with a long name
  // (a GPU's is the host's name and 46 bytes more).
  if (const char *pad = std::getenv("SDMA_TEST_IDENTITY_PAD"); pad && device)
    mine += std::string(std::min(std::strtoul(pad, nullptr, 10), 200ul), '.');
  // The settings every rank must share: the point-to-point layout (a
  // sender writes into the receiver's area by its own) and how calls pick
  // their path (the ranks of a call must take the same one, and add the
  // same DMA programs to their control areas).
  // The low-latency inbox by default: 512 KiB / ranks a peer, at most 256
  // KiB, at least 64 KiB up to 16 ranks, then 1 MiB / ranks (an inbox of
  // two slots stays within 4 MiB). Measured with ranks as threads: on one
  // H200 at 8 ranks 0.72x the barrier protocol at 32 KiB a peer, even at
  // 128 KiB, 1.8x at 512 KiB; on one H100 at 2 ranks 256 KiB a peer takes
  // 256 KiB calls from 8.5 to 5.6 us with small calls unchanged, at 4 ranks
  // 128 KiB a peer is as fast as 64 KiB below it and 256 KiB makes small
  // calls 2 us slower (bench/results/gpu-runs/h100-s64-ll-area.txt).
  if (options.lowLatencyBytes < 0) {
    int64_t perPeer = std::max<int64_t>(
        (int64_t(512) << 10) / ranks,
        std::min<int64_t>(64 << 10, (int64_t(1) << 20) / ranks));
    options.lowLatencyBytes = std::min<int64_t>(256 << 10, perPeer) / 8 * 8;
  }
  std::string chunk =
      "SDMA_P2P_CHUNK_BYTES=" + std::to_string(options.p2pChunkBytes) +
      " SDMA_PATH=" + options.path + " SDMA_DMA_VARIANT=" + options.dmaVariant +
      " SDMA_DMA_SUBMIT=" + options.dmaSubmit +
      " SDMA_DMA_PACKET_TARGET=" + options.dmaPacketTarget +
      " SDMA_DMA_MIN_BYTES=" + std::to_string(options.dmaMinBytes) +
      " SDMA_DMA_BATCH=" + (options.dmaBatch ? "1" : "0") +
      " SDMA_LL_BYTES=" + std::to_string(options.lowLatencyBytes) +
      " SDMA_SHARED_BYTES=" + std::to_string(options.sharedBytes) +
      // Whether a first call meets the others on the host (CallPath.h): a
      // rank that does not would leave the others waiting.
      " SDMA_CHECK_CALLS=" + (options.checkCalls ? "1" : "0");
  // How this rank co-launches with the ranks sharing its GPU context
  // (CoLaunch.h): only those ranks must agree (a room takes one mode, and
  // a rank that launches alone would leave the others waiting for it).
  // (No device here: the exchange says so, and init stops below.)
  const bool coLaunch =
      options.coLaunch == 1 ||
      (options.coLaunch < 0 && device && device->launchesShareQueues());
  const std::string together =
      coLaunch ? "SDMA_COLAUNCH=1 SDMA_COLAUNCH_MODE=" + options.coLaunchMode
               : "SDMA_COLAUNCH=0";
  std::vector<std::string> all;
  std::vector<int> colocated;
  int sharing = 0;
  // Ranks of one process on one GPU share its context (CoLaunch.h).
  const std::string process = processToken();
  std::set<std::string> identities;
  if (!exchangeJoin(*agreement, mine, process, chunk, together, all, error))
    return false;
  std::vector<JoinFields> joined;
  for (const std::string &part : all)
    joined.push_back(joinFields(part));
  // This rank's own failure first, then the first peer's.
  for (int i = 0; i < ranks; ++i) {
    int r = (rank + i) % ranks;
    const JoinFields &theirs = joined[r];
    identities.insert(theirs.identity);
    if (theirs.identity[0] == '!') {
      std::string hint =
          options.device == "cpu"
              ? ""
              : " (SDMA_DEVICE=cpu or sdmaConfig_t::device = \"cpu\" runs "
                "on the CPU instead)";
      return error.fail(r == rank ? deviceKind() : ErrorKind::Remote,
                        "rank " + std::to_string(r) + " has no " +
                            options.device +
                            " device: " + theirs.identity.substr(1) + hint);
    }
    if (theirs.settings != chunk)
      return error.fail(ErrorKind::InvalidUsage,
                        "rank " + std::to_string(r) + " has " +
                            theirs.settings + " and rank " +
                            std::to_string(rank) + " " + chunk +
                            ": every rank must make these settings alike");
    sharing += theirs.identity == mine;
    if (theirs.identity == mine && theirs.process == process)
      colocated.push_back(r);
  }
  // Ranks that share a GPU context must co-launch alike (CoLaunch.h):
  // every rank checks every context, so none goes on without the others.
  std::map<std::pair<std::string, std::string>, int> firstOfContext;
  for (int r = 0; r < ranks; ++r) {
    auto [it, first] =
        firstOfContext.try_emplace({joined[r].identity, joined[r].process}, r);
    const JoinFields &theirs = joined[it->second];
    if (!first && joined[r].coLaunch != theirs.coLaunch)
      return error.fail(ErrorKind::InvalidUsage,
                        "rank " + std::to_string(r) + " has " +
                            joined[r].coLaunch + " and rank " +
                            std::to_string(it->second) + " " + theirs.coLaunch +
                            ": ranks that share a GPU context must "
                            "co-launch alike");
  }
  std::sort(colocated.begin(), colocated.end());
  devices = int(identities.size());
  device->setSharing(sharing);
  // After the control area, the point-to-point area (PointToPoint.h).
  P2pArea area{ranks, options.p2pChunkBytes};
  size_t areaBytes = (area.bytes() + 255) / 256 * 256;
  // Then the low-latency calls' counter and inbox (Launcher.h).
  LowLatencyArea lowLatency{ranks, uint64_t(options.lowLatencyBytes)};
  size_t lowLatencyOffset = kControlBytes + areaBytes;
  heap = SymmetricHeap::create(*device, *agreement, deviceKind(),
                               lowLatencyOffset + lowLatency.bytes(),
                               options.heapBytes, error);
  if (!heap)
    return false;
  // For tests: the low-latency call counter starts at $SDMA_TEST_LL_SEQ
  // (its flag's wrap after 2^32 - 1 calls, reached in a few calls).
  if (const char *first = std::getenv("SDMA_TEST_LL_SEQ");
      first && *first && lowLatency.bytes()) {
    uint64_t seq = std::strtoull(first, nullptr, 10);
    std::string why;
    if (!device->copy(heap->control() + lowLatencyOffset + lowLatency.counter(),
                      &seq, sizeof(seq), nullptr, why) ||
        !device->synchronize(nullptr, why))
      return error.fail(deviceKind(), "SDMA_TEST_LL_SEQ: " + why);
  }
  p2p = std::make_unique<PointToPoint>(rank, ranks, options, *device, *heap,
                                       kControlBytes, options.p2pChunkBytes);
  programs = std::make_unique<ProgramCache>(rank, ranks, options, *device,
                                            *agreement, kMailboxOffset);
  launcher =
      std::make_unique<Launcher>(rank, ranks, options, *device, *heap,
                                 *programs, *agreement, lowLatencyOffset);
  launcher->setJob(hashBytes(std::string(id.bytes, sizeof(id.bytes))));
  // Ranks sharing this rank's GPU context start their launches as one
  // where the device's hardware queues need it (CoLaunch.h), or where
  // SDMA_COLAUNCH=1 asks (the CPU device, for tests).
  if (colocated.size() > 1 && coLaunch) {
    std::shared_ptr<CoLaunch> room = CoLaunch::join(
        launcher->job(), colocated,
        options.coLaunchMode == "ordered" ? CoLaunch::Mode::Ordered
                                          : CoLaunch::Mode::Together);
    launcher->setCoLaunch(room);
    p2p->setCoLaunch(room);
  }
  paths = std::make_unique<PathChooser>(options, *device, *programs, devices);
  CallPath::Parts parts;
  parts.rank = rank;
  parts.ranks = ranks;
  parts.deviceKind = deviceKind();
  parts.options = &options;
  parts.agreement = agreement.get();
  parts.device = device.get();
  parts.heap = heap.get();
  parts.programs = programs.get();
  parts.launcher = launcher.get();
  parts.p2p = p2p.get();
  parts.paths = paths.get();
  calls = std::make_unique<CallPath>(parts);
  return true;
}

Communicator::Impl::~Impl() {
  // Peers may still be running kernels that touch this rank's memory:
  // wait for them (bounded, errors ignored) before the device frees it.
  // A peer waiting on this rank's exchange board is told first (it never
  // joins the bootstrap's leaving exchange below).
  if (launcher)
    launcher->leaveExchanges();
  if (agreement && device)
    agreement->leave();
  calls.reset();
  p2p.reset();
  launcher.reset();
  paths.reset();
  programs.reset();
  heap.reset();
  device.reset();
}

Communicator::Communicator(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

std::unique_ptr<Communicator> Communicator::create(const UniqueId &id, int rank,
                                                   int ranks,
                                                   const CommOptions &options,
                                                   Error &error) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    error.fail(ErrorKind::InvalidArgument,
               "rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                   ": ranks must be 1.. and rank 0..ranks-1");
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->requested = options;
  impl->options = options;
  if (!resolveOptions(impl->options, error) ||
      !impl->init(id, rank, ranks, error))
    return nullptr;
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::ranks() const { return impl_->ranks; }
std::string Communicator::deviceName() const { return impl_->device->name(); }
const CommOptions &Communicator::options() const { return impl_->options; }
const CommOptions &Communicator::requestedOptions() const {
  return impl_->requested;
}

bool Communicator::memAlloc(size_t bytes, void *&ptr, Error &error) {
  // A failed communicator refuses new collective work, an allocation's
  // exchange too (its failure is the one to report, not a peer's absence).
  if (!impl_->healthy(error))
    return error.context("the communicator has failed");
  return impl_->heap->allocate(bytes, ptr, error);
}
bool Communicator::memFree(void *ptr, Error &error) {
  return impl_->heap->free(ptr, error);
}
bool Communicator::registerMemory(void *ptr, size_t bytes, int &handle,
                                  Error &error) {
  if (!impl_->healthy(error))
    return error.context("the communicator has failed");
  return impl_->heap->registerMemory(ptr, bytes, handle, error);
}
bool Communicator::isSymmetric(const void *ptr, size_t bytes) const {
  return ptr && impl_->heap->contains(ptr, bytes);
}
bool Communicator::deregisterMemory(int handle, Error &error) {
  return impl_->heap->deregisterMemory(handle, error);
}
bool Communicator::copy(void *dst, const void *src, size_t bytes, void *stream,
                        Error &error) {
  if (!bytes)
    return true;
  if (!dst || !src)
    return error.fail(ErrorKind::InvalidArgument,
                      "the copy's source or destination is null");
  uintptr_t d = reinterpret_cast<uintptr_t>(dst),
            s = reinterpret_cast<uintptr_t>(src);
  if (d > UINTPTR_MAX - bytes || s > UINTPTR_MAX - bytes)
    return error.fail(ErrorKind::InvalidArgument,
                      "the copy of " + std::to_string(bytes) +
                          " bytes wraps the address space");
  if (d != s && overlap(dst, bytes, src, bytes))
    return error.fail(ErrorKind::InvalidArgument,
                      "the copy's source and destination overlap");
  ErrorKind kind =
      impl_->options.device == "cpu" ? ErrorKind::System : ErrorKind::Device;
  // In a group: in order with the communicator's held launches.
  if (GroupLaunch *group = GroupLaunch::current()) {
    CommDevice *device = impl_->device.get();
    group->hold(*impl_->launcher, [=] {
      Error failed;
      std::string why;
      if (!device->copy(dst, src, bytes, stream, why))
        failed.fail(kind, why);
      return failed;
    });
    return true;
  }
  std::string why;
  if (impl_->device->copy(dst, src, bytes, stream, why))
    return true;
  return error.fail(kind, why);
}

bool Communicator::synchronize(void *stream, Error &error) {
  if (GroupLaunch::current())
    return error.fail(ErrorKind::InvalidUsage,
                      "a group's call cannot wait for its stream: what it "
                      "enqueues starts at the group's end");
  std::string why;
  bool capturing = false;
  if (!impl_->device->streamCapturing(stream, capturing, why))
    return error.fail(ErrorKind::Device, why);
  if (capturing)
    return error.fail(ErrorKind::InvalidUsage,
                      "the stream is being captured into a graph: waiting "
                      "on it from the host is not possible");
  if (!impl_->device->synchronize(stream, why))
    return error.fail(ErrorKind::Device, "synchronising the stream: " + why);
  return true;
}

bool Communicator::collective(CommOp op, const void *send, void *recv,
                              size_t count, DataType type, int root,
                              void *stream, Error &error) {
  CallKey key{int(op), send, recv, count, int(type), -1, root};
  if (bool ok; impl_->calls->replayed(key, stream, error, ok))
    return ok;
  CollectivePlan plan;
  Error refused;
  bool planned = planCollective(op, send, recv, count, type, root,
                                impl_->shape(), plan, refused);
  return impl_->calls->run(planned, plan, refused, stream, error, &key);
}

bool Communicator::reduce(CommReduction kind, const void *send, void *recv,
                          size_t count, DataType type, ReduceOp op, int root,
                          void *stream, Error &error) {
  return reduce(kind, send, recv, count, Arithmetic{type, op}, root, stream,
                error);
}

bool Communicator::reduce(CommReduction kind, const void *send, void *recv,
                          size_t count, const Arithmetic &arithmetic, int root,
                          void *stream, Error &error) {
  CallKey key{16 + int(kind),
              send,
              recv,
              count,
              int(arithmetic.type),
              int(arithmetic.op),
              root,
              arithmetic.deviceScalar,
              arithmetic.scalar,
              arithmetic.partOf};
  if (bool ok; impl_->calls->replayed(key, stream, error, ok))
    return ok;
  CollectivePlan plan;
  Error refused;
  bool planned = planReduction(kind, send, recv, count, arithmetic, root,
                               impl_->shape(), plan, refused);
  return impl_->calls->run(planned, plan, refused, stream, error, &key);
}

bool Communicator::allToAllv(const void *send, const int64_t *sendCounts,
                             void *recv, int64_t *recvCounts, size_t capacity,
                             size_t rowBytes, AlltoAllvLayout layout,
                             void *stream, Error &error) {
  CallKey key =
      allToAllvKey(layout == AlltoAllvLayout::Packed ? AllToAllvKind::Packed
                                                     : AllToAllvKind::Slots,
                   send, sendCounts, recv, recvCounts, capacity, rowBytes);
  if (bool ok; impl_->calls->replayed(key, stream, error, ok))
    return ok;
  CollectivePlan plan;
  Error refused;
  bool planned = planAllToAllv(send, sendCounts, recv, recvCounts, capacity,
                               rowBytes, layout, impl_->shape(), plan, refused);
  return impl_->calls->run(planned, plan, refused, stream, error, &key);
}

bool Communicator::allToAllv2d(const void *send, const int64_t *inSplits,
                               void *recv, int64_t *outSplitsOffsets,
                               int experts, size_t capacity, size_t rowBytes,
                               int majorAlign, void *stream, Error &error) {
  CallKey key =
      allToAllvKey(AllToAllvKind::TwoD, send, inSplits, recv, outSplitsOffsets,
                   capacity, rowBytes, experts, majorAlign);
  if (bool ok; impl_->calls->replayed(key, stream, error, ok))
    return ok;
  CollectivePlan plan;
  Error refused;
  bool planned = planAllToAllv2d(false, send, inSplits, recv, outSplitsOffsets,
                                 experts, capacity, rowBytes, majorAlign,
                                 impl_->shape(), plan, refused);
  return impl_->calls->run(planned, plan, refused, stream, error, &key);
}

bool Communicator::allToAllv2dOffset(const void *send,
                                     const int64_t *inSplitsOffsets, void *recv,
                                     int64_t *outSplitsOffsets, int experts,
                                     size_t capacity, size_t rowBytes,
                                     void *stream, Error &error) {
  CallKey key =
      allToAllvKey(AllToAllvKind::TwoDOffset, send, inSplitsOffsets, recv,
                   outSplitsOffsets, capacity, rowBytes, experts);
  if (bool ok; impl_->calls->replayed(key, stream, error, ok))
    return ok;
  CollectivePlan plan;
  Error refused;
  bool planned = planAllToAllv2d(true, send, inSplitsOffsets, recv,
                                 outSplitsOffsets, experts, capacity, rowBytes,
                                 1, impl_->shape(), plan, refused);
  return impl_->calls->run(planned, plan, refused, stream, error, &key);
}

bool Communicator::loadSchedule(const std::string &textOrPath,
                                Schedule &schedule, Error &error,
                                const Arithmetic *arithmetic) {
  std::string text = textOrPath, name = "<schedule>";
  Error unreadable;
  bool inlineText = textOrPath.find("sdma.schedule") != std::string::npos ||
                    textOrPath.rfind("// sdma-ldst: ", 0) == 0;
  if (!inlineText) {
    if (!readFileBytes(textOrPath, text))
      unreadable.fail(ErrorKind::InvalidArgument,
                      "cannot read schedule " + textOrPath);
    name = textOrPath;
  }
  // Every rank must load the same text (an error on every rank if not).
  if (!impl_->agreement->agreeUnless(
          unreadable, "schedule " + std::to_string(hashBytes(text)),
          "the loaded schedule", error))
    return false;
  int index = -1;
  if (!impl_->programs->addSchedule(text, name, arithmetic, index, error))
    return false;
  const LdstProgram &program = impl_->programs->instance(index).program;
  schedule.name = program.schedule;
  schedule.buffers = program.buffers;
  schedule.instance = index;
  schedule.rowIsScalar = arithmetic && arithmetic->op == ReduceOp::PreMulSum;
  return true;
}

bool Communicator::launch(const Schedule &schedule,
                          const std::vector<void *> &buffers, size_t chunkBytes,
                          void *stream, Error &error, size_t rowBytes) {
  if (schedule.instance < 0 ||
      size_t(schedule.instance) >= impl_->programs->size())
    return error.fail(ErrorKind::InvalidUsage,
                      "the schedule was not loaded on this communicator");
  Call call;
  call.buffers.assign(buffers.begin(), buffers.end());
  call.chunkBytes = chunkBytes;
  call.rowBytes = rowBytes;
  // (A premulsum's scalar is each rank's own.)
  call.signature =
      "launch " + schedule.name + " chunk " + std::to_string(chunkBytes) +
      (schedule.rowIsScalar ? " scalar" : " row " + std::to_string(rowBytes));
  if (!impl_->p2p->healthy(error))
    return error.context("the communicator has failed");
  return impl_->calls->launch(schedule.instance, call, stream, error);
}

bool Communicator::precompile(const std::string &directory, int ranks,
                              const std::vector<std::string> &schedules,
                              const CommOptions &options, Error &error,
                              const std::vector<int> &experts, int majorAlign) {
  return ProgramCache::precompile(directory, ranks, schedules, options, error,
                                  experts, majorAlign);
}

std::string Communicator::programName(const std::string &path) {
  return ProgramCache::programName(path);
}

bool Communicator::sendRecv(const std::vector<PeerOp> &ops, void *stream,
                            Error &error) {
  if (!impl_->healthy(error))
    return error.context("the communicator has failed");
  // A group's held launches would start after them on the same stream.
  if (GroupLaunch::current())
    return error.fail(ErrorKind::InvalidUsage,
                      "sends and receives cannot be made by a group's call "
                      "(sdmaGroupCall): make them in the group itself");
  return impl_->p2p->run(ops, stream, error);
}

bool Communicator::asyncError(Error &error) { return impl_->healthy(error); }

std::string Communicator::lastPath() const { return impl_->calls->lastPath(); }

bool Communicator::abort(Error &error) {
  Impl &c = *impl_;
  // A host exchange in flight (a call meeting the others, a first call's
  // agreement) ends now too; with none, this rank's leaving goes now, so
  // the others' next one fails naming it. Later ones fail at once.
  c.agreement->interrupt("the communicator was aborted (ncclCommAbort / "
                         "sdmaCommAbort): its host exchanges end");
  c.launcher->abandonExchanges();
  // Ranks sharing this GPU context fail their co-launched calls at once.
  if (CoLaunch *room = c.launcher->coLaunch())
    room->memberAborted(c.rank);
  // A record claimed for the abort: a kernel's later failure cannot
  // replace it (word 7 claims a point-to-point record).
  auto claim = [](unsigned long long *record) {
    unsigned long long zero = 0;
    __atomic_compare_exchange_n(record, &zero, kAbortedStatus, false,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  };
  unsigned long long *records = c.device->errorRecord();
  std::vector<size_t> offsets = c.programs->errorOffsets();
  __atomic_store_n(records + size_t(kP2pRecord) * kRecordWords + 7, 1ull,
                   __ATOMIC_SEQ_CST);
  // The host records: what kernels poll on the CPU device, and what the
  // host reads of a GPU's.
  for (size_t i = 0; i < offsets.size(); ++i)
    claim(records + i * kRecordWords);
  claim(records + size_t(kP2pRecord) * kRecordWords);
  if (!c.device->errorMirrored())
    return true;
  // A GPU's kernels poll words in its own memory: filled behind them.
  std::string why;
  char *local = c.heap->control();
  P2pArea area{c.ranks, c.options.p2pChunkBytes};
  for (size_t offset : offsets)
    if (!c.device->markAborted(local + offset, 8, why))
      return error.fail(ErrorKind::Device, "abort: " + why);
  if (!c.device->markAborted(local + kControlBytes + area.error(), 8, why))
    return error.fail(ErrorKind::Device, "abort: " + why);
  return true;
}

void Communicator::bindThread() { impl_->device->bindThread(); }

bool Communicator::shareAmong(int root, const std::vector<int> &members,
                              void *data, size_t bytes, Error &error) {
  Impl &c = *impl_;
  std::string what = "sharing " + std::to_string(bytes) + " bytes from rank " +
                     std::to_string(root);
  bool sorted =
      std::is_sorted(members.begin(), members.end()) &&
      std::adjacent_find(members.begin(), members.end()) == members.end();
  if (!sorted || members.empty() || members.front() < 0 ||
      members.back() >= c.ranks ||
      !std::binary_search(members.begin(), members.end(), c.rank) ||
      !std::binary_search(members.begin(), members.end(), root))
    return error.fail(ErrorKind::InvalidArgument,
                      what + ": the members must be distinct ranks in "
                             "order, this rank and the root among them");
  if (!data || bytes > kMailboxBytes - 16)
    return error.fail(ErrorKind::InvalidArgument,
                      what + ": at most " + std::to_string(kMailboxBytes - 16) +
                          " bytes, not null");
  uint64_t generation = ++c.shares;
  const Region &control = c.heap->region(0);
  std::string why;
  auto copy = [&](void *to, const void *from, size_t n) {
    return c.device->copy(to, from, n, nullptr, why) &&
           c.device->synchronize(nullptr, why);
  };
  if (c.rank == root) {
    // The bytes first, then the generation that publishes them.
    char *box = control.local + kMailboxOffset;
    uint64_t size = bytes;
    if (!copy(box + 8, &size, 8) || !copy(box + 16, data, bytes) ||
        !copy(box, &generation, 8))
      return error.fail(c.deviceKind(), what + ": " + why);
    return true;
  }
  // Read the root's mailbox until it publishes this generation.
  const char *box = control.peer[root] + kMailboxOffset;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(c.options.timeoutMs);
  for (;;) {
    uint64_t seen = 0;
    if (!copy(&seen, box, 8))
      return error.fail(c.deviceKind(), what + ": " + why);
    if (seen == generation)
      break;
    if (seen > generation)
      return error.fail(ErrorKind::InvalidUsage,
                        what + ": rank " + std::to_string(root) +
                            " has shared " + std::to_string(seen) +
                            " times, this rank " + std::to_string(generation) +
                            ": the members' calls differ");
    if (std::chrono::steady_clock::now() > deadline)
      return error.fail(ErrorKind::Remote,
                        what + ": rank " + std::to_string(root) +
                            " did not share within " +
                            std::to_string(c.options.timeoutMs) + " ms");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  uint64_t size = 0;
  if (!copy(&size, box + 8, 8) ||
      (size == bytes && !copy(data, box + 16, bytes)))
    return error.fail(c.deviceKind(), what + ": " + why);
  if (size != bytes)
    return error.fail(ErrorKind::InvalidUsage,
                      what + ": rank " + std::to_string(root) + " shared " +
                          std::to_string(size) + " bytes");
  return true;
}
