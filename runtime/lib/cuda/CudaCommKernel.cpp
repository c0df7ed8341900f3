//===- CudaCommKernel.cpp - the communicator's kernels on CUDA ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaCommKernel.h"
#include "comm/GroupLaunch.h"
#include "comm/PointToPoint.h"
#include "compile/KernelCache.h"
#include "cuda/CudaKernel.h"
#include "cuda/CudaLaunchGraphs.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {

/// One program on the device, launched for this process's rank.
class CudaCommKernel : public CommKernel {
public:
  CudaCommKernel(const CudaCommGpu &device, const LdstProgram &program);
  ~CudaCommKernel() override;
  bool load(std::string &error);
  bool launch(const KernelLaunch &launch, std::string &error) override;
  std::string groupKey() const override {
    return groupRefused() ? "" : groupKey_;
  }
  int groupLimit() const override { return groupRefused() ? 0 : groupLimit_; }
  bool launchGroup(const std::vector<const KernelLaunch *> &launches,
                   bool &started, std::string &error) override {
    return launchGroupAt(launches, started, nullptr, error);
  }
  bool launchGroupMarked(const std::vector<const KernelLaunch *> &launches,
                         bool &started, void *&after,
                         std::string &error) override {
    CUevent done = nullptr;
    bool ok = launchGroupAt(launches, started, &done, error);
    after = done;
    return ok;
  }
  bool markStream(void *stream, void *&mark, std::string &error) override;
  bool waitMark(void *stream, void *mark, std::string &error) override;
  const void *streamDomain() const override { return device_.context(); }
  /// The handles of a refused group launch, as the driver sees them.
  std::string
  describeHandles(const CudaKernel &kernel,
                  const std::vector<const KernelLaunch *> &launches) const;

private:
  /// The blocks a rank's launch of `kernel` takes at `chunkBytes`.
  int blocks(CudaKernel &kernel, size_t chunkBytes) const;
  /// Records `event` (made on first use) on `stream`.
  bool recordMark(CUevent &event, CUstream stream, std::string &error);
  /// launchGroup; with `end`, the other streams are not ordered after the
  /// launch: *end marks it (launchGroupMarked).
  bool launchGroupAt(const std::vector<const KernelLaunch *> &launches,
                     bool &started, CUevent *end, std::string &error);
  /// Orders `launches`' streams around a launch on the first one's: before
  /// (after = false) every other stream's work so far (its launch's mark,
  /// KernelLaunch::before, where it has one), after (true) what they
  /// enqueue next.
  bool joinStreams(const std::vector<const KernelLaunch *> &launches,
                   bool after, std::string &error);

  const CudaCommGpu &device_;
  LdstProgram program_;
  CudaKernel kernel_;
  /// A low-latency program's sdma_ldst_ll (LdstPhases.hip).
  CudaKernel lowLatency_;
  /// Built with SDMA_GROUP where ranks share the GPU: sdma_ldst_group and
  /// (low-latency programs) sdma_ldst_ll_group, for up to groupLimit_
  /// ranks a launch; groupKey_ names the build.
  CudaKernel group_, groupLowLatency_;
  int groupLimit_ = 0;
  std::string groupKey_;
  /// Whether the device refused a group launch of this build (of any
  /// rank's kernel with this key: one refusal stops them all, so the rest
  /// do not each try and fail in turn). groupKey_ and groupLimit_ stay as
  /// load() set them: other groups' threads read them.
  bool groupRefused() const;
  void refuseGroups();
  /// Events ordering a group launch's streams (made on first use).
  std::vector<CUevent> events_;
  /// This rank's stream marked for a co-launch (markStream), and the end
  /// of a co-launched group launch this kernel made (launchGroupMarked:
  /// its ranks' threads wait for it before they hand in again, so one
  /// event serves every round).
  CUevent mark_ = nullptr, end_ = nullptr;
  /// Replayed launches as graphs.
  LaunchGraphs graphs_;
  int64_t largest_ = 1; // chunks of the largest buffer
};

/// The point-to-point kernel, launched for this process's rank.
class CudaP2pKernel : public CommKernel {
public:
  explicit CudaP2pKernel(const CudaCommGpu &device);
  bool load(std::string &error);
  bool launch(const KernelLaunch &launch, std::string &error) override;
  const void *streamDomain() const override { return device_.context(); }

private:
  const CudaCommGpu &device_;
  CudaKernel kernel_;
};

