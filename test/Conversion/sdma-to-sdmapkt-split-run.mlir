// A 4-chunk transfer split at 2 chunks per packet runs correctly on the
// packet simulator, and the DMA model charges the extra packets.
// RUN: sdma-opt %s --convert-sdma-to-sdmapkt="max-chunk-bytes=64 max-packet-bytes=128" | sdma-translate --sdma-to-packets > %t.split.json
// RUN: sdma-opt %s --convert-sdma-to-sdmapkt="max-chunk-bytes=64" | sdma-translate --sdma-to-packets > %t.whole.json
// RUN: sdma-packet-sim --list %t.split.json | FileCheck %s --check-prefix=LIST
// RUN: sdma-packet-sim %t.split.json --chunk-bytes=64 --seeds=10 --dma-profile=%sdma_src/runtime/profiles/mi300x-sdma.json | FileCheck %s --check-prefix=SPLIT
// RUN: sdma-packet-sim %t.whole.json --chunk-bytes=64 --dma-profile=%sdma_src/runtime/profiles/mi300x-sdma.json | FileCheck %s --check-prefix=WHOLE
// RUN: sdma-packet-sim %t.split.json --chunk-bytes=64 --dma-profile=%sdma_src/runtime/profiles/mi300x-sdma.json > %t.split.txt
// RUN: sdma-packet-sim %t.whole.json --chunk-bytes=64 --dma-profile=%sdma_src/runtime/profiles/mi300x-sdma.json > %t.whole.txt
// RUN: %python -c "import re, sys; t = lambda f: float(re.search(r'predicted ([0-9.]+) us', open(f).read()).group(1)); sys.exit(0 if t(r'%t.split.txt') > t(r'%t.whole.txt') else 1)"
// RUN: not sdma-packet-sim %t.split.json --chunk-bytes=128 2>&1 | FileCheck %s --check-prefix=TOOBIG
// LIST: COPY_LINEAR    src=in@r0+c0 dst=out@r1+c0 count=2ch
// LIST-NEXT: COPY_LINEAR    src=in@r0+c2 dst=out@r1+c2 count=2ch
// SPLIT: chunk 64: predicted [[T:[0-9.]+]] us
// SPLIT: ok   chunk 64 seed 0: 8 packets, {{.*}} collective: 0 of 512 bytes wrong
// SPLIT: 10 interleavings per chunk size
// WHOLE: ok   chunk 64 seed 0: 6 packets
// TOOBIG: error: chunk 128 seed 0: chunk size 128 exceeds the 64 bytes the program was split for (max-chunk-bytes)
sdma.schedule @big ranks(%R = 2) buffers(%in : 4, %out : 4) implements broadcast(%in -> %out) root 0 {
  sdma.poll 0 : 0 until [0] at_least 1
  sdma.copy %in[0, 4] on 0 -> %out[0, 4] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 0 : 1 until [0] at_least 1
  sdma.copy %in[0, 4] on 0 -> %out[0, 4] on 0 {engine = 1 : i64}
  sdma.notify 0 : 1 -> 0 [1]
}
