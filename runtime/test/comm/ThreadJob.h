//===- ThreadJob.h - ranks as threads on the CPU device ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A job whose ranks are threads of the test, each with its own
// Communicator on the CPU device (its own heap segment and kernels),
// exactly as processes would be.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TEST_COMM_THREADJOB_H
#define SDMA_RUNTIME_TEST_COMM_THREADJOB_H

#include "sdma/runtime/Communicator.h"

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace sdma::rt::test {

/// A temporary directory, removed at the end of the test.
struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/sdma-cpucomm-test-XXXXXX";
    path = mkdtemp(pattern) ? pattern : "";
  }
  ~TempDir() {
    std::string command = "rm -rf '" + path + "'";
    (void)std::system(command.c_str());
  }
  std::string path;
};

/// Runs `body(comm, rank)` on `ranks` threads, each a rank of one job on
/// the CPU device, each rank's options set by `configure(options, rank)`;
/// returns each rank's error ("" for none).
inline std::vector<std::string>
job(int ranks, size_t heapBytes,
    const std::function<bool(Communicator &, int, Error &)> &body,
    const std::function<void(CommOptions &, int)> &configure = nullptr) {
  std::vector<std::string> errors(ranks);
  UniqueId id;
  Error error;
  if (!createUniqueId(id, error))
    return std::vector<std::string>(ranks, error.message);
  TempDir cache;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      CommOptions options;
      options.device = "cpu";
      options.heapBytes = heapBytes;
      options.timeoutMs = 20000;
      options.cpuThreads = 2;
      options.cacheDirectory = cache.path;
      if (configure)
        configure(options, r);
      Error e;
      auto comm = Communicator::create(id, r, ranks, options, e);
      if (!comm)
        errors[r] = "create: " + e.message;
      else if (!body(*comm, r, e))
        errors[r] = e.empty() ? "failed" : e.message;
    });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

} // namespace sdma::rt::test

#endif // SDMA_RUNTIME_TEST_COMM_THREADJOB_H
