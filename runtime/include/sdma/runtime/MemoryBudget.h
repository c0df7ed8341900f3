//===- MemoryBudget.h - how much memory a run may allocate ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The runtime refuses, before allocating, anything a plan would make it
// allocate beyond a budget: every rank's buffers and flags (HostMemory), the
// simulators' staging copies, decoded packets and timestamp slots, the CPU
// load/store executor's guarded copies. The error names what would be
// allocated, how many bytes, and the budget:
//   "host memory for 8 ranks at 16777216-byte chunks needs 1099511627776
//    bytes, more than the memory budget of 12 GiB (12884901888 bytes; set
//    SDMA_MEMORY_BUDGET or --memory-budget)"
//
// The default is half of the machine's physical memory; the environment
// variable SDMA_MEMORY_BUDGET (bytes, with an optional K, M, G or T suffix,
// powers of 1024) replaces it, and the runtime tools take --memory-budget=N.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_MEMORYBUDGET_H
#define SDMA_RUNTIME_MEMORYBUDGET_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sdma::rt {

struct MemoryBudget {
  /// The most bytes one run may allocate. Default: defaultBytes().
  uint64_t bytes = defaultBytes();

  /// SDMA_MEMORY_BUDGET if it is set and valid, else half of physical
  /// memory (sysconf), else 8 GiB where the machine does not say.
  static uint64_t defaultBytes();
  /// Half of physical memory (8 GiB where sysconf does not know).
  static uint64_t machineBytes();
  /// The budget from SDMA_MEMORY_BUDGET (or the machine default if unset);
  /// std::nullopt with `error` if the variable is set but malformed.
  static std::optional<MemoryBudget> fromEnvironment(std::string &error);
  /// An integer with an optional K, M, G or T suffix (powers of 1024; also
  /// KB/KiB..., any case): "4096", "512M", "16G". std::nullopt if malformed,
  /// zero or beyond 64 bits.
  static std::optional<uint64_t> parseBytes(std::string_view text);
  /// "12 GiB (12884901888 bytes)".
  static std::string describe(uint64_t bytes);

  /// Whether `need` bytes (std::nullopt: a size that overflowed 64 bits)
  /// for `what` fit; otherwise false with an error naming what, how much
  /// and the budget.
  bool admit(std::optional<uint64_t> need, const std::string &what,
             std::string &error) const;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_MEMORYBUDGET_H
