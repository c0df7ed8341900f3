//===- ShimComm.cpp - the drop-in's communicators and errors -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"
#include "ShimFallback.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <strings.h>
#include <thread>
#include <vector>

using namespace sdma::nccl;

namespace {
/// SDMA_NCCL_PRIVATE: whether the drop-in's communicators take private
/// buffers: 1 (the default) or 0; -1 for any other value (refused at init).
int privateBuffersSetting() {
  const char *set = std::getenv("SDMA_NCCL_PRIVATE");
  if (!set || !*set)
    return 1;
  std::string value = set;
  return value == "1" ? 1 : value == "0" ? 0 : -1;
}

/// SDMA_NCCL_SHARED_BYTES (decimal bytes; 0: never) into `bytes`, else
/// kSharedBytes; false for text that is not a number.
bool sharedBytesSetting(long long &bytes) {
  // On one H100 a shared call beat the staged one from 256 KiB (the
  // exchange costs 2-4 us), but it makes the host wait for every rank:
  // calls below 1 MiB are staged.
  constexpr long long kSharedBytes = 1ll << 20;
  const char *set = std::getenv("SDMA_NCCL_SHARED_BYTES");
  if (!set || !*set) {
    bytes = kSharedBytes;
    return true;
  }
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(set, &end, 10);
  if (errno || *end || *set == '-' || v > (1ull << 50))
    return false;
  bytes = static_cast<long long>(v);
  return true;
}
} // namespace

#define NCCL_API extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string threadError;
thread_local int groupDepth = 0;
std::mutex registry;
/// Every live communicator, owned here: a call holds its own reference
/// (acquire) for as long as it runs, so ncclCommAbort from another thread
/// (torch's watchdog) never frees one under a call.
std::map<ncclComm_t, std::shared_ptr<ncclComm>> &liveComms() {
  static std::map<ncclComm_t, std::shared_ptr<ncclComm>> comms;
  return comms;
}

bool live(ncclComm_t comm) { return sdma::nccl::acquire(comm) != nullptr; }

} // namespace

bool sdma::nccl::deviceIsCpu() {
  const char *device = std::getenv("SDMA_DEVICE");
  return device && std::string(device) == "cpu";
}

const Cuda *Cuda::get() {
  static Cuda cuda;
  static bool tried = false;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (!tried) {
    tried = true;
    if (void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
      auto find = [&](auto &fn, const char *name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
            dlsym(lib, name));
      };
      find(cuda.memAlloc, "cuMemAlloc_v2");
      find(cuda.memFree, "cuMemFree_v2");
      find(cuda.ctxGetDevice, "cuCtxGetDevice");
      find(cuda.init, "cuInit");
      find(cuda.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
      find(cuda.ctxSetCurrent, "cuCtxSetCurrent");
      find(cuda.memcpyHtoD, "cuMemcpyHtoD_v2");
      find(cuda.memcpyDtoH, "cuMemcpyDtoH_v2");
      find(cuda.ctxSynchronize, "cuCtxSynchronize");
    }
  }
  return cuda.memAlloc && cuda.memFree && cuda.ctxGetDevice ? &cuda : nullptr;
}

std::shared_ptr<ncclComm> sdma::nccl::acquire(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(registry);
  auto it = liveComms().find(comm);
  return it == liveComms().end() ? nullptr : it->second;
}

ncclResult_t sdma::nccl::checkComm(ncclComm_t comm, const char *call) {
  if (!comm)
    return fail(nullptr, ncclInvalidArgument,
                std::string(call) + ": comm is NULL");
  if (!live(comm))
    return fail(nullptr, ncclInvalidArgument,
                std::string(call) +
                    ": comm is not a live communicator (destroyed, aborted "
                    "or never made)");
  return ncclSuccess;
}