CudaCommKernel::CudaCommKernel(const CudaCommGpu &device,
                               const LdstProgram &program)
    : device_(device), program_(program), kernel_(device.driver()),
      lowLatency_(device.driver()), group_(device.driver()),
      groupLowLatency_(device.driver()), graphs_(device.driver()) {}

CudaCommKernel::~CudaCommKernel() {
  for (CUevent event : events_)
    device_.driver().cuEventDestroy_v2(event);
  for (CUevent event : {mark_, end_})
    if (event)
      device_.driver().cuEventDestroy_v2(event);
}

bool CudaCommKernel::recordMark(CUevent &event, CUstream stream,
                                std::string &error) {
  const Driver &driver = device_.driver();
  if (!event)
    if (CUresult r = driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)) {
      event = nullptr;
      error = driver.describe("cuEventCreate", r);
      return false;
    }
  if (CUresult r = driver.cuEventRecord(event, stream)) {
    error = driver.describe("cuEventRecord", r);
    return false;
  }
  return true;
}

bool CudaCommKernel::markStream(void *stream, void *&mark, std::string &error) {
  if (!device_.makeCurrent(error) ||
      !recordMark(mark_, static_cast<CUstream>(stream), error))
    return false;
  mark = mark_;
  return true;
}

bool CudaCommKernel::waitMark(void *stream, void *mark, std::string &error) {
  const Driver &driver = device_.driver();
  if (!mark)
    return true;
  if (!device_.makeCurrent(error))
    return false;
  if (CUresult r = driver.cuStreamWaitEvent(static_cast<CUstream>(stream),
                                            static_cast<CUevent>(mark), 0)) {
    error = driver.describe("cuStreamWaitEvent", r);
    return false;
  }
  return true;
}

/// The most bytes of parameters a kernel takes: 32764 from CUDA 12.1's
/// driver on (Volta and later), 4096 before.
size_t paramBytes(const Driver &driver) {
  return driver.version >= 12010 ? 32764 : 4096;
}

bool CudaCommKernel::load(std::string &error) {
  const Driver &driver = device_.driver();
  if (!device_.makeCurrent(error))
    return false;
  CompileInfo compile;
  std::string cubin;
  // Every rank of the job on this GPU: device-scope fences suffice.
  const bool oneGpu = device_.sharing() >= program_.ranks;
  CudaKernelSource source = CudaKernelSource::ldst(program_, false, oneGpu);
  // Ranks of the job share this GPU: the group entries too, for as many of
  // them as one launch's parameters hold (each its table: LaunchTable's
  // words, the low-latency ones included, and its rank).
  const size_t R = size_t(program_.ranks),
               words = R * program_.buffers.size() + 5 * R + 12;
  // SdmaGroupTables (the tables, then an int per rank padded to 8 bytes),
  // the chunk and the epoch.
  auto bytes = [&](size_t g) {
    return g * words * 8 + (g * 4 + 7) / 8 * 8 + 16;
  };
  groupLimit_ = std::min(device_.sharing(), program_.ranks);
  while (groupLimit_ >= 2 && bytes(size_t(groupLimit_)) > paramBytes(driver))
    --groupLimit_;
  if (groupLimit_ < 2)
    groupLimit_ = 0;
  else
    source.text = "#define SDMA_GROUP " + std::to_string(groupLimit_) + "\n" +
                  source.text;
  if (!CudaKernel::build(driver, device_.device(), source,
                         device_.cacheDirectory(), compile, cubin, error))
    return false;
  if (!kernel_.load(device_.context(), cubin, program_.entry, kLdstThreads,
                    error)) {
    error = driver.describe("loading the kernel", kernel_.failure());
    return false;
  }
  if (program_.lowLatencyPairChunks >= 0 &&
      !lowLatency_.loadEntry(kernel_, "sdma_ldst_ll", kLdstThreads, error)) {
    error = driver.describe("loading the low-latency kernel",
                            lowLatency_.failure());
    return false;
  }
  // SDMA_LOG_KERNELS=1: each entry's resources, as loaded.
  if (const char *log = std::getenv("SDMA_LOG_KERNELS"); log && *log == '1')
    for (const CudaKernel *k : {&kernel_, &lowLatency_})
      if (k->loaded())
        std::fprintf(stderr,
                     "sdma: kernel %s (%s): %d registers, %d blocks/SM, %d "
                     "bytes of local memory a thread\n",
                     program_.schedule.c_str(),
                     k == &kernel_ ? "entry" : "low-latency entry",
                     k->registers(), k->blocksPerSM(), k->localBytes());
  // Group entries that do not load leave the group's launches one by one.
  std::string ignored;
  if (groupLimit_ &&
      (!group_.loadEntry(kernel_, "sdma_ldst_group", kLdstThreads, ignored) ||
       (program_.lowLatencyPairChunks >= 0 &&
        !groupLowLatency_.loadEntry(kernel_, "sdma_ldst_ll_group", kLdstThreads,
                                    ignored))))
    groupLimit_ = 0;
  if (groupLimit_) {
    char key[160];
    std::snprintf(key, sizeof(key), "cuda %p %016llx %d",
                  static_cast<void *>(device_.context()),
                  static_cast<unsigned long long>(hashBytes(cubin)),
                  groupLimit_);
    groupKey_ = key;
  }
  for (const Buffer &buffer : program_.buffers)
    largest_ = std::max<int64_t>(largest_, buffer.chunks);
  return true;
}

