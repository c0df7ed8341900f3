//===- Packets.h - SDMA packet programs: binary and listing -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Encodes an sdmapkt.program into per-queue packet images (little-endian
// dwords, ../shared/SDMA-PACKETS.md) with relocation tables, written as the
// packet plan ("sdma.packets" version 2, docs/plan-format.md), and prints the
// readable listing: one packet per line with its byte offset, name, fields and
// raw dwords. The runtime's decoder (runtime/lib/format/PacketDecoder.cpp) is
// written independently of this encoder and prints the same listing from the
// bits.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_PACKETS_H
#define SDMA_TARGET_PACKETS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace sdma {

/// Version 2 added "target" (the SDMA target profile); it must equal the
/// runtime's sdma::rt::kPacketPlanVersion (runtime/.../Version.h).
constexpr int kPacketPlanVersion = 2;

mlir::LogicalResult translateToPackets(mlir::ModuleOp module,
                                       llvm::raw_ostream &os);
mlir::LogicalResult translateToPacketListing(mlir::ModuleOp module,
                                             llvm::raw_ostream &os);

/// Registers `--sdma-to-packets` and `--sdma-to-packet-listing`.
void registerToPacketsTranslation();

} // namespace sdma

#endif // SDMA_TARGET_PACKETS_H