ncclResult_t sdma::nccl::initRank(ncclComm_t *out, int nranks, ncclUniqueId id,
                                  int rank, const ncclConfig_t *config) {
  if (!out)
    return fail(nullptr, ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
  *out = nullptr;
  if (config && (config->magic != 0xcafebeef || config->size < 24))
    return fail(nullptr, ncclInvalidArgument,
                "ncclCommInitRankConfig: config was not initialised with "
                "NCCL_CONFIG_INITIALIZER");
  // NCCL_CTA_POLICY_ZERO asks for collectives that hold no SM; sdma's
  // load/store kernels hold them (copy engines are issue 39's), so it is
  // refused rather than ignored. The other fields tune NCCL's own
  // kernels and network and have no meaning here.
  if (config &&
      config->size >= offsetof(ncclConfig_t, CTAPolicy) + sizeof(int) &&
      config->CTAPolicy != NCCL_CONFIG_UNDEF_INT && (config->CTAPolicy & 2))
    return fail(nullptr, ncclInvalidArgument,
                "ncclCommInitRankConfig: CTAPolicy NCCL_CTA_POLICY_ZERO "
                "(collectives without SMs) is not served: sdma's collectives "
                "run as load/store kernels");
  // A job across nodes: sdma within each, the real NCCL between them.
  if (int local = isFallback() ? 0 : localRanksOfJob(nranks))
    return initAcrossNodes(out, nranks, id, rank, local, config);
  sdmaUniqueId sid;
  static_assert(sizeof(sid.internal) == sizeof(id.internal), "id sizes");
  std::memcpy(sid.internal, id.internal, sizeof(sid.internal));
  // The device: SDMA_DEVICE (cuda by default: the calling thread's current
  // CUDA device, as NCCL's).
  // Private buffers (SDMA_NCCL_PRIVATE, 1 by default): a call whose path
  // lets no peer reach the caller's device buffers (a low-latency call, a
  // one-rank call) runs on them as they are; the others are staged
  // (ShimCollectives.cpp).
  if (privateBuffersSetting() < 0)
    return fail(nullptr, ncclInvalidArgument,
                std::string("ncclCommInitRank: SDMA_NCCL_PRIVATE='") +
                    std::getenv("SDMA_NCCL_PRIVATE") + "' must be 0 or 1");
  sdmaConfig_t options = SDMA_CONFIG_INITIALIZER;
  options.privateBuffers = privateBuffersSetting();
  // Larger calls on the barrier path share the caller's buffers for the
  // call (one host exchange) instead of staging them: at least
  // SDMA_NCCL_SHARED_BYTES, 0 never (SDMA_SHARED_BYTES, sdma's own
  // variable, is not read here).
  // (Only with private buffers: staging every call, a shared call's
  // exchange would buy nothing.)
  if (!sharedBytesSetting(options.sharedBytes))
    return fail(nullptr, ncclInvalidArgument,
                std::string("ncclCommInitRank: SDMA_NCCL_SHARED_BYTES='") +
                    std::getenv("SDMA_NCCL_SHARED_BYTES") +
                    "' is not a number of bytes");
  if (options.privateBuffers != 1)
    options.sharedBytes = 0;
  sdmaComm_t s = nullptr;
  sdmaResult_t r = sdmaCommInitRankConfig(&s, nranks, sid, rank, &options);
  if (r != sdmaSuccess)
    return fail(nullptr, static_cast<ncclResult_t>(r),
                std::string("ncclCommInitRank: ") + sdmaGetLastError(nullptr));
  return adopt(out, s, rank, nranks, config);
}

ncclResult_t sdma::nccl::adopt(ncclComm_t *out, sdmaComm_t s, int rank,
                               int nranks, const ncclConfig_t *config,
                               std::shared_ptr<NodeLink> nodes) {
  std::shared_ptr<ncclComm> owned(new (std::nothrow) ncclComm);
  if (!owned) {
    sdmaCommDestroy(s);
    return fail(nullptr, ncclSystemError, "ncclCommInitRank: out of memory");
  }
  ncclComm_t comm = owned.get();
  comm->sdma = s;
  comm->rank = rank;
  comm->nranks = nranks;
  // As initRank made it (a shrunk communicator keeps its parent's options).
  comm->privateBuffers = !nodes && privateBuffersSetting() == 1;
  if (nodes) {
    comm->real = nodes->comm; // the fallback's too
    comm->nodes = std::move(nodes);
  }
  if (!deviceIsCpu())
    if (const Cuda *cuda = Cuda::get())
      cuda->ctxGetDevice(&comm->device);
  {
    std::lock_guard<std::mutex> lock(registry);
    liveComms()[comm] = std::move(owned);
  }
  if (ncclResult_t r = comm->nodes ? ncclSuccess : attachReal(comm, config)) {
    std::string why = ncclGetLastError(nullptr);
    ncclCommAbort(comm);
    return fail(nullptr, r, "ncclCommInitRank: " + why);
  }
  *out = comm;
  logPath("CommInitRank", "sdma");
  return ncclSuccess;
}

void *sdma::nccl::peerStage(ncclComm *comm, size_t bytes) {
  if (!comm->peerStages.empty() && comm->peerStages.back().second >= bytes)
    return comm->peerStages.back().first;
  size_t size = std::max<size_t>(
      bytes, comm->peerStages.empty() ? 0 : 2 * comm->peerStages.back().second);
  void *p = nullptr;
  if (deviceIsCpu()) {
    p = std::malloc(size);
  } else if (const Cuda *cuda = Cuda::get()) {
    unsigned long long address = 0;
    if (cuda->memAlloc(&address, size) == 0)
      p = reinterpret_cast<void *>(address);
  }
  if (p)
    comm->peerStages.emplace_back(p, size);
  return p;
}

namespace {

void freePeerStages(ncclComm &comm) {
  const Cuda *cuda = deviceIsCpu() ? nullptr : Cuda::get();
  for (auto &[p, size] : comm.peerStages)
    if (cuda)
      cuda->memFree(reinterpret_cast<unsigned long long>(p));
    else
      std::free(p);
  comm.peerStages.clear();
}

ncclResult_t teardown(std::shared_ptr<ncclComm> owned, bool abort);

ncclResult_t destroy(ncclComm_t comm, const char *call) {
  std::shared_ptr<ncclComm> owned;
  {
    std::lock_guard<std::mutex> lock(registry);
    auto it = liveComms().find(comm);
    if (it != liveComms().end()) {
      owned = std::move(it->second);
      liveComms().erase(it);
    }
  }
  if (!owned)
    return checkComm(comm, call);
  // An abort stops the waits of a call in flight on another thread first,
  // so that its mutex comes free now, not after the timeout.
  bool abort = std::strcmp(call, "ncclCommAbort") == 0;
  if (abort)
    sdmaCommAbort(owned->sdma);
  if (!owned->initAll)
    return teardown(std::move(owned), abort);
  // One of ncclCommInitAll's communicators: sdma's destroy meets every rank
  // of a communicator, and a program destroys these one after another on
  // one thread (NCCL's destroy is local), so each is only set aside; the
  // last one's destroy tears them all down at once, a thread each.
  std::vector<std::pair<std::shared_ptr<ncclComm>, bool>> all;
  {
    InitAllGroup &group = *owned->initAll;
    std::lock_guard<std::mutex> lock(group.mutex);
    group.destroyed.emplace_back(std::move(owned), abort);
    if (--group.left > 0)
      return ncclSuccess;
    all = std::move(group.destroyed);
  }
  std::vector<ncclResult_t> results(all.size(), ncclSuccess);
  std::vector<std::string> errors(all.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < all.size(); ++i)
    threads.emplace_back([&, i] {
      results[i] = teardown(std::move(all[i].first), all[i].second);
      errors[i] = ncclGetLastError(nullptr);
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t i = 0; i < all.size(); ++i)
    if (results[i] != ncclSuccess)
      return fail(nullptr, results[i], errors[i]);
  return ncclSuccess;
}

/// Frees `owned` (already out of the registry): the real NCCL's beside it,
/// then sdma's, which waits for its device and meets its peers.
ncclResult_t teardown(std::shared_ptr<ncclComm> owned, bool abort) {
  const char *call = abort ? "ncclCommAbort" : "ncclCommDestroy";
  // A call in flight on another thread finishes first (it holds the
  // mutex); later calls find the communicator gone.
  std::lock_guard<std::mutex> inFlight(owned->mutex);
  // Across nodes sdma's communicator goes first: the real one is its
  // transport.
  auto closeReal = [&] {
    std::string ignored;
    if (owned->real)
      if (const RealNccl *real =
              owned->nodes ? owned->nodes->real : realNccl(ignored))
        (abort ? real->commAbort : real->commDestroy)(owned->real);
    owned->real = nullptr;
  };
  if (!owned->nodes)
    closeReal();
  sdmaResult_t r = sdmaCommDestroy(owned->sdma);
  closeReal();
  std::string message = r ? sdmaGetLastError(nullptr) : "";
  freePeerStages(*owned); // the device is idle: destroy waited for it
  if (r != sdmaSuccess)
    return fail(nullptr, static_cast<ncclResult_t>(r),
                std::string(call) + ": " + message);
  return ncclSuccess;
}

ncclResult_t notServed(ncclComm_t comm, const std::string &what) {
  return fail(comm, ncclInvalidUsage,
              what + " is not served by sdma's NCCL drop-in (docs/nccl.md)");
}

} // namespace

void sdma::nccl::setThreadError(const std::string &message) {
  threadError = message;
}

ncclResult_t sdma::nccl::fail(ncclComm_t comm, ncclResult_t result,
                              const std::string &message) {
  (comm ? comm->error : threadError) = message;
  return result;
}

ncclResult_t sdma::nccl::fromSdma(ncclComm_t comm, sdmaResult_t result) {
  if (result == sdmaSuccess)
    return ncclSuccess;
  // sdma's own result (a buffer to stage) has no NCCL number: the drop-in
  // stages before it could get here, so it is the caller's buffer.
  return fail(comm,
              result == sdmaNotSymmetric ? ncclInvalidArgument
                                         : static_cast<ncclResult_t>(result),
              sdmaGetLastError(comm ? comm->sdma : nullptr));
}

bool sdma::nccl::logging() {
  static const bool on = [] {
    const char *debug = std::getenv("NCCL_DEBUG");
    return std::getenv("SDMA_NCCL_DEBUG") ||
           (debug &&
            (!strcasecmp(debug, "INFO") || !strcasecmp(debug, "TRACE")));
  }();
  return on;
}

void sdma::nccl::logPath(const char *op, const char *path) {
  if (!logging())
    return;
  static std::mutex m;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(m);
  if (said.insert(std::string(op) + '\0' + path).second)
    std::fprintf(stderr, "sdma-nccl: %s: %s\n", op, path);
}

bool sdma::nccl::inGroup() { return groupDepth > 0; }

NCCL_API ncclResult_t ncclGetVersion(int *version) {
  if (!version)
    return fail(nullptr, ncclInvalidArgument,
                "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE; // the ABI implemented: 2.28.9
  return ncclSuccess;
}

NCCL_API const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError:
    return "internal error - please report this issue to the sdma developers";
  case ncclInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage:
    return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "unknown result code";
  }
}

NCCL_API const char *ncclGetLastError(ncclComm_t comm) {
  if (comm && live(comm))
    return comm->error.c_str();
  return threadError.c_str();
}

NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (!uniqueId)
    return fail(nullptr, ncclInvalidArgument, "ncclGetUniqueId: id is NULL");
  sdmaUniqueId id;
  if (sdmaResult_t r = sdmaGetUniqueId(&id))
    return fail(nullptr, static_cast<ncclResult_t>(r),
                std::string("ncclGetUniqueId: ") + sdmaGetLastError(nullptr));
  std::memcpy(uniqueId->internal, id.internal, sizeof(id.internal));
  packRealId(*uniqueId); // for a job across nodes (ShimNodes.cpp)
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
                                       ncclUniqueId commId, int rank) {
  return initRank(comm, nranks, commId, rank, nullptr);
}

NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                             ncclUniqueId commId, int rank,
                                             ncclConfig_t *config) {
  // Nonblocking (config->blocking = 0) is honoured by finishing before
  // returning ncclSuccess, which NCCL allows; the CTA and network fields
  // have no meaning for sdma's kernels and are ignored.
  return initRank(comm, nranks, commId, rank, config);
}

NCCL_API ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks,
                                               int myrank, int nId,
                                               ncclUniqueId *commIds,
                                               ncclConfig_t *config) {
  if (nId < 1 || !commIds)
    return fail(nullptr, ncclInvalidArgument,
                "ncclCommInitRankScalable: no unique id");
  // One root serves every rank (the others ids spread NCCL's bootstrap).
  return initRank(newcomm, nranks, commIds[0], myrank, config);
}

NCCL_API ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev,
                                      const int *devlist) {
  if (!comms || ndev < 1)
    return fail(nullptr, ncclInvalidArgument,
                "ncclCommInitAll: comms is NULL or ndev " +
                    std::to_string(ndev) + " is below 1");
  for (int i = 0; i < ndev; ++i)
    comms[i] = nullptr;
  ncclUniqueId id;
  if (ncclResult_t r = ncclGetUniqueId(&id))
    return r;
  // Rank i on device devlist[i] (i without a list): every rank's init is
  // collective, so each runs on a thread of its own. Unlike NCCL, a device
  // may appear more than once (sdma runs several ranks on one GPU).
  const Cuda *cuda = deviceIsCpu() ? nullptr : Cuda::get();
  std::vector<ncclResult_t> results(ndev, ncclSuccess);
  std::vector<std::string> errors(ndev);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i)
    threads.emplace_back([&, i] {
      int device = devlist ? devlist[i] : i;
      void *context = nullptr;
      // cuInit first: InitAll may be the process's first CUDA call.
      if (cuda && cuda->init && cuda->primaryCtxRetain && cuda->ctxSetCurrent &&
          (cuda->init(0) != 0 ||
           cuda->primaryCtxRetain(&context, device) != 0 ||
           cuda->ctxSetCurrent(context) != 0)) {
        results[i] = ncclInvalidArgument;
        errors[i] = "device " + std::to_string(device) + " cannot be used";
        return;
      }
      results[i] = initRank(&comms[i], ndev, id, i, nullptr);
      if (results[i] != ncclSuccess)
        errors[i] = ncclGetLastError(nullptr);
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < ndev; ++i)
    if (results[i] != ncclSuccess) {
      for (int j = 0; j < ndev; ++j)
        if (comms[j]) {
          ncclCommAbort(comms[j]);
          comms[j] = nullptr;
        }
      return fail(nullptr, results[i],
                  "ncclCommInitAll: rank " + std::to_string(i) + ": " +
                      errors[i]);
    }
  auto group = std::make_shared<InitAllGroup>();
  group->left = ndev;
  for (int i = 0; i < ndev; ++i)
    comms[i]->initAll = group;
  logPath("CommInitAll", "sdma");
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  // Every call was enqueued on the caller's stream; nothing is pending in
  // the communicator itself.
  return checkComm(comm, "ncclCommFinalize");
}

NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return destroy(comm, "ncclCommDestroy");
}

NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return destroy(comm, "ncclCommAbort");
}

NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                     int excludeRanksCount, ncclComm_t *newcomm,
                                     ncclConfig_t *config, int shrinkFlags) {
  if (ncclResult_t r = checkComm(comm, "ncclCommShrink"))
    return r;
  if (!newcomm)
    return fail(comm, ncclInvalidArgument, "ncclCommShrink: newcomm is NULL");
  *newcomm = nullptr;
  if (shrinkFlags & ~NCCL_SHRINK_ABORT)
    return fail(comm, ncclInvalidArgument,
                "ncclCommShrink: unknown flags " + std::to_string(shrinkFlags));
  // The excluded ranks do not call (they may have died): sdma's shrink
  // meets the others through the lowest one's symmetric memory, so it
  // works on a communicator whose calls have failed. With
  // NCCL_SHRINK_ABORT the parent's calls in flight are aborted first.
  sdmaComm_t s = nullptr;
  sdmaResult_t r =
      sdmaCommShrink(comm->sdma, excludeRanksList, excludeRanksCount, &s,
                     shrinkFlags & NCCL_SHRINK_ABORT ? SDMA_SHRINK_ABORT
                                                     : SDMA_SHRINK_DEFAULT);
  if (r != sdmaSuccess)
    return fail(comm, static_cast<ncclResult_t>(r),
                std::string("ncclCommShrink: ") + sdmaGetLastError(comm->sdma));
  int nranks = 0, rank = 0;
  sdmaCommCount(s, &nranks);
  sdmaCommUserRank(s, &rank);
  if (ncclResult_t a = adopt(newcomm, s, rank, nranks, config))
    return fail(comm, a,
                std::string("ncclCommShrink: ") + ncclGetLastError(nullptr));
  logPath("CommShrink", "sdma");
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
                                            ncclResult_t *asyncError) {
  std::shared_ptr<ncclComm> keep = acquire(comm); // the watchdog's call
  if (!keep)
    return checkComm(comm, "ncclCommGetAsyncError");
  if (!asyncError)
    return fail(comm, ncclInvalidArgument,
                "ncclCommGetAsyncError: asyncError is NULL");
  sdmaResult_t found = sdmaSuccess;
  if (sdmaResult_t r = sdmaCommGetAsyncError(comm->sdma, &found))
    return fromSdma(comm, r);
  *asyncError = static_cast<ncclResult_t>(found);
  if (found != sdmaSuccess)
    comm->error = sdmaGetLastError(comm->sdma);
  std::string ignored;
  const RealNccl *real = comm->real ? realNccl(ignored) : nullptr;
  ncclResult_t realError = ncclSuccess;
  if (real && found == sdmaSuccess &&
      real->commGetAsyncError(comm->real, &realError) == ncclSuccess &&
      realError != ncclSuccess && realError != ncclInProgress) {
    *asyncError = realError;
    comm->error =
        std::string("the fallback NCCL: ") + real->getLastError(comm->real);
  }
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (ncclResult_t r = checkComm(comm, "ncclCommCount"))
    return r;
  if (!count)
    return fail(comm, ncclInvalidArgument, "ncclCommCount: count is NULL");
  *count = comm->nranks;
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  if (ncclResult_t r = checkComm(comm, "ncclCommCuDevice"))
    return r;
  if (!device)
    return fail(comm, ncclInvalidArgument, "ncclCommCuDevice: device is NULL");
  *device = comm->device;
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (ncclResult_t r = checkComm(comm, "ncclCommUserRank"))
    return r;
  if (!rank)
    return fail(comm, ncclInvalidArgument, "ncclCommUserRank: rank is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}

// The device API (nccl_device.h): its requirements and device communicator
// are opaque here.
NCCL_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *, void *) {
  if (ncclResult_t r = checkComm(comm, "ncclDevCommCreate"))
    return r;
  return notServed(comm, "ncclDevCommCreate (NCCL's device API)");
}

NCCL_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *) {
  if (ncclResult_t r = checkComm(comm, "ncclDevCommDestroy"))
    return r;
  return notServed(comm, "ncclDevCommDestroy (NCCL's device API)");
}

