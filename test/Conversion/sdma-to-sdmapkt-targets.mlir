// Each SDMA target profile (sdmapkt/IR/Targets.h): the program records it,
// max-chunk-bytes defaults to 64 MiB or the target's packet limit, and
// transfers split at what one packet moves on that target.
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt | FileCheck %s --check-prefixes=CHECK,GFX9
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx9" | FileCheck %s --check-prefixes=CHECK,GFX9
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx942" | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx950" | FileCheck %s --check-prefixes=CHECK,GFX950

// Default max-chunk-bytes: gfx9 moves 4 MiB per packet (22-bit count), so
// one 4 MiB chunk per packet; gfx942 moves 1 GiB (16 chunks of 64 MiB);
// gfx950 128 MiB (2 chunks of 64 MiB).
// CHECK-LABEL: sdmapkt.program @defaults
// GFX9-SAME:   max_chunk_bytes = 4194304 : i64
// GFX942-SAME: max_chunk_bytes = 67108864 : i64
// GFX950-SAME: max_chunk_bytes = 67108864 : i64
// GFX9-SAME:   target = "gfx9"
// GFX942-SAME: target = "gfx942"
// GFX950-SAME: target = "gfx950"
// GFX9:        sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<1>
// GFX9-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 1> -> #sdmapkt.chunk<"out", 1, 1> count #sdmapkt.chunks<1>
// GFX9-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 2> -> #sdmapkt.chunk<"out", 1, 2> count #sdmapkt.chunks<1>
// GFX942:      sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<3>
// GFX950:      sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<2>
// GFX950-NEXT: sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 2> -> #sdmapkt.chunk<"out", 1, 2> count #sdmapkt.chunks<1>
// CHECK-NEXT:  sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
sdma.schedule @defaults ranks(%R = 2) buffers(%in : 3, %out : 3) {
  sdma.copy %in[0, 3] on 0 -> %out[0, 3] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
}

// -----

// 130 chunks of at most 2 MiB: 65 packets of 2 chunks on gfx9 (4 MiB),
// one packet on gfx942 (512 chunks fit 1 GiB), 64 + 64 + 2 on gfx950
// (128 MiB per copy).
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="max-chunk-bytes=2097152" | FileCheck %s --check-prefix=BIG9
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx942 max-chunk-bytes=2097152" | FileCheck %s --check-prefix=BIG942
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx950 max-chunk-bytes=2097152" | FileCheck %s --check-prefix=BIG950
// BIG9-LABEL:    sdmapkt.program @big
// BIG9:          sdmapkt.queue 0 : 0 {
// BIG9-COUNT-65: sdmapkt.copy_linear {{.*}} count #sdmapkt.chunks<2>
// BIG9-NEXT:     sdmapkt.atomic_add64
// BIG942-LABEL:  sdmapkt.program @big
// BIG942:        sdmapkt.queue 0 : 0 {
// BIG942-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<130>
// BIG942-NEXT:   sdmapkt.atomic_add64
// BIG950-LABEL:  sdmapkt.program @big
// BIG950:        sdmapkt.queue 0 : 0 {
// BIG950-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<64>
// BIG950-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 64> -> #sdmapkt.chunk<"out", 1, 64> count #sdmapkt.chunks<64>
// BIG950-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 128> -> #sdmapkt.chunk<"out", 1, 128> count #sdmapkt.chunks<2>
// BIG950-NEXT:   sdmapkt.atomic_add64
sdma.schedule @big ranks(%R = 2) buffers(%in : 130, %out : 130) {
  sdma.copy %in[0, 130] on 0 -> %out[0, 130] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
}

// -----

// Broadcast destinations at the same offset within 32 bytes on every
// target (ROCr's rule), for every chunk size the program allows: chunk
// offsets d apart need chunks that are multiples of 32 / gcd(32, d); the
// program takes the largest over its broadcasts (here 2 apart: 16, 4 apart:
// 8), and buffer bases are assumed 256-byte aligned.
// CHECK-LABEL: sdmapkt.program @apart
// CHECK-SAME:  chunk_align = 16 : i64
// CHECK:       sdmapkt.copy_broadcast #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0>, #sdmapkt.chunk<"out", 2, 2>
// CHECK:       sdmapkt.copy_broadcast #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 5>, #sdmapkt.chunk<"out", 2, 1>
sdma.schedule @apart ranks(%R = 3) buffers(%in : 1, %out : 6) {
  sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[2, 1] on 2 {engine = 0 : i64}
  sdma.bcast %in[0, 1] on 0 -> %out[5, 1] on 1, %out[1, 1] on 2 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
}

// -----

// One chunk apart: 32-byte chunks.
// CHECK-LABEL: sdmapkt.program @odd
// CHECK-SAME:  chunk_align = 32 : i64
sdma.schedule @odd ranks(%R = 3) buffers(%in : 1, %out : 2) {
  sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[1, 1] on 2 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
}

// -----

// 32 chunks apart: any chunk size keeps the offsets equal modulo 32.
// CHECK-LABEL: sdmapkt.program @wrap
// CHECK-SAME:  chunk_align = 1 : i64
sdma.schedule @wrap ranks(%R = 3) buffers(%in : 1, %out : 33) {
  sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[32, 1] on 2 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
}
