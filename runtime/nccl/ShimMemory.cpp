//===- ShimMemory.cpp - the drop-in's memory: allocation, registration ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// ncclMemAlloc/ncclMemFree (device memory, or on the CPU device shared
// host memory a peer can map), ncclCommRegister (accepted: buffers are
// staged) and windows (sdma's collective registration: collectives on
// them run in place).
//
//===----------------------------------------------------------------------===//

#include "Shim.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace sdma::nccl;

#define NCCL_API extern "C" __attribute__((visibility("default")))

namespace {

/// The CPU device's ncclMemAlloc: POSIX shared memory, named as the CPU
/// device names its own segments (sdma-<16 hex>-<pid>-<rank>-<n>, so a
/// dead process's are found stale and removed), mapped and kept named
/// until ncclMemFree, so that a window over it can be shared with peers
/// (the CPU device shares any mapping of such a segment).
struct HostAllocation {
  std::string name;
  size_t bytes = 0;
};
std::mutex allocationsMutex;
std::map<void *, HostAllocation> &hostAllocations() {
  static std::map<void *, HostAllocation> allocations;
  return allocations;
}

void *allocateShared(size_t bytes, std::string &name) {
  static std::atomic<int> counter{0};
  name = "/sdma-6e63636c00000000-" + std::to_string(getpid()) + "-0-" +
         std::to_string(counter++);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    return nullptr;
  void *p =
      ftruncate(fd, off_t(bytes)) != 0
          ? MAP_FAILED
          : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    return nullptr;
  }
  return p;
}

} // namespace

NCCL_API ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (!ptr)
    return fail(nullptr, ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
  *ptr = nullptr;
  if (deviceIsCpu()) {
    HostAllocation a;
    a.bytes = size ? size : 1;
    void *p = allocateShared(a.bytes, a.name);
    if (!p)
      return fail(nullptr, ncclSystemError,
                  "ncclMemAlloc: " + std::to_string(size) +
                      " bytes of shared host memory (SDMA_DEVICE=cpu) not "
                      "available: " +
                      std::strerror(errno));
    std::lock_guard<std::mutex> lock(allocationsMutex);
    hostAllocations()[p] = a;
    *ptr = p;
    return ncclSuccess;
  }
  const Cuda *cuda = Cuda::get();
  if (!cuda)
    return fail(nullptr, ncclSystemError,
                "ncclMemAlloc: no CUDA driver (libcuda.so.1); SDMA_DEVICE=cpu "
                "runs on the host");
  unsigned long long p = 0;
  if (int r = cuda->memAlloc(&p, size ? size : 1))
    return fail(nullptr, ncclUnhandledCudaError,
                "ncclMemAlloc: cuMemAlloc of " + std::to_string(size) +
                    " bytes failed (CUresult " + std::to_string(r) + ")");
  *ptr = reinterpret_cast<void *>(p);
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclMemFree(void *ptr) {
  if (!ptr)
    return ncclSuccess;
  {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    auto it = hostAllocations().find(ptr);
    if (it != hostAllocations().end()) {
      munmap(ptr, it->second.bytes);
      shm_unlink(it->second.name.c_str());
      hostAllocations().erase(it);
      return ncclSuccess;
    }
  }
  const Cuda *cuda = deviceIsCpu() ? nullptr : Cuda::get();
  if (!cuda)
    return fail(nullptr, ncclInvalidArgument,
                "ncclMemFree: not a pointer ncclMemAlloc returned");
  if (int r = cuda->memFree(reinterpret_cast<unsigned long long>(ptr)))
    return fail(nullptr, ncclUnhandledCudaError,
                "ncclMemFree: cuMemFree failed (CUresult " + std::to_string(r) +
                    ")");
  return ncclSuccess;
}

// Registration is an optimisation in NCCL: a registered buffer must work
// in collectives, as every buffer does here (staged). The handle is the
// buffer; nothing is shared yet.
NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff,
                                       size_t, void **handle) {
  if (ncclResult_t r = checkComm(comm, "ncclCommRegister"))
    return r;
  if (!handle)
    return fail(comm, ncclInvalidArgument, "ncclCommRegister: handle is NULL");
  *handle = buff;
  logPath("CommRegister", "accepted (buffers are staged; nothing registered)");
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *) {
  return checkComm(comm, "ncclCommDeregister");
}

// A window is sdma's registration of the buffer (collective, as NCCL's):
// every rank's window is then symmetric memory (sdmaMemRegister; the
// window is its handle), and a collective whose buffers lie in windows runs
// on them without staging (ShimCollectives.cpp).
NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff,
                                             size_t size, ncclWindow_t *win,
                                             int) {
  std::shared_ptr<ncclComm> keep = acquire(comm);
  if (!keep)
    return checkComm(comm, "ncclCommWindowRegister");
  if (!win)
    return fail(comm, ncclInvalidArgument,
                "ncclCommWindowRegister: win is NULL");
  *win = nullptr;
  std::lock_guard<std::mutex> lock(comm->mutex);
  void *handle = nullptr;
  if (sdmaResult_t r = sdmaMemRegister(comm->sdma, buff, size, &handle))
    return fromSdma(comm, r);
  *win = static_cast<ncclWindow_t>(handle);
  logPath("CommWindowRegister",
          "sdma (registered: collectives on it run in place)");
  return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm,
                                               ncclWindow_t win) {
  std::shared_ptr<ncclComm> keep = acquire(comm);
  if (!keep)
    return checkComm(comm, "ncclCommWindowDeregister");
  std::lock_guard<std::mutex> lock(comm->mutex);
  return fromSdma(comm, sdmaMemDeregister(comm->sdma, win));
}