int CudaCommKernel::blocks(CudaKernel &kernel, size_t chunkBytes) const {
  // As the in-process executor: never more blocks than can be resident at
  // once for all the ranks that share the GPU (a rank's blocks wait for
  // each other).
  return ldstBlocks(device_.smCount() * std::max(1, kernel.blocksPerSM()) /
                        device_.sharing(),
                    largest_ * chunkBytes);
}

bool CudaCommKernel::joinStreams(
    const std::vector<const KernelLaunch *> &launches, bool after,
    std::string &error) {
  const Driver &driver = device_.driver();
  CUstream first = static_cast<CUstream>(launches[0]->stream);
  auto event = [&](size_t i, CUevent &out) {
    while (events_.size() <= i) {
      CUevent made = nullptr;
      if (CUresult r = driver.cuEventCreate(&made, CU_EVENT_DISABLE_TIMING)) {
        error = driver.describe("cuEventCreate", r);
        return false;
      }
      events_.push_back(made);
    }
    out = events_[i];
    return true;
  };
  auto record = [&](CUevent e, CUstream on) {
    if (CUresult r = driver.cuEventRecord(e, on)) {
      error = driver.describe("cuEventRecord", r);
      return false;
    }
    return true;
  };
  // Before: the first stream waits for each other one's work so far, an
  // event each. After: one event on the first stream, which every other
  // one waits for (a wait takes the event as recorded when it is made).
  CUevent done = nullptr;
  size_t used = 0;
  for (size_t i = 1; i < launches.size(); ++i) {
    CUstream other = static_cast<CUstream>(launches[i]->stream);
    bool seen = other == first;
    for (size_t j = 1; j < i && !seen; ++j)
      seen = launches[j]->stream == launches[i]->stream;
    if (seen)
      continue;
    if (after && !done && (!event(0, done) || !record(done, first)))
      return false;
    CUevent e = done;
    if (!after && launches[i]->before)
      e = static_cast<CUevent>(launches[i]->before);
    else if (!after && (!event(used++, e) || !record(e, other)))
      return false;
    if (CUresult r = driver.cuStreamWaitEvent(after ? other : first, e, 0)) {
      error = driver.describe("cuStreamWaitEvent", r);
      return false;
    }
  }
  return true;
}

/// The group keys whose launch a device refused, in this process.
struct RefusedGroups {
  std::mutex mutex;
  std::set<std::string> keys;
  /// Whether keys holds any: the common case asks without the lock (every
  /// held launch of every group asks).
  std::atomic<bool> any{false};
  static RefusedGroups &get() {
    static RefusedGroups *refused = new RefusedGroups(); // outlives kernels
    return *refused;
  }
};

bool CudaCommKernel::groupRefused() const {
  RefusedGroups &refused = RefusedGroups::get();
  if (groupKey_.empty() || !refused.any.load(std::memory_order_acquire))
    return false;
  std::lock_guard<std::mutex> lock(refused.mutex);
  return refused.keys.count(groupKey_) > 0;
}

