//===- sdma-precompile.cpp - the communicator's programs, ahead of time ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-precompile --ranks=N[,N...] DIR [SCHEDULE.mlir...]
//
// Compiles every built-in collective's load/store program (every root of
// the rooted ones) and each SCHEDULE given for each rank count through the
// compiler library and writes them as DIR/<name>-<ranks>.hip (a schedule's
// name: its file name without ".mlir"): what a communicator loads where
// the compiler library is not installed (SDMA_PROGRAM_DIR=DIR), e.g. a GPU
// node without LLVM; sdmaScheduleLoad of a schedule's path finds its
// program by that name.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Communicator.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace sdma::rt;

int main(int argc, char **argv) {
  std::vector<int> ranks;
  std::string dir;
  std::vector<std::string> schedules;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--ranks=", 0) == 0) {
      for (const char *p = a.c_str() + 8; *p;) {
        char *end = nullptr;
        long n = std::strtol(p, &end, 10);
        if (end == p || n < 1 || n > 1024) {
          std::fprintf(stderr, "sdma-precompile: bad rank count in %s\n",
                       a.c_str());
          return 2;
        }
        ranks.push_back(static_cast<int>(n));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (a == "--help" || a == "-h") {
      std::puts("usage: sdma-precompile --ranks=N[,N...] DIR "
                "[SCHEDULE.mlir...]\n"
                "Writes the communicator's built-in programs and each "
                "SCHEDULE's as DIR/<name>-<ranks>.hip.");
      return 0;
    } else if (dir.empty() && a[0] != '-') {
      dir = a;
    } else if (a[0] != '-') {
      schedules.push_back(a);
    } else {
      std::fprintf(stderr, "sdma-precompile: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (ranks.empty() || dir.empty()) {
    std::fputs("usage: sdma-precompile --ranks=N[,N...] DIR "
               "[SCHEDULE.mlir...]\n",
               stderr);
    return 2;
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "sdma-precompile: cannot create %s: %s\n", dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  for (int r : ranks) {
    Error error;
    if (!Communicator::precompile(dir, r, schedules, CommOptions(), error)) {
      std::fprintf(stderr, "sdma-precompile: error: %s\n",
                   error.message.c_str());
      return 1;
    }
  }
  return 0;
}
