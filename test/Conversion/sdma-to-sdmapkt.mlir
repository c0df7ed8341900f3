// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx942" | FileCheck %s
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx942 completion=fence" | FileCheck %s --check-prefix=FENCE
// RUN: sdma-opt %s -split-input-file --convert-sdma-to-sdmapkt="target=gfx942 max-chunk-bytes=128 max-packet-bytes=256 timestamps=true trap=true" | FileCheck %s --check-prefix=SPLIT
// (Target gfx942: the first schedule swaps. sdma-to-sdmapkt-targets.mlir
// covers each target's limits.)

// An engine-level schedule: one queue per (rank, engine) in program order;
// the launch poll first; a cross-rank wait polls the flag the peer's queue
// writes; completions are ATOMIC ADD64 (default) or, where one queue is a
// flag's only writer, FENCE values (completion=fence).

// CHECK-LABEL: sdmapkt.program @two
// CHECK-SAME: buffer_chunks = [1, 1, 4], buffers = ["in", "out", "t"], chunk_align = 64 : i64, done = [1, 1], flags = 4 : i64, max_chunk_bytes = 67108864 : i64, ranks = 2 : i64
// CHECK-SAME: sdmapkt.collective = {input = "in", kind = "broadcast", output = "out", root = 0 : i64}, target = "gfx942", timestamps = 0 : i64
// CHECK:      sdmapkt.queue 0 : 0 {
// CHECK-NEXT:   sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask 4294967295 interval 10 retry 4095
// CHECK-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<1>
// CHECK-NEXT:   sdmapkt.atomic_add64 #sdmapkt.flag<1, 3> value 1
// CHECK-NEXT:   sdmapkt.atomic_add64 #sdmapkt.flag<0, 1> value 1
// CHECK-NEXT: }
// CHECK:      sdmapkt.queue 1 : 1 {
// CHECK-NEXT:   sdmapkt.poll_regmem #sdmapkt.flag<1, 0> "ge" 1
// CHECK-NEXT:   sdmapkt.poll_regmem #sdmapkt.flag<1, 3> "ge" 1
// CHECK-NEXT:   sdmapkt.copy_swap #sdmapkt.chunk<"t", 1, 0> with #sdmapkt.chunk<"t", 0, 2> count #sdmapkt.chunks<2>
// CHECK-NEXT:   sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
// CHECK-NEXT: }

// FENCE:      sdmapkt.queue 0 : 0 {
// FENCE:        sdmapkt.fence #sdmapkt.flag<1, 3> value 1
// FENCE-NEXT:   sdmapkt.fence #sdmapkt.flag<0, 1> value 1
// FENCE:      sdmapkt.queue 1 : 1 {
// FENCE:        sdmapkt.fence #sdmapkt.flag<1, 1> value 1

// Split at 2 chunks per packet (256 bytes / 128-byte chunks); timestamps
// after the launch poll and at the end; a trap last.
// SPLIT:      sdmapkt.queue 1 : 1 {
// SPLIT-NEXT:   sdmapkt.poll_regmem #sdmapkt.flag<1, 0>
// SPLIT-NEXT:   sdmapkt.timestamp #sdmapkt.timestamp<1, 0>
// SPLIT-NEXT:   sdmapkt.poll_regmem #sdmapkt.flag<1, 3>
// SPLIT-NEXT:   sdmapkt.copy_swap #sdmapkt.chunk<"t", 1, 0> with #sdmapkt.chunk<"t", 0, 2> count #sdmapkt.chunks<2>
// SPLIT-NEXT:   sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
// SPLIT-NEXT:   sdmapkt.timestamp #sdmapkt.timestamp<1, 1>
// SPLIT-NEXT:   sdmapkt.trap 1
sdma.schedule @two ranks(%R = 2) buffers(%in : 1, %out : 1, %t : 4) implements broadcast(%in -> %out) root 0 {
  sdma.poll 0 : 0 until [0] at_least 1
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [3]
  sdma.notify 0 : 0 -> 0 [1]
  sdma.poll 1 : 1 until [0] at_least 1
  sdma.poll 1 : 1 until [3] at_least 1
  sdma.swap %t[0, 2] on 1 <-> %t[2, 2] on 0 {engine = 1 : i64}
  sdma.notify 1 : 1 -> 1 [1]
}

// -----

// Three chunks at one chunk per packet: three packets, offsets advancing.
// Two queues add to rank 1's flag 1, so FENCE mode keeps ATOMIC there;
// the broadcast writes the same chunk offset on both destinations, so any
// chunk size keeps them at the same offset within 32 bytes.
// CHECK-LABEL: sdmapkt.program @split
// CHECK-SAME: chunk_align = 1 : i64
// CHECK:        sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 3>, #sdmapkt.chunk<"b", 2, 3> count #sdmapkt.chunks<3>
// SPLIT-LABEL: sdmapkt.program @split
// SPLIT:        sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 0> count #sdmapkt.chunks<2>
// SPLIT-NEXT:   sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 2> -> #sdmapkt.chunk<"b", 1, 2> count #sdmapkt.chunks<1>
// SPLIT:        sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 3>, #sdmapkt.chunk<"b", 2, 3> count #sdmapkt.chunks<2>
// SPLIT-NEXT:   sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 2> -> #sdmapkt.chunk<"b", 1, 5>, #sdmapkt.chunk<"b", 2, 5> count #sdmapkt.chunks<1>
// FENCE-LABEL: sdmapkt.program @split
// FENCE:        sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
// FENCE:        sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
sdma.schedule @split ranks(%R = 3) buffers(%b : 8) {
  sdma.copy %b[0, 3] on 0 -> %b[0, 3] on 1 {engine = 0 : i64}
  sdma.notify 0 : 0 -> 1 [1]
  sdma.bcast %b[0, 3] on 0 -> %b[3, 3] on 1, %b[3, 3] on 2 {engine = 1 : i64}
  sdma.notify 0 : 1 -> 1 [1]
}
