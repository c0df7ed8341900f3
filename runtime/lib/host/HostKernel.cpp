//===- HostKernel.cpp - a kernel built by the host compiler ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/HostKernel.h"

#include "compile/KernelCache.h"
#include "exec/FileBytes.h"
#include "host/Subprocess.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <optional>
#include <unistd.h>

using namespace sdma::rt;

namespace {

// The SDMA_* macros on host threads. One host thread per GPU thread; a
// block's threads meet at a pthread barrier. C headers only: the C++
// library's <thread>, <barrier> and <chrono> took 85% of a kernel's compile.
const char *const kHostPrelude = R"SDMA(
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
// Each host thread's own (set inside its body): launches of two kernels of
// one object (two communicators of one process) may run at once.
static thread_local unsigned sdma_ntid, sdma_nbid;
static thread_local unsigned sdma_tid, sdma_bid, sdma_bid_y;
static thread_local pthread_barrier_t *sdma_barrier;
#define SDMA_MAX_THREADS 512
#define SDMA_GRID_CONSTANT
#define __global__
#define __device__
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define SDMA_TID sdma_tid
#define SDMA_NTID sdma_ntid
#define SDMA_BID sdma_bid
#define SDMA_NBID sdma_nbid
#define SDMA_BID_Y sdma_bid_y
#define SDMA_SYNC() pthread_barrier_wait(sdma_barrier)
// Warp runs (LdstPhases.hip) of two lanes, so that the CPU device's few
// threads per block take that path too.
#define SDMA_SPAN_LANES 2
// A spinning host thread gives its core to the threads it waits for (more
// threads than cores: every GPU thread is one).
#define SDMA_SPIN_PAUSE() sched_yield()
// A kernel built for one chunk size, run with another (never by the
// runtime): stop loudly.
#define SDMA_TRAP() abort()
// Shared memory: one scratch area per block.
static thread_local unsigned char *sdma_scratch;
static constexpr size_t sdma_scratch_bytes = 64 * 1024;
#define SDMA_BLOCK_SHARED(type, name, count)                                   \
  static_assert(sizeof(type) * (count) <= sdma_scratch_bytes, "scratch");      \
  type *name = reinterpret_cast<type *>(sdma_scratch)
#define SDMA_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define SDMA_FENCE_SYSTEM() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define SDMA_ATOMIC_ADD_U32(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define SDMA_ATOMIC_ADD_SYSTEM_U64(p, v)                                       \
  __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
static inline unsigned long long sdma_cas(unsigned long long *p,
                                          unsigned long long c,
                                          unsigned long long v) {
  __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
  return c;
}
#define SDMA_ATOMIC_CAS_U64(p, c, v) sdma_cas((p), (c), (v))
static inline unsigned long long SDMA_NOW_NS() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000000ull + now.tv_nsec;
}
// Runs body() on a grid of blocksX x blocksY groups of `threads` host
// threads, each thread's sdma_tid/sdma_bid/sdma_bid_y/sdma_ntid/sdma_nbid set
// as a GPU sets them (x varies fastest); a group's threads share a barrier
// and a 16-byte aligned scratch area. No body runs
// until every thread has started: if one cannot be started, none runs and
// the error number comes back (0: all ran).
struct SdmaHostGroup {
  pthread_barrier_t barrier;
  unsigned char *scratch;
};
struct SdmaHostGate {
  pthread_rwlock_t lock; // held for writing until every thread exists
  int go;
};
template <class Body> struct SdmaHostThread {
  Body *body;
  SdmaHostGroup *group;
  SdmaHostGate *gate;
  int g, t, blocksX, threads;
  pthread_t id;
};
template <class Body> static void *sdma_host_thread(void *arg) {
  SdmaHostThread<Body> *w = static_cast<SdmaHostThread<Body> *>(arg);
  pthread_rwlock_rdlock(&w->gate->lock);
  pthread_rwlock_unlock(&w->gate->lock);
  if (w->gate->go) {
    sdma_barrier = &w->group->barrier;
    sdma_scratch = w->group->scratch;
    sdma_ntid = w->threads;
    sdma_nbid = w->blocksX;
    sdma_tid = w->t;
    sdma_bid = w->g % w->blocksX;
    sdma_bid_y = w->g / w->blocksX;
    (*w->body)();
  }
  return nullptr;
}
template <class Body>
static int sdma_host_launch(int blocksX, int blocksY, int threads,
                            Body body) {
  const int groups = blocksX * blocksY;
  const size_t n = size_t(groups) * threads;
  SdmaHostGroup *group =
      static_cast<SdmaHostGroup *>(calloc(groups, sizeof(SdmaHostGroup)));
  SdmaHostThread<Body> *work = static_cast<SdmaHostThread<Body> *>(
      calloc(n, sizeof(SdmaHostThread<Body>)));
  void **raw = static_cast<void **>(calloc(groups, sizeof(void *)));
  int status = group && work && raw ? 0 : ENOMEM;
  int barriers = 0;
  for (; !status && barriers < groups; ++barriers) {
    // 16-byte aligned, as shared memory is.
    raw[barriers] = malloc(sdma_scratch_bytes + 16);
    status = raw[barriers] ? pthread_barrier_init(&group[barriers].barrier,
                                                  nullptr, threads)
                           : ENOMEM;
    if (status)
      break;
    group[barriers].scratch = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(raw[barriers]) + 15) & ~uintptr_t(15));
  }
  SdmaHostGate gate;
  gate.go = 0;
  pthread_rwlock_init(&gate.lock, nullptr);
  pthread_rwlock_wrlock(&gate.lock);
  size_t started = 0;
  for (; !status && started < n; ++started) {
    SdmaHostThread<Body> &w = work[started];
    w.body = &body;
    w.group = &group[started / threads];
    w.gate = &gate;
    w.g = int(started / threads);
    w.t = int(started % threads);
    w.blocksX = blocksX;
    w.threads = threads;
    status = pthread_create(&w.id, nullptr, sdma_host_thread<Body>, &w);
    if (status)
      break;
  }
  gate.go = !status;
  pthread_rwlock_unlock(&gate.lock);
  for (size_t i = 0; i < started; ++i)
    pthread_join(work[i].id, nullptr);
  pthread_rwlock_destroy(&gate.lock);
  for (int g = 0; g < groups && raw; ++g) {
    if (g < barriers)
      pthread_barrier_destroy(&group[g].barrier);
    free(raw[g]);
  }
  free(raw);
  free(work);
  free(group);
  return status;
}
)SDMA";

