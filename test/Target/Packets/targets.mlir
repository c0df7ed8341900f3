// The packet plan and the listing name the program's target profile, and
// the runtime reads it back: the decoder's listing equals the compiler's,
// and the packet simulator holds counts to the plan's limit. gfx942 is
// covered by encode.mlir; here gfx9 (this file) and gfx950 (the same
// program with its target replaced).
// RUN: sdma-translate --sdma-to-packet-listing %s | FileCheck %s --check-prefix=LIST9
// RUN: sdma-translate --sdma-to-packets %s > %t.gfx9.json
// RUN: FileCheck %s --check-prefix=PLAN9 --input-file=%t.gfx9.json
// RUN: sdma-translate --sdma-to-packet-listing %s > %t.gfx9.compiler.txt
// RUN: sdma-packet-sim --list %t.gfx9.json > %t.gfx9.runtime.txt
// RUN: diff %t.gfx9.compiler.txt %t.gfx9.runtime.txt
// RUN: sed 's/"gfx9"/"gfx950"/' %s | sdma-translate --sdma-to-packet-listing | FileCheck %s --check-prefix=LIST950
// RUN: sed 's/"gfx9"/"gfx950"/' %s | sdma-translate --sdma-to-packets > %t.gfx950.json
// RUN: FileCheck %s --check-prefix=PLAN950 --input-file=%t.gfx950.json
// RUN: sed 's/"gfx9"/"gfx950"/' %s | sdma-translate --sdma-to-packet-listing > %t.gfx950.compiler.txt
// RUN: sdma-packet-sim --list %t.gfx950.json > %t.gfx950.runtime.txt
// RUN: diff %t.gfx950.compiler.txt %t.gfx950.runtime.txt

// LIST9: target gfx9 (copy 4194304 bytes, no swap, no NOP count)
// LIST9-NEXT: queue 0:0 (15 dwords)
// LIST9-NEXT: 0x0000  COPY_LINEAR    src=in@r0+c0 dst=out@r1+c0 count=1ch
// LIST9-NEXT: 0x001c  ATOMIC_ADD64   addr=flag@r1[1] value=1
// LIST950: target gfx950 (copy 134217728 bytes, swap 134217728 bytes, NOP count)

// PLAN9:      "version": 2,
// PLAN9-NEXT: "program": "t",
// PLAN9-NEXT: "target": {
// PLAN9-NEXT:  "name": "gfx9",
// PLAN9-NEXT:  "count_bits": 22,
// PLAN9-NEXT:  "max_copy_bytes": 4194304,
// PLAN9-NEXT:  "swap": false,
// PLAN9-NEXT:  "max_swap_bytes": 0,
// PLAN9-NEXT:  "nop_count": false
// PLAN9-NEXT: },
// PLAN950:      "target": {
// PLAN950-NEXT:  "name": "gfx950",
// PLAN950-NEXT:  "count_bits": 30,
// PLAN950-NEXT:  "max_copy_bytes": 134217728,
// PLAN950-NEXT:  "swap": true,
// PLAN950-NEXT:  "max_swap_bytes": 134217728,
// PLAN950-NEXT:  "nop_count": true
// PLAN950-NEXT: },

// The plan runs at the chunk sizes it allows; a plan edited to allow 8 MiB
// chunks (max_chunk_bytes) still cannot move 8 MiB in one gfx9 packet: the
// simulator refuses the count, naming the target.
// RUN: sdma-packet-sim %t.gfx9.json --chunk-bytes=64,4194304 | FileCheck %s --check-prefix=RUN9
// RUN: sed 's/"max_chunk_bytes": 4194304/"max_chunk_bytes": 8388608/' %t.gfx9.json > %t.gfx9-big.json
// RUN: not sdma-packet-sim %t.gfx9-big.json --chunk-bytes=8388608 2>&1 | FileCheck %s --check-prefix=BIG9
// RUN: sed 's/"max_chunk_bytes": 4194304/"max_chunk_bytes": 8388608/' %t.gfx950.json > %t.gfx950-big.json
// RUN: sdma-packet-sim %t.gfx950-big.json --chunk-bytes=8388608 | FileCheck %s --check-prefix=BIG950
// RUN9: packets t: 2 ranks, 2 queues, 15 dwords, target gfx9
// RUN9: ok   chunk 64 seed 0
// RUN9: ok   chunk 4194304 seed 0
// BIG9: sdma-packet-sim: error: chunk 8388608 seed 0: queue 0:0: relocation at dword 1: 1 chunks of 8388608 bytes exceed the 4194304 bytes one packet moves on target gfx9
// BIG950: ok   chunk 8388608 seed 0

// A plan of an older format (version 1, no target) is refused.
// RUN: sed 's/"version": 2/"version": 1/' %t.gfx9.json > %t.v1.json
// RUN: not sdma-packet-sim %t.v1.json 2>&1 | FileCheck %s --check-prefix=V1
// V1: sdma-packet-sim: error: {{.*}}v1.json: invalid packet plan: $.version: packet plan version 1 but this runtime reads version 2: recompile the schedule with a matching sdma

sdmapkt.program @t attributes {target = "gfx9", ranks = 2 : i64,
    buffers = ["in", "out"], buffer_chunks = [1, 1], flags = 2 : i64,
    timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 4194304 : i64,
    done = [0, 1]} {
  sdmapkt.queue 0 : 0 {
    sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<1>
    sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
  }
  sdmapkt.queue 1 : 0 {
  }
}
