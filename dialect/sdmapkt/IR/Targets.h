//===- Targets.h - SDMA target profiles -------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What one SDMA engine generation (with its firmware and driver stack)
// accepts: the table every limit of the packet lowering, the packet
// verifiers and the encoder comes from. The facts and their sources are in
// Targets.cpp and ../shared/SDMA-PACKETS.md ("Limits"); the packet plan
// records the profile it was built for, so the runtime checks the same
// numbers without this table.
//
//===----------------------------------------------------------------------===//

#ifndef SDMAPKT_IR_TARGETS_H
#define SDMAPKT_IR_TARGETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace sdma::pkt {

/// The largest COPY_LINEAR_SWAP any target moves (mori's cap; the swap's
/// count field is 30 bits like the copy's).
constexpr int64_t kSwapFieldMaxBytes = 0x3fffffe0;

struct TargetProfile {
  llvm::StringLiteral name;
  llvm::StringLiteral description;
  /// Width of COPY_LINEAR's count field (bytes - 1): 22 or 30 bits.
  unsigned countBits;
  /// A cap below the count field's limit on one copy packet; 0: none.
  int64_t copyCapBytes;
  /// COPY_LINEAR_SWAP (sub-op 9) is accepted.
  bool swap;
  /// NOP with a non-zero count (padding of several dwords in one packet).
  bool nopCount;
  /// Broadcast: both destinations at the same offset within this many bytes
  /// ((dst0 & (N - 1)) == (dst1 & (N - 1))).
  int64_t broadcastOffsetBytes;
  /// Swap: both addresses aligned to this many bytes (the address fields
  /// drop the low bits).
  int64_t swapAlignBytes;

  /// The most bytes one COPY_LINEAR (plain or broadcast) moves.
  int64_t maxCopyBytes() const {
    int64_t field = int64_t(1) << countBits;
    return copyCapBytes && copyCapBytes < field ? copyCapBytes : field;
  }
  /// The most bytes one COPY_LINEAR_SWAP moves; 0 without swap.
  int64_t maxSwapBytes() const {
    if (!swap)
      return 0;
    return maxCopyBytes() < kSwapFieldMaxBytes ? maxCopyBytes()
                                               : kSwapFieldMaxBytes;
  }
  /// The most extra dwords one NOP may carry.
  int64_t maxNopExtra() const { return nopCount ? 0x3fff : 0; }
};

/// Every profile, the default (the most conservative) first.
llvm::ArrayRef<TargetProfile> targetProfiles();
/// The profile named `name`, or null.
const TargetProfile *findTargetProfile(llvm::StringRef name);
/// The default profile's name ("gfx9").
llvm::StringRef defaultTargetName();
/// "gfx9, gfx942 or gfx950": the names, for diagnostics.
std::string targetNameList();
/// The names of the profiles that `has`, as "gfx942 or gfx950".
std::string targetNamesWith(bool (*has)(const TargetProfile &));

} // namespace sdma::pkt

#endif // SDMAPKT_IR_TARGETS_H
