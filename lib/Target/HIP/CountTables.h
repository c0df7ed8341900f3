//===- CountTables.h - sdma.copyv's count tables in the kernel --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the load/store kernel needs to resolve sdma.copyv ops at run time,
// planned from the op rows TranslateToHIP.cpp lays out:
//   sdma_vops    per copyv, its two sides: table buffer (or -1), rank word,
//                index, layout code (CountForwarding.h's getTableCode), and
//                where the phase's scan put the table (-1: summed per op);
//   sdma_fwd     each forwarded table row's entries where the count copies
//                read them ((rank * buffers + buffer) << 32 | entry);
//   sdma_vtabs   per phase, the tables its copyvs take packed offsets from,
//                scanned once into shared memory (rank, buffer, entries,
//                form, place);
//   sdma_count_checks  per rank, the copyv rows whose count it holds, where
//                some copyv is issued by another rank than its count's (a
//                pull): the rank checks them.
// and the SDMA_* defines that size the kernel's shared memory for them.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_HIP_COUNTTABLES_H
#define SDMA_LIB_TARGET_HIP_COUNTTABLES_H

#include "LdstSteps.h"
#include "sdma/Analysis/CountForwarding.h"
#include "sdma/IR/SdmaOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <optional>
#include <vector>

namespace sdma::hip {

/// `static __constant__ const TYPE NAME[] = {...};`, or __device__ past 16
/// KiB (constant memory is cached and broadcast to a warp, but small).
void emitArray(llvm::raw_ostream &os, llvm::StringRef type,
               llvm::StringRef name, llvm::ArrayRef<int64_t> values);
void emitArray(llvm::raw_ostream &os, llvm::StringRef type,
               llvm::StringRef name, llvm::ArrayRef<int> values);

class CountTables {
public:
  /// Fails (diagnosed) where CountForwarding refuses a forwarded side.
  static mlir::FailureOr<CountTables> build(ScheduleOp schedule);

  /// The op row (kind 3, kOpStride words) of a flat `op`; its sides go to
  /// sdma_vops.
  std::vector<int64_t> addCopyv(CopyvOp op);

  bool empty() const { return vops.empty(); }
  /// Some copyv reads counts another rank's launch copies in (its caller's:
  /// forwarded, or a pull's count and offsets): where one launch runs every
  /// rank, the kernel takes a barrier of its own before reading them.
  bool readsPeerCounts() const { return peerCounts; }

  /// Once every rank's steps and `ops` are laid out: sdma_fwd, the scans
  /// and the holders' check lists.
  void plan(const std::vector<std::vector<Step>> &steps,
            const std::vector<int64_t> &ops);

  /// The SDMA_COUNT_OPS defines; `peerSlot`: the flag slot of the barrier
  /// readsPeerCounts asks for (or -1).
  void emitDefines(llvm::raw_ostream &os,
                   const std::vector<std::vector<Step>> &steps,
                   int64_t peerSlot) const;
  void emitTables(llvm::raw_ostream &os) const;

private:
  CountTables(ScheduleOp schedule, CountForwarding forwarding);
  void notePeerCounts(CopyvOp op);
  void planForwarding();
  void planScans(const std::vector<std::vector<Step>> &steps,
                 const std::vector<int64_t> &ops);
  void planChecks(const std::vector<int64_t> &ops);

  ScheduleOp schedule;
  int64_t ranks;
  CountForwarding forwarding;
  /// The count tables some sdma.copy writes (ordered by the schedule); the
  /// others are the caller's, copied in by each rank's launch.
  llvm::SmallPtrSet<void *, 4> copiedTo;
  std::vector<int64_t> vops;
  /// Forwarded sides: the entries each forwarded table row's scan needs, by
  /// (rank, buffer); then sdma_fwd.
  std::map<std::pair<int64_t, int64_t>, int64_t> forwardedRows;
  std::vector<int64_t> fwd;
  /// See readsPeerCounts; and whether some copyv's count lives on a rank
  /// other than the one issuing it (sdma_count_checks).
  bool peerCounts = false, peerCountChecks = false;
  std::vector<int64_t> scanRows;
  std::vector<int> scanBegin;
  int64_t scanWords = 0;
  std::vector<int> checks, checkBegin;
};

} // namespace sdma::hip

#endif // SDMA_LIB_TARGET_HIP_COUNTTABLES_H
