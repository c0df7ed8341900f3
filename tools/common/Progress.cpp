//===- Progress.cpp - progress lines for long runs ------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace sdma;

ProgressLines::ProgressLines(llvm::StringRef tool,
                             std::chrono::milliseconds quiet)
    : tool(tool.str()), start(std::chrono::steady_clock::now()), quiet(quiet),
      watcher([this] { watch(); }) {}

ProgressLines::~ProgressLines() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  changed.notify_one();
  watcher.join();
}

void ProgressLines::step(llvm::StringRef what) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    current = what.str();
    printed = false;
  }
  changed.notify_one();
}

void ProgressLines::watch() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!done) {
    auto now = std::chrono::steady_clock::now();
    if (!printed && now - start >= quiet) {
      double seconds = std::chrono::duration<double>(now - start).count();
      std::string line;
      llvm::raw_string_ostream os(line);
      os << tool << ": [" << llvm::format("%.1f", seconds) << " s] " << current
         << " ...\n";
      // One write per line: the main thread may write to stderr too.
      std::fputs(line.c_str(), stderr);
      printed = true;
    }
    if (printed)
      changed.wait(lock);
    else
      changed.wait_until(lock, start + quiet);
  }
}
