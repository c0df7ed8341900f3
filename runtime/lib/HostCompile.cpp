//===- HostCompile.cpp - generated kernels compiled for the host CPU ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "HostCompile.h"
#include "KernelCache.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sys/file.h>
#include <unistd.h>

// The SDMA_* macros on host threads. One host thread per GPU thread; a
// block's threads meet at a std::barrier.
const char *const sdma::rt::kHostPrelude = R"SDMA(
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>
static unsigned sdma_ntid, sdma_nbid;
static thread_local unsigned sdma_tid, sdma_bid, sdma_bid_y;
static thread_local std::barrier<> *sdma_barrier;
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
#define SDMA_SYNC() sdma_barrier->arrive_and_wait()
// A spinning host thread gives its core to the threads it waits for (more
// threads than cores: every GPU thread is one).
#define SDMA_SPIN_PAUSE() std::this_thread::yield()
// Shared memory: one scratch area per block.
static thread_local unsigned char *sdma_scratch;
static constexpr size_t sdma_scratch_bytes = 64 * 1024;
#define SDMA_BLOCK_SHARED(type, name, count)                                   \
  static_assert(sizeof(type) * (count) <= sdma_scratch_bytes, "scratch");      \
  type *name = reinterpret_cast<type *>(sdma_scratch)
#define SDMA_FENCE() std::atomic_thread_fence(std::memory_order_seq_cst)
#define SDMA_FENCE_SYSTEM() std::atomic_thread_fence(std::memory_order_seq_cst)
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
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
)SDMA";

void *sdma::rt::compileHostObject(const std::string &text, std::string compiler,
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
  if (compiler.empty()) {
    const char *env = std::getenv("SDMA_HOST_CXX");
    compiler = env && *env ? env : "c++";
  }
  const std::string flags = " -std=c++20 -O1 -shared -fPIC -pthread "
                            "-Wno-unknown-pragmas";
  // A cached object: the processes of a job, and later runs, compile once.
  std::string cached;
  if (!cacheDirectory.empty()) {
    char key[32];
    std::snprintf(key, sizeof(key), "%016llx",
                  (unsigned long long)hashBytes(text + compiler + flags));
    cached = cacheDirectory + "/host-" + key + ".so";
  }
  if (!cached.empty() && access(cached.c_str(), R_OK) == 0)
    return load(cached);
  // One process of a job compiles; the others wait on the lock and find
  // the object (released when this function returns).
  int lockFd = cached.empty()
                   ? -1
                   : open((cached + ".lock").c_str(), O_CREAT | O_RDWR, 0600);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0)
        close(fd);
    }
  } unlock{lockFd};
  if (lockFd >= 0 && flock(lockFd, LOCK_EX) == 0 &&
      access(cached.c_str(), R_OK) == 0)
    return load(cached);
  char dir[] = "/tmp/sdma-host-XXXXXX";
  if (!mkdtemp(dir)) {
    error = "cannot create a temporary directory in /tmp";
    return nullptr;
  }
  std::string source = std::string(dir) + "/kernel.cpp";
  std::string object = std::string(dir) + "/kernel.so";
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
  if (std::system(command.c_str()) != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    cleanUp();
    error = "compiling " + what + " for the host (" + compiler + ") failed:\n" +
            text;
    return nullptr;
  }
  // Into the cache by rename (atomic: a concurrent process finds either
  // no file or a whole one).
  bool inCache =
      !cached.empty() && std::rename(object.c_str(), cached.c_str()) == 0;
  void *handle = load(inCache ? cached : object);
  cleanUp(); // a loaded object stays mapped after its file is gone
  return handle;
}
