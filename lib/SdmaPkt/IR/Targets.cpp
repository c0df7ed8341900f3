//===- Targets.cpp - SDMA target profiles ---------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The facts, with where each comes from (../shared/SDMA-PACKETS.md,
// "Limits", holds the same list):
//
// - COPY_LINEAR's count is bytes - 1. Linux amdgpu's vega10_sdma_pkt_open.h
//   (used by sdma_v4_4_2.c) masks it to 22 bits, and sdma_v4_0.c /
//   sdma_v4_4_2.c set copy_max_bytes = 0x400000 (4 MiB); a 2025 amdgpu
//   change raises SDMA 4.4.x (MI300) to 1 << 30. ROCr
//   (GpuAgent::CreateBlitSdma) uses 0x3fffffff on gfx90a and gfx9.4+ and
//   0x3fffff on the rest of gfx9, and 0x3fffe0 whenever its size override
//   is off: which width an engine takes depends on its firmware and stack.
// - COPY_LINEAR_SWAP: ROCr (BlitSdma::Initialize) enables it on gfx9.4+
//   only (swap_supported_), after checking the device; its address fields
//   drop the low 6 bits (64-byte aligned); mori caps it at 0x3fffffe0.
// - NOP with a count: Linux writes the count only when the SDMA firmware's
//   feature_version >= 20 (burst_nop); older firmware takes 1-dword NOPs.
// - Broadcast COPY_LINEAR: ROCr requires both destinations at the same
//   offset within 32 bytes ((dst1 & 0x1F) == (dst2 & 0x1F)); ROCr enables
//   broadcast on gfx90a and gfx9.4+, the engines every profile here
//   describes (gfx900-gfx908 are not targets of sdma).
// - MI355X (gfx950): one very large descriptor has been reported to hang;
//   copies are capped at 128 MiB there.
//
//===----------------------------------------------------------------------===//

#include "sdmapkt/IR/Targets.h"

using namespace sdma::pkt;

namespace {
constexpr TargetProfile kProfiles[] = {
    // The default: what gfx90a/gfx94x engines accept with any firmware and
    // driver stack (Linux's vega10 header, older ROCr).
    {"gfx9",
     "conservative gfx9 SDMA: 22-bit count (4 MiB per packet), no swap, "
     "1-dword NOPs",
     /*countBits=*/22, /*copyCapBytes=*/0, /*swap=*/false, /*nopCount=*/false,
     /*broadcastOffsetBytes=*/32, /*swapAlignBytes=*/64},
    // MI300X with recent firmware, amdgpu and ROCr.
    {"gfx942",
     "MI300X, recent firmware/ROCr: 30-bit count (1 GiB per packet), swap, "
     "NOP count",
     /*countBits=*/30, /*copyCapBytes=*/0, /*swap=*/true, /*nopCount=*/true,
     /*broadcastOffsetBytes=*/32, /*swapAlignBytes=*/64},
    // MI355X: the 30-bit count, capped at 128 MiB per copy.
    {"gfx950",
     "MI355X: 30-bit count capped at 128 MiB per copy, swap, NOP count",
     /*countBits=*/30, /*copyCapBytes=*/int64_t(128) << 20, /*swap=*/true,
     /*nopCount=*/true, /*broadcastOffsetBytes=*/32, /*swapAlignBytes=*/64},
};

std::string joinNames(llvm::ArrayRef<llvm::StringRef> names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      text += i + 1 == names.size() ? " or " : ", ";
    text += names[i].str();
  }
  return text;
}
} // namespace

llvm::ArrayRef<TargetProfile> sdma::pkt::targetProfiles() { return kProfiles; }

const TargetProfile *sdma::pkt::findTargetProfile(llvm::StringRef name) {
  for (const TargetProfile &profile : kProfiles)
    if (profile.name == name)
      return &profile;
  return nullptr;
}

llvm::StringRef sdma::pkt::defaultTargetName() { return kProfiles[0].name; }

std::string sdma::pkt::targetNameList() {
  return targetNamesWith([](const TargetProfile &) { return true; });
}

std::string sdma::pkt::targetNamesWith(bool (*has)(const TargetProfile &)) {
  llvm::SmallVector<llvm::StringRef> names;
  for (const TargetProfile &profile : kProfiles)
    if (has(profile))
      names.push_back(profile.name);
  return joinNames(names);
}