/// Compiles `text` into a shared object and dlopen's it (HostKernel::build).
/// A cached object is dlopen'ed only from a trusted directory and after
/// KernelCache::verifyObject has checked it (a dlopen runs the object's
/// constructors: nothing unverified may reach it); a bad one is removed and
/// rebuilt.
void *compileHostObject(const std::string &text, std::string compiler,
                        const std::string &cacheDirectory,
                        const std::string &what, std::string &error) {
  auto load = [&](const std::string &path) -> void * {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      error =
          "loading " + what + " compiled for the host: " + (why ? why : "?");
    }
    return handle;
  };
  int64_t timeoutMs = 0;
  if (!compileTimeoutMs(timeoutMs, error))
    return nullptr;
  if (compiler.empty()) {
    const char *env = std::getenv("SDMA_HOST_CXX");
    compiler = env && *env ? env : "c++";
  }
  // No fused multiply-adds: a product rounds on its own, as the GPU
  // kernels' (LdstReduce.hip's sdma_mul) do.
  const std::string flags = " -std=c++20 -O1 -shared -fPIC -pthread "
                            "-ffp-contract=off -Wno-unknown-pragmas";
  // A cached object: the processes of a job, and later runs, compile once.
  // An empty directory keeps nothing; a refused one (KernelCache says why,
  // on stderr) likewise.
  const uint64_t key = hashBytes(text + compiler + flags);
  // SDMA_HOST_OBJECT_DIR: one directory for the objects of jobs whose
  // caches differ (the test suite's jobs each have their own cache, and
  // compile the same kernels).
  const char *shared = std::getenv("SDMA_HOST_OBJECT_DIR");
  const std::string directory = shared && *shared ? shared : cacheDirectory;
  std::optional<KernelCache> cache;
  if (!directory.empty()) {
    cache.emplace(directory);
    if (!cache->enabled())
      cache.reset();
  }
  if (cache && cache->verifyObject(key) == KernelCache::Lookup::Hit)
    if (void *handle = load(cache->objectPath(key)))
      return handle;
  // One process of a job compiles; the others wait on the lock (as long as
  // a compile may take) and find the object (released when this function
  // returns).
  std::string lockPath = cache ? cache->objectPath(key) + ".lock" : "";
  int lockFd = cache ? open(lockPath.c_str(),
                            O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600)
                     : -1;
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0)
        close(fd);
    }
  } unlock{lockFd};
  if (lockFd >= 0 && !lockWithin(lockFd, lockPath, timeoutMs, error)) {
    error = "compiling " + what + " for the host: " + error;
    return nullptr;
  }
  if (lockFd >= 0 && cache->verifyObject(key) == KernelCache::Lookup::Hit)
    if (void *handle = load(cache->objectPath(key)))
      return handle;
  char dir[] = "/tmp/sdma-host-XXXXXX";
  if (!mkdtemp(dir)) {
    error = "cannot create a temporary directory in /tmp";
    return nullptr;
  }
  char name[32];
  std::snprintf(name, sizeof(name), "/host-%016llx.so",
                static_cast<unsigned long long>(key));
  std::string source = std::string(dir) + "/kernel.cpp";
  // Named by the key: the loader takes an object of a name it has loaded
  // for that object, and the same key is the same object.
  std::string object = std::string(dir) + name;
  std::string log = std::string(dir) + "/compile.log";
  auto cleanUp = [&] {
    std::remove(source.c_str());
    std::remove(object.c_str());
    std::remove(log.c_str());
    rmdir(dir);
  };
  {
    std::ofstream out(source);
    out << text;
    if (!out) {
      cleanUp();
      error = "cannot write " + source;
      return nullptr;
    }
  }
  std::string command =
      compiler + flags + " -o " + object + " " + source + " > " + log + " 2>&1";
  std::string how;
  if (!runCommand(command, timeoutMs, how)) {
    std::string output;
    readFileBytes(log, output);
    cleanUp();
    error = "compiling " + what + " for the host (" + compiler +
            ") failed: " + how + (output.empty() ? "" : ":\n" + output);
    return nullptr;
  }
  // Into the cache with its trailer, atomically (a concurrent process finds
  // either no file or a whole one), under the lock.
  std::string bytes;
  bool inCache = cache && readFileBytes(object, bytes) && !bytes.empty() &&
                 cache->putObject(key, bytes);
  void *handle = load(inCache ? cache->objectPath(key) : object);
  cleanUp(); // a loaded object stays mapped after its file is gone
  return handle;
}

} // namespace

std::unique_ptr<HostKernel> HostKernel::build(const std::string &text,
                                              std::string compiler,
                                              const std::string &cacheDirectory,
                                              const std::string &what,
                                              std::string &error) {
  void *handle =
      compileHostObject(std::string(kHostPrelude) + text, std::move(compiler),
                        cacheDirectory, what, error);
  if (!handle)
    return nullptr;
  return std::unique_ptr<HostKernel>(new HostKernel(handle));
}

HostKernel::~HostKernel() { dlclose(handle_); }

void *HostKernel::symbol(const char *name, std::string &error) const {
  dlerror();
  void *address = dlsym(handle_, name);
  if (!address) {
    const char *why = dlerror();
    error = why ? why : "?";
  }
  return address;
}