void CudaCommKernel::refuseGroups() {
  RefusedGroups &refused = RefusedGroups::get();
  std::lock_guard<std::mutex> lock(refused.mutex);
  refused.keys.insert(groupKey_);
  refused.any.store(true, std::memory_order_release);
}

std::string CudaCommKernel::describeHandles(
    const CudaKernel &kernel,
    const std::vector<const KernelLaunch *> &launches) const {
  const Driver &driver = device_.driver();
  CUcontext current = nullptr;
  driver.cuCtxGetCurrent(&current);
  char text[64];
  std::snprintf(text, sizeof(text), "current context %p; ",
                static_cast<void *>(current));
  std::string out = text + kernel.describeHandles();
  for (size_t i = 0; i < launches.size(); ++i) {
    CUcontext of = nullptr;
    CUstream stream = static_cast<CUstream>(launches[i]->stream);
    CUresult r = driver.cuStreamGetCtx(stream, &of);
    std::snprintf(text, sizeof(text),
                  "; rank %d's stream %p: ", launches[i]->programRank,
                  static_cast<void *>(stream));
    out += text;
    if (r) {
      out += driver.describe("cuStreamGetCtx", r);
      continue;
    }
    std::snprintf(text, sizeof(text), "context %p", static_cast<void *>(of));
    out += text;
  }
  return out;
}

bool CudaCommKernel::launchGroupAt(
    const std::vector<const KernelLaunch *> &launches, bool &started,
    CUevent *end, std::string &error) {
  started = false;
  const bool ll = launches[0]->lowLatency;
  const size_t words = launches[0]->table.size();
  if (!groupLimit() || launches.size() < 2 ||
      launches.size() > size_t(groupLimit_) ||
      (ll && program_.lowLatencyPairChunks < 0)) {
    error = "internal: a group launch of " + std::to_string(launches.size()) +
            " ranks of " + program_.schedule + ", built for " +
            std::to_string(groupLimit_);
    return false;
  }
  // SdmaGroupTables: groupLimit_ tables, then as many ranks (int).
  std::vector<uint64_t> param(
      size_t(groupLimit_) * words + (size_t(groupLimit_) * 4 + 7) / 8, 0);
  int *ranks = reinterpret_cast<int *>(param.data() + groupLimit_ * words);
  for (size_t i = 0; i < launches.size(); ++i) {
    const KernelLaunch &one = *launches[i];
    if (one.table.size() != words || one.lowLatency != ll ||
        one.chunkBytes != launches[0]->chunkBytes) {
      error = "internal: the launches of a group differ in their table, "
              "path or chunk";
      return false;
    }
    std::copy(one.table.begin(), one.table.end(), param.begin() + i * words);
    ranks[i] = one.programRank;
  }
  CudaKernel &kernel = ll ? groupLowLatency_ : group_;
  unsigned long long chunk = launches[0]->chunkBytes, epoch = 0;
  void *args[] = {param.data(), &chunk, &epoch};
  if (!device_.makeCurrent(error))
    return false;
  if (GroupPhaseTimer timer(GroupPhase::JoinBefore);
      !joinStreams(launches, false, error))
    return false;
  // A replayed group (every rank's launch repeats its last) as a graph, where
  // graphs are on (CudaLaunchGraphs.h): the whole parameter block its key.
  const bool replayed =
      std::all_of(launches.begin(), launches.end(),
                  [](const KernelLaunch *l) { return l->replayed; });
  const unsigned grid = unsigned(blocks(kernel, chunk)),
                 rows = unsigned(launches.size());
  CUstream stream = static_cast<CUstream>(launches[0]->stream);
  LaunchGraphs::Result graphed = LaunchGraphs::Result::Plain;
  if (replayed && launchGraphsEnabled()) {
    std::vector<uint64_t> key(param);
    key.insert(key.end(), {uint64_t(chunk), uint64_t(grid), uint64_t(rows),
                           uint64_t(ll), uint64_t(1)});
    GroupPhaseTimer timer(GroupPhase::Launch);
    graphed = graphs_.launch(kernel, grid, rows, args, key, stream, error);
    if (graphed == LaunchGraphs::Result::Failed)
      return false; // nothing enqueued: the ranks may start alone
  }
  if (GroupPhaseTimer timer(GroupPhase::Launch);
      graphed == LaunchGraphs::Result::Plain &&
      !kernel.launch(grid, rows, stream, args, error)) {
    error += " (the group entry of " + program_.schedule + " for " +
             std::to_string(launches.size()) + " ranks, " +
             std::to_string(param.size() * 8) + " bytes of tables; " +
             describeHandles(kernel, launches) + ")";
    // Not again: the group's launches go one by one (GroupLaunch.cpp).
    refuseGroups();
    return false;
  }
  // Enqueued: a failure from here on must not launch the ranks again.
  started = true;
  GroupPhaseTimer timer(GroupPhase::JoinAfter);
  if (!end)
    return joinStreams(launches, true, error);
  // Its end marked; each rank's own thread orders its stream after it.
  if (!recordMark(end_, stream, error))
    return false;
  *end = end_;
  return true;
}

