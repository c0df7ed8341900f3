//===- Version.h - sdma's version and the artifact formats it reads -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// One place for the numbers every tool prints with --version: the compiler
// writes these formats and the runtime reads them, so both sides take the
// version from here. Header only, no MLIR, no runtime library needed.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_VERSION_H
#define SDMA_RUNTIME_VERSION_H

#include "sdma/sdma.h"

#include <string>

namespace sdma {

/// sdma's own version (semantic versioning), the C API's (sdma.h: one
/// definition for the tools, the library and the Python package).
constexpr const char *kSdmaVersion = SDMA_VERSION_STRING;

namespace rt {
/// The plan format (`"format": "sdma.plan"`, sdma-translate --sdma-to-plan).
constexpr int kPlanVersion = 1;
/// The packet plan format (`"format": "sdma.packets"`, --sdma-to-packets).
/// Version 2 records the SDMA target profile ("target"); version 1 plans
/// (which assumed gfx942's limits) are refused: recompile them.
constexpr int kPacketPlanVersion = 2;
/// The load/store program header (`// sdma-ldst: {"format": "sdma.ldst"}`).
/// Version 2: the kernel's table carries the call tag (LdstKernel.hip);
/// version 1 programs are refused: recompile them (sdma-precompile).
constexpr int kLdstVersion = 2;
/// The NVIDIA cost-model profile (runtime/profiles/h200-nvidia.json; the
/// file carries no version field: this is the layout this runtime reads).
constexpr int kNvProfileVersion = 1;
/// The DMA timing profile (`"format": "sdma.dma-timing"`).
constexpr int kDmaProfileVersion = 1;
} // namespace rt

/// What `TOOL --version` prints (two lines, newline-terminated):
///   sdma-sim (sdma 0.3.0)
///   formats: plan 1, packet plan 2, ld/st program 2, nvidia profile 1, dma
///   profile 1
inline std::string versionText(const std::string &tool) {
  return tool + " (sdma " + kSdmaVersion + ")\nformats: plan " +
         std::to_string(rt::kPlanVersion) + ", packet plan " +
         std::to_string(rt::kPacketPlanVersion) + ", ld/st program " +
         std::to_string(rt::kLdstVersion) + ", nvidia profile " +
         std::to_string(rt::kNvProfileVersion) + ", dma profile " +
         std::to_string(rt::kDmaProfileVersion) + "\n";
}

} // namespace sdma

#endif // SDMA_RUNTIME_VERSION_H
