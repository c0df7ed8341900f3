// RUN: sdma-opt %s -split-input-file -verify-diagnostics --convert-sdma-to-sdmapkt

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not engine-level: run sdma-lower-dma (or sdma-assign-engines and sdma-insert-sync) first}}
  sdma.copy %b[0, 1] on 0 -> %b[1, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{is not engine-level}}
  sdma.fence
}

// -----

// expected-error @+1 {{has no fixed rank count: run sdma-lower-dma first}}
sdma.schedule @s ranks(%R) buffers(%b : 2) {
}

// -----

// expected-error @+1 {{expected exactly one sdma.schedule, found 2}}
module {
  sdma.schedule @a ranks(%R = 1) buffers(%b : 2) {}
  sdma.schedule @b ranks(%R = 1) buffers(%b : 2) {}
}

// -----

// The default target, gfx9, has no COPY_LINEAR_SWAP (--convert-sdma-to-sdmapkt
// "target=gfx942" or "target=gfx950" lowers it).
sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{'sdma.swap' op needs COPY_LINEAR_SWAP, which target 'gfx9' does not support (gfx942 or gfx950 do): lower a variant other than swap, or choose one of those targets}}
  sdma.swap %b[0, 1] on 0 <-> %b[1, 1] on 1 {engine = 0 : i64}
}
