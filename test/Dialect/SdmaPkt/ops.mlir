// Every packet op and address/count form: printed, parsed again, printed
// the same.
// RUN: sdma-opt %s | sdma-opt | FileCheck %s

// CHECK-LABEL: sdmapkt.program @all
// CHECK-SAME: buffer_chunks = [1, 4], buffers = ["in", "out"], chunk_align = 64 : i64
sdmapkt.program @all attributes {target = "gfx942", ranks = 2 : i64, buffers = ["in", "out"],
    buffer_chunks = [1, 4], flags = 3 : i64, timestamps = 2 : i64,
    chunk_align = 64 : i64, max_chunk_bytes = 1048576 : i64, done = [1, 0]} {
  // CHECK: sdmapkt.queue 0 : 1 {
  sdmapkt.queue 0 : 1 {
    // CHECK-NEXT: sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask 4294967295 interval 10 retry 4095
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask 4294967295 interval 10 retry 4095
    // CHECK-NEXT: sdmapkt.timestamp #sdmapkt.timestamp<0, 0>
    sdmapkt.timestamp #sdmapkt.timestamp<0, 0>
    // CHECK-NEXT: sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 3> count #sdmapkt.chunks<1>
    sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 3> count #sdmapkt.chunks<1>
    // CHECK-NEXT: sdmapkt.copy_linear 4096 : i64 -> 8192 : i64 count 100 : i64
    sdmapkt.copy_linear 4096 -> 8192 count 100
    // CHECK-NEXT: sdmapkt.copy_broadcast #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 0, 1>, #sdmapkt.chunk<"out", 1, 1> count #sdmapkt.chunks<1>
    sdmapkt.copy_broadcast #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 0, 1>, #sdmapkt.chunk<"out", 1, 1> count #sdmapkt.chunks<1>
    // CHECK-NEXT: sdmapkt.copy_swap #sdmapkt.chunk<"out", 0, 2> with #sdmapkt.chunk<"out", 1, 2> count #sdmapkt.chunks<2>
    sdmapkt.copy_swap #sdmapkt.chunk<"out", 0, 2> with #sdmapkt.chunk<"out", 1, 2> count #sdmapkt.chunks<2>
    // CHECK-NEXT: sdmapkt.fence #sdmapkt.flag<1, 2> value 7
    sdmapkt.fence #sdmapkt.flag<1, 2> value 7
    // CHECK-NEXT: sdmapkt.atomic_add64 #sdmapkt.flag<0, 1> value 1
    sdmapkt.atomic_add64 #sdmapkt.flag<0, 1> value 1
    // CHECK-NEXT: sdmapkt.nop 3
    sdmapkt.nop 3
    // CHECK-NEXT: sdmapkt.trap 5
    sdmapkt.trap 5
  }
  // CHECK: sdmapkt.queue 1 : 0 {
  sdmapkt.queue 1 : 0 {
  }
}

// The conservative target at its limits: a 4 MiB copy (22-bit count), a
// 1-dword NOP; broadcast destinations at the same offset within 32 bytes
// (raw addresses 16 bytes past 32-byte boundaries; chunks two apart at
// 16-byte chunk alignment).
// CHECK-LABEL: sdmapkt.program @gfx9
// CHECK-SAME: target = "gfx9"
sdmapkt.program @gfx9 attributes {target = "gfx9", ranks = 3 : i64,
    buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64,
    chunk_align = 16 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // CHECK: sdmapkt.copy_linear 0 : i64 -> 8388608 : i64 count 4194304 : i64
    sdmapkt.copy_linear 0 -> 8388608 count 4194304
    // CHECK-NEXT: sdmapkt.copy_broadcast 0 : i64 -> 4112 : i64, 8208 : i64 count 64 : i64
    sdmapkt.copy_broadcast 0 -> 4112, 8208 count 64
    // CHECK-NEXT: sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 1>, #sdmapkt.chunk<"b", 2, 3> count #sdmapkt.chunks<1>
    sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 1>, #sdmapkt.chunk<"b", 2, 3> count #sdmapkt.chunks<1>
    // CHECK-NEXT: sdmapkt.nop 0
    sdmapkt.nop 0
  }
}
