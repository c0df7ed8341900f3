//===- ShimFallback.cpp - the real NCCL for what sdma does not serve ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "ShimFallback.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace sdma::nccl;

namespace {

template <typename Fn> bool find(void *lib, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

bool asFallback = false;

} // namespace

bool sdma::nccl::isFallback() { return asFallback; }

/// Called by a drop-in that loads this library as its fallback.
extern "C" __attribute__((visibility("default"))) void sdmaNcclAsFallback() {
  asFallback = true;
}

const RealNccl *sdma::nccl::realNccl(std::string &error) {
  static std::mutex m;
  static bool tried = false;
  static RealNccl real;
  static std::string why;
  static const RealNccl *loaded = nullptr;
  std::lock_guard<std::mutex> lock(m);
  if (asFallback)
    return error.clear(), nullptr;
  if (!tried) {
    tried = true;
    const char *path = std::getenv("SDMA_NCCL_FALLBACK");
    if (path && *path) {
      // Its own exported names bound inside it (RTLD_DEEPBIND), not to the
      // drop-in that was preloaded in front of it.
      void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!lib) {
        const char *e = dlerror();
        why = std::string("SDMA_NCCL_FALLBACK=") + path +
              " cannot be loaded: " + (e ? e : "?");
      } else if (!find(lib, "ncclGetUniqueId", real.getUniqueId) ||
                 !find(lib, "ncclCommInitRankConfig",
                       real.commInitRankConfig) ||
                 !find(lib, "ncclCommDestroy", real.commDestroy) ||
                 !find(lib, "ncclCommAbort", real.commAbort) ||
                 !find(lib, "ncclCommGetAsyncError", real.commGetAsyncError) ||
                 !find(lib, "ncclGroupStart", real.groupStart) ||
                 !find(lib, "ncclGroupEnd", real.groupEnd) ||
                 !find(lib, "ncclGetLastError", real.getLastError) ||
                 !find(lib, "ncclSend", real.send) ||
                 !find(lib, "ncclRecv", real.recv)) {
        why = std::string("SDMA_NCCL_FALLBACK=") + path +
              " is not an NCCL library (no ncclGetUniqueId, "
              "ncclCommInitRankConfig, ...)";
      } else if (reinterpret_cast<void *>(real.getUniqueId) ==
                 dlsym(RTLD_DEFAULT, "ncclGetUniqueId")) {
        why = std::string("SDMA_NCCL_FALLBACK=") + path +
              " is sdma's drop-in itself, not the real NCCL";
      } else {
        // A copy of sdma's drop-in standing in for the real NCCL stays
        // on one node, without a fallback of its own.
        if (auto mark =
                reinterpret_cast<void (*)()>(dlsym(lib, "sdmaNcclAsFallback")))
          mark();
        loaded = &real;
      }
    }
  }
  error = why;
  return loaded;
}

ncclConfig_t *sdma::nccl::blockingConfig(const ncclConfig_t *config,
                                         ncclConfig_t &copy) {
  if (!config)
    return nullptr;
  copy = *config;
  copy.blocking = 1; // the drop-in's init finishes before it returns
  return &copy;
}

ncclResult_t sdma::nccl::attachReal(ncclComm_t comm,
                                    const ncclConfig_t *config) {
  std::string why;
  const RealNccl *real = realNccl(why);
  if (!why.empty())
    return fail(nullptr, ncclInvalidUsage, why);
  if (!real)
    return ncclSuccess;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (comm->rank == 0)
    if (ncclResult_t r = real->getUniqueId(&id))
      return fail(nullptr, r,
                  std::string("the fallback NCCL's ncclGetUniqueId: ") +
                      real->getLastError(nullptr));
  if (ncclResult_t r =
          ncclBroadcast(&id, &id, sizeof(id), ncclUint8, 0, comm, nullptr))
    return fail(nullptr, r,
                "broadcasting the fallback NCCL's id: " + comm->error);
  ncclConfig_t copy;
  ncclConfig_t *realConfig = blockingConfig(config, copy);
  if (ncclResult_t r = real->commInitRankConfig(&comm->real, comm->nranks, id,
                                                comm->rank, realConfig))
    return fail(nullptr, r,
                std::string("the fallback NCCL's ncclCommInitRankConfig: ") +
                    real->getLastError(nullptr));
  logPath("fallback", "the real NCCL beside sdma (SDMA_NCCL_FALLBACK)");
  return ncclSuccess;
}
