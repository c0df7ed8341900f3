//===- Progress.h - progress lines for long runs ----------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A quick run prints nothing; once a run has lasted about two seconds, the
// step under way and every later one get a line on stderr
// (`sdma-run: [2.1 s] running 16 MiB ...`), so that a long compile or a
// slow backend is visibly working rather than hung.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TOOLS_COMMON_PROGRESS_H
#define SDMA_TOOLS_COMMON_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace sdma {

class ProgressLines {
public:
  /// Lines start once the run has lasted `quiet`.
  explicit ProgressLines(
      llvm::StringRef tool,
      std::chrono::milliseconds quiet = std::chrono::milliseconds(2000));
  ~ProgressLines();
  ProgressLines(const ProgressLines &) = delete;
  ProgressLines &operator=(const ProgressLines &) = delete;

  /// The run now does `what` (e.g. "compiling variant b2b").
  void step(llvm::StringRef what);

private:
  void watch();

  std::string tool;
  std::chrono::steady_clock::time_point start;
  std::chrono::milliseconds quiet;
  std::mutex mutex;
  std::condition_variable changed;
  std::string current;
  bool printed = true;
  bool done = false;
  std::thread watcher;
};

} // namespace sdma

#endif // SDMA_TOOLS_COMMON_PROGRESS_H
