//===- MemoryBudget.cpp - how much memory a run may allocate --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/MemoryBudget.h"
#include "sdma/runtime/CheckedMath.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace sdma::rt;

uint64_t MemoryBudget::machineBytes() {
  static const uint64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
      return uint64_t(8) << 30;
    std::optional<uint64_t> total = checkedMul(pages, pageSize);
    return total ? *total / 2 : UINT64_MAX / 2;
  }();
  return bytes;
}

uint64_t MemoryBudget::defaultBytes() {
  const char *env = std::getenv("SDMA_MEMORY_BUDGET");
  if (env && *env)
    if (std::optional<uint64_t> bytes = parseBytes(env))
      return *bytes;
  return machineBytes();
}

std::optional<MemoryBudget> MemoryBudget::fromEnvironment(std::string &error) {
  const char *env = std::getenv("SDMA_MEMORY_BUDGET");
  MemoryBudget budget;
  if (!env || !*env) {
    budget.bytes = machineBytes();
    return budget;
  }
  std::optional<uint64_t> bytes = parseBytes(env);
  if (!bytes) {
    std::string text(env);
    if (text.size() > 64)
      text = text.substr(0, 64) + "...";
    error = "SDMA_MEMORY_BUDGET='" + text +
            "' is not a positive byte count (e.g. 4096, 512M, 16G)";
    return std::nullopt;
  }
  budget.bytes = *bytes;
  return budget;
}

std::optional<uint64_t> MemoryBudget::parseBytes(std::string_view text) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    std::optional<uint64_t> next = checkedMul(value, 10);
    next = next ? checkedAdd(*next, uint64_t(text[i] - '0')) : std::nullopt;
    if (!next)
      return std::nullopt;
    value = *next;
    ++i;
  }
  if (i == 0)
    return std::nullopt;
  std::string suffix;
  for (; i < text.size(); ++i)
    suffix += static_cast<char>(
        text[i] >= 'a' && text[i] <= 'z' ? text[i] - 'a' + 'A' : text[i]);
  int shift = -1;
  if (suffix.empty() || suffix == "B")
    shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    shift = 40;
  if (shift < 0 || value == 0)
    return std::nullopt;
  return checkedMul(value, uint64_t(1) << shift);
}

std::string MemoryBudget::describe(uint64_t bytes) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB",
                                "TiB",   "PiB", "EiB"};
  int unit = 0;
  double scaled = static_cast<double>(bytes);
  while (scaled >= 1024 && unit < 6)
    scaled /= 1024, ++unit;
  if (unit == 0)
    return std::to_string(bytes) + " bytes";
  char text[64];
  std::snprintf(text, sizeof text, "%.4g %s (%llu bytes)", scaled, units[unit],
                static_cast<unsigned long long>(bytes));
  return text;
}

bool MemoryBudget::admit(std::optional<uint64_t> need, const std::string &what,
                         std::string &error) const {
  if (need && *need <= bytes)
    return true;
  error = what + " needs " +
          (need ? describe(*need) : std::string("more than 2^64 bytes")) +
          ", more than the memory budget of " + describe(bytes) +
          " (set SDMA_MEMORY_BUDGET or --memory-budget)";
  return false;
}
