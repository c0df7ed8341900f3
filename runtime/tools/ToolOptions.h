//===- ToolOptions.h - what every runtime tool's command line shares -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// -h/--help (the usage, every option with its default; exit 0), --version
// (sdma's version and the formats it reads; exit 0), --memory-budget=N
// (bytes, K/M/G/T suffixes; default SDMA_MEMORY_BUDGET, else half of
// physical memory), and the one-line error for an unknown option (exit 2).
// Header only: each tool is one file.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TOOLS_TOOLOPTIONS_H
#define SDMA_RUNTIME_TOOLS_TOOLOPTIONS_H

#include "sdma/runtime/MemoryBudget.h"
#include "sdma/runtime/Version.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace sdma::tool {

/// Exit status of a command-line mistake (unknown option, bad value).
constexpr int kUsageError = 2;

/// The lines every tool's --help ends with.
inline std::string commonHelp() {
  return "  --memory-budget=BYTES  refuse runs that would allocate more "
         "(K/M/G/T suffixes;\n"
         "                         default: $SDMA_MEMORY_BUDGET, else half "
         "of physical\n"
         "                         memory: " +
         rt::MemoryBudget::describe(rt::MemoryBudget::defaultBytes()) +
         ")\n"
         "  -h, --help             print this help and exit\n"
         "  --version              print sdma's version and the formats it "
         "reads\n";
}

/// Handles -h/--help and --version anywhere on the command line: prints
/// `usage` + commonHelp() or the version and returns 0; else -1 (go on).
/// Reads SDMA_MEMORY_BUDGET into `budget`; a malformed value is an error
/// (returns kUsageError).
inline int handleCommon(int argc, char **argv, const char *tool,
                        const std::string &usage, rt::MemoryBudget &budget) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--"))
      break;
    if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      std::fputs(usage.c_str(), stdout);
      std::fputs(commonHelp().c_str(), stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--version")) {
      std::fputs(versionText(tool).c_str(), stdout);
      return 0;
    }
  }
  std::string error;
  std::optional<rt::MemoryBudget> fromEnv =
      rt::MemoryBudget::fromEnvironment(error);
  if (!fromEnv) {
    std::fprintf(stderr, "%s: error: %s\n", tool, error.c_str());
    return kUsageError;
  }
  budget = *fromEnv;
  return -1;
}

/// If `arg` is --memory-budget=N: sets `budget` and returns true, or
/// prints an error and sets `status` to kUsageError. False otherwise.
inline bool memoryBudgetOption(const char *tool, const std::string &arg,
                               rt::MemoryBudget &budget, int &status) {
  static const std::string kName = "--memory-budget=";
  if (arg.compare(0, kName.size(), kName) != 0)
    return false;
  std::optional<uint64_t> bytes =
      rt::MemoryBudget::parseBytes(arg.substr(kName.size()));
  if (!bytes) {
    std::fprintf(stderr,
                 "%s: bad --memory-budget '%.64s' (a positive byte count, "
                 "e.g. 512M or 16G)\n",
                 tool, arg.c_str() + kName.size());
    status = kUsageError;
  } else {
    budget.bytes = *bytes;
  }
  return true;
}

/// "TOOL: unknown option '--x' (TOOL --help lists them)"; returns
/// kUsageError.
inline int unknownOption(const char *tool, const std::string &arg) {
  std::fprintf(stderr, "%s: unknown option '%.64s%s' (%s --help lists them)\n",
               tool, arg.c_str(), arg.size() > 64 ? "..." : "", tool);
  return kUsageError;
}

} // namespace sdma::tool

namespace tool = sdma::tool;

#endif // SDMA_RUNTIME_TOOLS_TOOLOPTIONS_H
