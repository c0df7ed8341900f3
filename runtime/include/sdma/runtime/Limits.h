//===- Limits.h - the limits compiler and runtime share ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// One place for the limits both sides check: the compiler refuses a
// schedule beyond them (the sdma.schedule verifier, sdma-unroll) and the
// runtime refuses a plan, packet plan or load/store program beyond them
// (format/). Header only, no MLIR: the compiler includes it from the
// runtime's include directory, as it does Version.h.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIMITS_H
#define SDMA_RUNTIME_LIMITS_H

#include <cstdint>

namespace sdma {

/// The largest rank count. The load/store kernel's error record packs a
/// rank and a peer as `rank * kMaxRanks + peer`.
constexpr int64_t kMaxRanks = 65536;

/// The most local experts per rank of an MoE schedule (`sdma.experts`).
constexpr int64_t kMaxExperts = 1024;

/// The largest buffer on one rank, in chunks.
constexpr int64_t kMaxBufferChunks = int64_t(1) << 40;

/// The most DMA engines (queues) a rank may use in a plan.
constexpr int64_t kMaxEnginesPerRank = int64_t(1) << 16;

/// The most flag slots a rank may have in a plan.
constexpr int64_t kMaxFlagsPerRank = int64_t(1) << 20;

} // namespace sdma

#endif // SDMA_RUNTIME_LIMITS_H