NCCL_API ncclResult_t ncclGroupStart(void) {
  ++groupDepth;
  std::string ignored;
  if (const RealNccl *real = realNccl(ignored))
    return real->groupStart();
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclGroupEnd(void) {
  if (groupDepth == 0)
    return fail(nullptr, ncclInvalidUsage,
                "ncclGroupEnd: no ncclGroupStart is open");
  --groupDepth;
  // The group's collectives and its sends and receives on sdma, then the
  // fallback's calls.
  if (groupDepth == 0) {
    ncclResult_t r = endGroupCalls(true);
    if (r != ncclSuccess)
      endGroupPeerOps(false); // nothing more of a failed group runs
    else
      r = endGroupPeerOps(true);
    if (r != ncclSuccess) {
      std::string ignored;
      if (const RealNccl *real = realNccl(ignored))
        real->groupEnd();
      return r;
    }
  }
  std::string ignored;
  if (const RealNccl *real = realNccl(ignored))
    if (ncclResult_t r = real->groupEnd())
      return fail(nullptr, r,
                  std::string("the fallback NCCL's ncclGroupEnd: ") +
                      real->getLastError(nullptr));
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
  if (groupDepth == 0)
    return fail(nullptr, ncclInvalidUsage,
                "ncclGroupSimulateEnd: no ncclGroupStart is open");
  --groupDepth;
  // Nothing runs: the group's collectives, sends and receives are dropped.
  if (groupDepth == 0) {
    endGroupCalls(false);
    endGroupPeerOps(false);
  }
  if (simInfo)
    simInfo->estimatedTime = -1.0f; // NCCL_UNDEF_FLOAT: not estimated
  return ncclSuccess;
}