bool CudaCommKernel::launch(const KernelLaunch &launch, std::string &error) {
  if (launch.lowLatency && program_.lowLatencyPairChunks < 0) {
    error = "internal: a low-latency launch of " + program_.schedule +
            ", which has no low-latency entry";
    return false;
  }
  CudaKernel &kernel = launch.lowLatency ? lowLatency_ : kernel_;
  int blocks = this->blocks(kernel, launch.chunkBytes);
  unsigned long long chunk = launch.chunkBytes, epoch = 0;
  int rankBase = launch.programRank;
  void *args[] = {const_cast<uint64_t *>(launch.table.data()), &chunk, &epoch,
                  &rankBase};
  if (!device_.makeCurrent(error))
    return false;
  CUstream stream = static_cast<CUstream>(launch.stream);
  if (launch.replayed && launchGraphsEnabled()) {
    // Every byte the launch passes: the graph holds them.
    std::vector<uint64_t> key(launch.table);
    key.insert(key.end(), {chunk, uint64_t(rankBase), uint64_t(blocks),
                           uint64_t(launch.lowLatency)});
    switch (
        graphs_.launch(kernel, unsigned(blocks), 1, args, key, stream, error)) {
    case LaunchGraphs::Result::Launched:
      return true;
    case LaunchGraphs::Result::Failed:
      return false;
    case LaunchGraphs::Result::Plain:
      break;
    }
  }
  return kernel.launch(blocks, 1, stream, args, error);
}

CudaP2pKernel::CudaP2pKernel(const CudaCommGpu &device)
    : device_(device), kernel_(device.driver()) {}

bool CudaP2pKernel::load(std::string &error) {
  const Driver &driver = device_.driver();
  if (!device_.makeCurrent(error))
    return false;
  CudaKernelSource source;
  source.text = std::string(kCudaPrelude) + p2pKernelSource();
  source.name = "sdma_p2p.cu";
  CompileInfo compile;
  std::string cubin;
  if (!CudaKernel::build(driver, device_.device(), source,
                         device_.cacheDirectory(), compile, cubin, error))
    return false;
  if (!kernel_.load(device_.context(), cubin, "sdma_p2p", kLdstThreads,
                    error)) {
    error =
        driver.describe("loading the point-to-point kernel", kernel_.failure());
    return false;
  }
  return true;
}

bool CudaP2pKernel::launch(const KernelLaunch &launch, std::string &error) {
  if (!checkP2pLaunch(launch, error))
    return false;
  if (!device_.makeCurrent(error))
    return false;
  void *args[] = {const_cast<uint64_t *>(launch.table.data())};
  return kernel_.launch(launch.blocks, 1, static_cast<CUstream>(launch.stream),
                        args, error);
}

} // namespace

std::unique_ptr<CommKernel>
sdma::rt::loadCudaCommKernel(const CudaCommGpu &gpu, const LdstProgram &program,
                             std::string &error) {
  auto kernel = std::make_unique<CudaCommKernel>(gpu, program);
  if (!kernel->load(error))
    return nullptr;
  return kernel;
}

std::unique_ptr<CommKernel> sdma::rt::loadCudaP2pKernel(const CudaCommGpu &gpu,
                                                        std::string &error) {
  auto kernel = std::make_unique<CudaP2pKernel>(gpu);
  if (!kernel->load(error))
    return nullptr;
  return kernel;
}
