// Every packet kind, encoded: the listing's raw dwords against the layouts of
// SDMA-PACKETS.md; the relocations in the packet plan; and the round trip
// encoder -> binary -> the runtime's independent decoder, whose listing must
// equal the compiler's line for line.
// RUN: sdma-translate --sdma-to-packet-listing %s | FileCheck %s
// RUN: sdma-translate --sdma-to-packets %s | FileCheck %s --check-prefix=PLAN
// RUN: sdma-translate --sdma-to-packet-listing %s > %t.compiler.txt
// RUN: sdma-translate --sdma-to-packets %s > %t.json
// RUN: sdma-packet-sim --list %t.json > %t.runtime.txt
// RUN: diff %t.compiler.txt %t.runtime.txt

// CHECK: target gfx942 (copy 1073741824 bytes, swap 1073741792 bytes, NOP count)
// CHECK-NEXT: queue 0:1 (73 dwords)
// CHECK-NEXT: 0x0000  POLL_REGMEM    addr=flag@r0[0] func=ge ref=1 mask=0xFFFFFFFF interval=10 retry=4095  [d0000008 00000000 00000000 00000001 ffffffff 0fff000a]
// CHECK-NEXT: 0x0018  TIMESTAMP      addr=ts@r0[0]  [0000020d 00000000 00000000]
// CHECK-NEXT: 0x0024  COPY_LINEAR    src=in@r0+c0 dst=out@r1+c3 count=1ch  [00000001 00000000 00000000 00000000 00000000 00000000 00000000]
// CHECK-NEXT: 0x0040  COPY_LINEAR    src=0x1000 dst=0x200000002000 count=100B  [00000001 00000063 00000000 00001000 00000000 00002000 00002000]
// CHECK-NEXT: 0x005c  COPY_BROADCAST src=in@r0+c0 dst0=out@r0+c1 dst1=out@r1+c1 count=1ch  [08000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000]
// CHECK-NEXT: 0x0080  COPY_SWAP      a=out@r0+c2 b=out@r1+c2 count=2ch  [00000901 00000000 00000000 00000000 00000000 00000000 00000000]
// CHECK-NEXT: 0x009c  COPY_SWAP      a=0x40 b=0x80 count=1073741792B  [00000901 3fffffdf 00000000 00000040 00000000 00000080 00000000]
// CHECK-NEXT: 0x00b8  FENCE          addr=flag@r1[2] value=7  [00000005 00000000 00000000 00000007]
// CHECK-NEXT: 0x00c8  ATOMIC_ADD64   addr=flag@r0[1] value=1  [5e00000a 00000000 00000000 00000001 00000000 00000000 00000000 00000000]
// CHECK-NEXT: 0x00e8  POLL_REGMEM    addr=0x100 func=eq ref=3 mask=0xFF interval=0 retry=12  [b0000008 00000100 00000000 00000003 000000ff 000c0000]
// CHECK-NEXT: 0x0100  NOP            extra=3  [00030000 00000000 00000000 00000000]
// CHECK-NEXT: 0x0110  TRAP           context=5  [00000006 00000005]
// CHECK-NEXT: 0x0118  TIMESTAMP      addr=ts@r0[1]  [0000020d 00000000 00000000]
// CHECK-NEXT: queue 1:0 (0 dwords)

// PLAN:      "format": "sdma.packets",
// PLAN-NEXT: "version": 2,
// PLAN-NEXT: "program": "all",
// PLAN-NEXT: "target": {
// PLAN-NEXT:  "name": "gfx942",
// PLAN-NEXT:  "count_bits": 30,
// PLAN-NEXT:  "max_copy_bytes": 1073741824,
// PLAN-NEXT:  "swap": true,
// PLAN-NEXT:  "max_swap_bytes": 1073741792,
// PLAN-NEXT:  "nop_count": true
// PLAN-NEXT: },
// PLAN:      "chunk_align": 64,
// PLAN-NEXT: "max_chunk_bytes": 1048576,
// PLAN:      "rank": 0,
// PLAN-NEXT: "engine": 1,
// PLAN-NEXT: "dwords": 73,
// PLAN-NEXT: "image": "CAAA0AAAAAAAAAAAAQAAAP////8KAP8P
// PLAN:      "relocs": [
// PLAN-NEXT:  {
// PLAN-NEXT:   "dword": 1,
// PLAN-NEXT:   "kind": "flag",
// PLAN-NEXT:   "rank": 0,
// PLAN-NEXT:   "slot": 0
// PLAN-NEXT:  },
// PLAN-NEXT:  {
// PLAN-NEXT:   "dword": 7,
// PLAN-NEXT:   "kind": "timestamp",
// PLAN-NEXT:   "rank": 0,
// PLAN-NEXT:   "index": 0
// PLAN-NEXT:  },
// PLAN-NEXT:  {
// PLAN-NEXT:   "dword": 10,
// PLAN-NEXT:   "kind": "count",
// PLAN-NEXT:   "chunks": 1
// PLAN-NEXT:  },
// PLAN-NEXT:  {
// PLAN-NEXT:   "dword": 12,
// PLAN-NEXT:   "kind": "chunk",
// PLAN-NEXT:   "buffer": "in",
// PLAN-NEXT:   "rank": 0,
// PLAN-NEXT:   "chunk": 0
// PLAN-NEXT:  },
// PLAN-NEXT:  {
// PLAN-NEXT:   "dword": 14,
// PLAN-NEXT:   "kind": "chunk",
// PLAN-NEXT:   "buffer": "out",
// PLAN-NEXT:   "rank": 1,
// PLAN-NEXT:   "chunk": 3
sdmapkt.program @all attributes {target = "gfx942", ranks = 2 : i64, buffers = ["in", "out"],
    buffer_chunks = [1, 4], flags = 3 : i64, timestamps = 2 : i64,
    chunk_align = 64 : i64, max_chunk_bytes = 1048576 : i64, done = [1, 0]} {
  sdmapkt.queue 0 : 1 {
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask 4294967295 interval 10 retry 4095
    sdmapkt.timestamp #sdmapkt.timestamp<0, 0>
    sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 3> count #sdmapkt.chunks<1>
    sdmapkt.copy_linear 4096 -> 35184372097024 count 100
    sdmapkt.copy_broadcast #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 0, 1>, #sdmapkt.chunk<"out", 1, 1> count #sdmapkt.chunks<1>
    sdmapkt.copy_swap #sdmapkt.chunk<"out", 0, 2> with #sdmapkt.chunk<"out", 1, 2> count #sdmapkt.chunks<2>
    sdmapkt.copy_swap 64 with 128 count 1073741792
    sdmapkt.fence #sdmapkt.flag<1, 2> value 7
    sdmapkt.atomic_add64 #sdmapkt.flag<0, 1> value 1
    sdmapkt.poll_regmem 256 "eq" 3 mask 255 interval 0 retry 12
    sdmapkt.nop 3
    sdmapkt.trap 5
    sdmapkt.timestamp #sdmapkt.timestamp<0, 1>
  }
  sdmapkt.queue 1 : 0 {
  }
}
