// Bad pass options are diagnosed on the schedule; limits name the target.
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="completion=poll" 2>&1 | FileCheck %s --check-prefix=COMPLETION
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="max-chunk-bytes=100" 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx1" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="max-chunk-bytes=8388608" 2>&1 | FileCheck %s --check-prefix=GFX9
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx942 max-chunk-bytes=2147483648" 2>&1 | FileCheck %s --check-prefix=GFX942
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx950 max-chunk-bytes=268435456" 2>&1 | FileCheck %s --check-prefix=GFX950
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx942 max-chunk-bytes=1073741824" 2>&1 | FileCheck %s --check-prefix=SWAP
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx942 max-packet-bytes=32" 2>&1 | FileCheck %s --check-prefix=PACKET
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="target=gfx942 max-chunk-bytes=4096 max-packet-bytes=1024" 2>&1 | FileCheck %s --check-prefix=SMALL
// COMPLETION: error: completion must be 'atomic' or 'fence', got 'poll'
// ALIGN: error: max-chunk-bytes must be a positive multiple of 64
// UNKNOWN: error: unknown target 'gfx1' (gfx9, gfx942 or gfx950)
// GFX9: error: max-chunk-bytes 8388608 exceeds the 4194304 bytes one COPY_LINEAR moves on target 'gfx9' (22-bit count)
// GFX942: error: max-chunk-bytes 2147483648 exceeds the 1073741824 bytes one COPY_LINEAR moves on target 'gfx942' (30-bit count)
// GFX950: error: max-chunk-bytes 268435456 exceeds the 134217728 bytes one COPY_LINEAR moves on target 'gfx950' (its per-copy cap)
// SWAP: error: max-chunk-bytes 1073741824 exceeds the 1073741792 bytes one COPY_LINEAR_SWAP moves on target 'gfx942'
// PACKET: error: max-packet-bytes must be 0 (the target's limit) or at least 64, got 32
// SMALL: error: max-chunk-bytes 4096 exceeds what one packet can move (1024 bytes, max-packet-bytes)
sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  sdma.swap %b[0, 1] on 0 <-> %b[1, 1] on 1 {engine = 0 : i64}
}
