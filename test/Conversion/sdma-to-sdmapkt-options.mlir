// Bad pass options are diagnosed on the schedule.
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="completion=poll" 2>&1 | FileCheck %s --check-prefix=COMPLETION
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="max-chunk-bytes=100" 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not sdma-opt %s --convert-sdma-to-sdmapkt="max-chunk-bytes=2147483648" 2>&1 | FileCheck %s --check-prefix=BIG
// COMPLETION: error: completion must be 'atomic' or 'fence', got 'poll'
// ALIGN: error: max-chunk-bytes must be a positive multiple of 64
// BIG: error: max-chunk-bytes 2147483648 exceeds what one packet can move (1073741792 bytes)
sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
}
