//===- sdma-precompile.cpp - the communicator's programs, ahead of time ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-precompile --ranks=N[,N...] [--dma-variants=V[,V...]]
//                        [--dma-packets=TARGET]
//                        [--experts=E[,E...] [--major-align=A]] DIR
//                        [SCHEDULE.mlir...]
//
// Compiles every built-in collective's load/store program (every root of
// the rooted ones) and each SCHEDULE given for each rank count through the
// compiler library and writes them as DIR/<name>-<ranks>.hip (a schedule's
// name: its file name without ".mlir"), and, where the schedule has one,
// its DMA plan in each variant (default pcpy) as
// DIR/<name>-<ranks>.<variant>.plan.json, with --dma-packets its SDMA
// packets for TARGET (gfx9, gfx942, gfx950; kernel submission,
// SDMA_DMA_SUBMIT=kernel) as
// DIR/<name>-<ranks>.<variant>.<TARGET>.packets.json: what a communicator loads
// where the compiler library is not installed (SDMA_PROGRAM_DIR=DIR), e.g. a
// GPU node without LLVM; sdmaScheduleLoad of a schedule's path finds its
// program by that name.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Communicator.h"
#include "sdma/runtime/MultiNode.h"

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
  std::vector<std::string> schedules, variants;
  std::string packetTarget;
  int localRanks = 0, majorAlign = 1;
  std::vector<int> experts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--experts=", 0) == 0 || a.rfind("--major-align=", 0) == 0) {
      bool list = a[2] == 'e';
      for (const char *p = a.c_str() + (list ? 10 : 14); *p;) {
        char *end = nullptr;
        long n = std::strtol(p, &end, 10);
        if (end == p || n < 1 || n > (list ? 1024 : 1 << 20) ||
            (!list && *end)) {
          std::fprintf(stderr, "sdma-precompile: bad %s in %s\n",
                       list ? "expert count" : "alignment", a.c_str());
          return 2;
        }
        if (list)
          experts.push_back(static_cast<int>(n));
        else
          majorAlign = static_cast<int>(n);
        p = *end == ',' ? end + 1 : end;
      }
      continue;
    }
    if (a.rfind("--dma-packets=", 0) == 0) {
      packetTarget = a.substr(14);
      if (packetTarget != "gfx9" && packetTarget != "gfx942" &&
          packetTarget != "gfx950") {
        std::fprintf(stderr,
                     "sdma-precompile: unknown SDMA packet target '%s' in %s "
                     "(gfx9, gfx942 or gfx950)\n",
                     packetTarget.c_str(), a.c_str());
        return 2;
      }
      continue;
    }
    if (a.rfind("--dma-variants=", 0) == 0) {
      std::string list = a.substr(15) + ",";
      for (size_t at = 0, comma;
           (comma = list.find(',', at)) != std::string::npos; at = comma + 1) {
        std::string v = list.substr(at, comma - at);
        if (v != "pcpy" && v != "b2b" && v != "bcst" && v != "swap") {
          std::fprintf(stderr,
                       "sdma-precompile: unknown DMA variant '%s' in %s "
                       "(pcpy, b2b, bcst or swap)\n",
                       v.c_str(), a.c_str());
          return 2;
        }
        variants.push_back(v);
      }
    } else if (a.rfind("--local-ranks=", 0) == 0) {
      char *end = nullptr;
      long g = std::strtol(a.c_str() + 14, &end, 10);
      if (*end || g < 1 || g > 1024) {
        std::fprintf(stderr, "sdma-precompile: bad ranks per node in %s\n",
                     a.c_str());
        return 2;
      }
      localRanks = static_cast<int>(g);
    } else if (a.rfind("--ranks=", 0) == 0) {
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
      std::puts("usage: sdma-precompile --ranks=N[,N...] "
                "[--dma-variants=V[,V...]] [--dma-packets=TARGET] "
                "[--experts=E[,E...] "
                "[--major-align=A]] DIR [SCHEDULE.mlir...]\n"
                "       sdma-precompile --ranks=N[,N...] --local-ranks=G DIR "
                "[HIERARCHICAL.mlir...]\n"
                "Writes the communicator's built-in programs and each "
                "SCHEDULE's as DIR/<name>-<ranks>.hip, and their DMA plans\n"
                "(variants pcpy, b2b, bcst, swap; default pcpy) as "
                "DIR/<name>-<ranks>.<variant>.plan.json; with --dma-packets, "
                "their SDMA packets for\nTARGET (gfx9, gfx942, gfx950: "
                "SDMA_DMA_SUBMIT=kernel) as\n"
                "DIR/<name>-<ranks>.<variant>.<TARGET>.packets.json. With "
                "--local-ranks,\n"
                "the node plans of the built-in hierarchical schedules and of "
                "each HIERARCHICAL one\nfor N ranks of G per node instead, "
                "as DIR/<name>-<ranks>.<G>.node-plan.json (multi-node jobs).\n"
                "With --experts, the MoE all-to-allvs (all_to_allv_2d and "
                "its _offset) for E local\nexperts per rank, the dispatch "
                "padded to A rows (default 1), as\n"
                "DIR/all_to_allv_2d_eE_aA-<ranks>.hip.");
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
  if (variants.empty())
    variants.push_back("pcpy");
  if (localRanks) {
    for (int r : ranks) {
      Error error;
      if (!MultiNodeComm::precompile(dir, r, localRanks, schedules,
                                     CommOptions(), error)) {
        std::fprintf(stderr, "sdma-precompile: error: %s\n",
                     error.message.c_str());
        return 1;
      }
    }
    return 0;
  }
  for (int r : ranks)
    for (const std::string &variant : variants) {
      CommOptions options;
      options.dmaVariant = variant;
      if (!packetTarget.empty()) {
        options.dmaSubmit = "kernel";
        options.dmaPacketTarget = packetTarget;
      }
      Error error;
      if (!Communicator::precompile(dir, r, schedules, options, error, experts,
                                    majorAlign)) {
        std::fprintf(stderr, "sdma-precompile: error: %s\n",
                     error.message.c_str());
        return 1;
      }
    }
  return 0;
}
