// Swaps on the targets that have them: 15 chunks of 64 MiB per
// COPY_LINEAR_SWAP on gfx942 (0x3fffffe0 bytes), 2 on gfx950 (128 MiB);
// the program needs 64-byte chunks. (gfx9: sdma-to-sdmapkt-errors.mlir.)
// RUN: sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx942" | FileCheck %s --check-prefix=SWAP942
// RUN: sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx950" | FileCheck %s --check-prefix=SWAP950
// SWAP942-LABEL: sdmapkt.program @swaps
// SWAP942-SAME:  chunk_align = 64 : i64
// SWAP942:       sdmapkt.copy_swap #sdmapkt.chunk<"b", 0, 0> with #sdmapkt.chunk<"b", 1, 16> count #sdmapkt.chunks<15>
// SWAP942-NEXT:  sdmapkt.copy_swap #sdmapkt.chunk<"b", 0, 15> with #sdmapkt.chunk<"b", 1, 31> count #sdmapkt.chunks<1>
// SWAP950-LABEL: sdmapkt.program @swaps
// SWAP950-SAME:  chunk_align = 64 : i64
// SWAP950:       sdmapkt.copy_swap #sdmapkt.chunk<"b", 0, 0> with #sdmapkt.chunk<"b", 1, 16> count #sdmapkt.chunks<2>
// SWAP950-COUNT-7: sdmapkt.copy_swap {{.*}} count #sdmapkt.chunks<2>
// SWAP950-NEXT:  sdmapkt.atomic_add64
sdma.schedule @swaps ranks(%R = 2) buffers(%b : 32) {
  sdma.swap %b[0, 16] on 0 <-> %b[16, 16] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
}
