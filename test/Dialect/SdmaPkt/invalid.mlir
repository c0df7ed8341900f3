// Every sdmapkt diagnostic.
// RUN: sdma-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{needs at least one rank}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 0 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = []} {
}

// -----

// expected-error @+1 {{has 2 buffers but 1 sizes}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["a", "b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
}

// -----

// expected-error @+1 {{buffer sizes must be at least one chunk}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [0], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
}

// -----

// expected-error @+1 {{needs flag slots 0 (launch) and 1 (done)}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 1 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
}

// -----

// expected-error @+1 {{timestamp slot count must not be negative}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = -1 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
}

// -----

// expected-error @+1 {{chunk_align must be a power of two, got 48}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 48 : i64, max_chunk_bytes = 96 : i64, done = [0]} {
}

// -----

// expected-error @+1 {{max_chunk_bytes must be a multiple of chunk_align}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 100 : i64, done = [0]} {
}

// -----

// expected-error @+1 {{done needs one value per rank}}
sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
  sdmapkt.queue 0 : 0 {}
  // expected-error @+1 {{duplicates queue 0 : 0}}
  sdmapkt.queue 0 : 0 {}
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
  // expected-error @+1 {{rank 1 out of range [0, 1)}}
  sdmapkt.queue 1 : 0 {}
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
  // expected-error @+1 {{engine must not be negative}}
  sdmapkt.queue 0 : -1 {}
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{source names unknown buffer 'x'}}
    sdmapkt.copy_linear #sdmapkt.chunk<"x", 0, 0> -> #sdmapkt.chunk<"b", 1, 0> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{destination rank 2 out of range [0, 2)}}
    sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 2, 0> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{destination chunks [3, 5) out of buffer 'b' (4 chunks)}}
    sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 3> count #sdmapkt.chunks<2>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 536870912 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count of 3 chunks may exceed 1073741824 bytes at max_chunk_bytes 536870912: split the transfer}}
    sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 0> count #sdmapkt.chunks<3>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count 1073741825 bytes out of range [1, 1073741824]}}
    sdmapkt.copy_linear 0 -> 4096 count 1073741825
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count must be at least one chunk}}
    sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 0> count #sdmapkt.chunks<0>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count must be a byte count or #sdmapkt.chunks}}
    sdmapkt.copy_linear #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 0> count "one"
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{source must not be a flag slot}}
    sdmapkt.copy_linear #sdmapkt.flag<0, 1> -> #sdmapkt.chunk<"b", 1, 0> count 8
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{source address must not be negative}}
    sdmapkt.copy_linear -64 -> 0 count 8
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{source must be an integer address or #sdmapkt.chunk/flag/timestamp}}
    sdmapkt.copy_linear "here" -> 0 count 8
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 16 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{destinations must lie at the same offset within 32 bytes (ROCr's broadcast rule), but chunks 1 and 2 are not, at every chunk size the program's chunk_align 16 allows}}
    sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 1>, #sdmapkt.chunk<"b", 2, 2> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{destinations must lie at the same offset within 32 bytes (ROCr's broadcast rule), but 0x2000 and 0x1010 do not}}
    sdmapkt.copy_broadcast 0 -> 8192, 4112 count 64
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{but address 0x2010 is not 32-byte aligned while the other is a buffer chunk}}
    sdmapkt.copy_broadcast 0 -> 8208, #sdmapkt.chunk<"b", 2, 0> count 64
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 16 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{but chunk 1 is not, at every chunk size the program's chunk_align 16 allows, while the other is an aligned address}}
    sdmapkt.copy_broadcast 0 -> #sdmapkt.chunk<"b", 1, 1>, 8192 count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{needs two different destinations}}
    sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 1>, #sdmapkt.chunk<"b", 1, 1> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 32 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{first operand must be 64-byte aligned, but the program's chunk_align 32 does not guarantee it for chunk 1}}
    sdmapkt.copy_swap #sdmapkt.chunk<"b", 0, 1> with #sdmapkt.chunk<"b", 1, 0> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count 1073741793 bytes out of range [1, 1073741792]}}
    sdmapkt.copy_swap 0 with 1073741824 count 1073741793
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{swaps a range with itself}}
    sdmapkt.copy_swap #sdmapkt.chunk<"b", 0, 1> with #sdmapkt.chunk<"b", 0, 1> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{value 4294967296 does not fit in 32 bits}}
    sdmapkt.fence #sdmapkt.flag<1, 1> value 4294967296
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address must be a flag slot, not a buffer chunk}}
    sdmapkt.fence #sdmapkt.chunk<"b", 0, 1> value 1
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address flag slot 2 out of range [0, 2)}}
    sdmapkt.atomic_add64 #sdmapkt.flag<1, 2> value 1
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address address 0x4 must be 8-byte aligned}}
    sdmapkt.atomic_add64 4 value 1
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{unknown compare function 'atleast' (always, lt, le, eq, ne, ge, gt)}}
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "atleast" 1 mask 4294967295 interval 10 retry 4095
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{reference does not fit in 32 bits}}
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 4294967296 mask 4294967295 interval 10 retry 4095
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{mask does not fit in 32 bits}}
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask -1 interval 10 retry 4095
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{interval does not fit in 16 bits}}
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask 4294967295 interval 65536 retry 4095
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{retry count does not fit in 12 bits}}
    sdmapkt.poll_regmem #sdmapkt.flag<0, 0> "ge" 1 mask 4294967295 interval 10 retry 4096
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address address 0x2 must be 4-byte aligned}}
    sdmapkt.poll_regmem 2 "eq" 1 mask 4294967295 interval 10 retry 4095
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{extra dword count does not fit in 14 bits}}
    sdmapkt.nop 16384
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 1 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address timestamp slot 1 out of range [0, 1)}}
    sdmapkt.timestamp #sdmapkt.timestamp<0, 1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 1 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address address 0x10 must be 32-byte aligned}}
    sdmapkt.timestamp 16
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 1 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{address must not be a timestamp slot}}
    sdmapkt.fence #sdmapkt.timestamp<0, 0> value 1
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 1 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{context does not fit in 28 bits}}
    sdmapkt.trap 268435456
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx942", ranks = 2 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 1 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0]} {
  // expected-error @+1 {{cannot appear directly in a program: only sdmapkt.queue can}}
  sdmapkt.trap 1
}

// -----

// Target profiles (sdmapkt/IR/Targets.h).

// expected-error @+1 {{unknown target 'gfx1' (gfx9, gfx942 or gfx950)}}
sdmapkt.program @p attributes {target = "gfx1", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
}

// -----

// expected-error @+1 {{requires attribute 'target'}}
sdmapkt.program @p attributes {ranks = 1 : i64, buffers = ["b"], buffer_chunks = [1], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0]} {
}

// -----

sdmapkt.program @p attributes {target = "gfx9", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count 4194305 bytes out of range [1, 4194304] (target 'gfx9')}}
    sdmapkt.copy_linear 0 -> 8388608 count 4194305
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx9", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 4194304 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count of 2 chunks may exceed 4194304 bytes at max_chunk_bytes 4194304: split the transfer (target 'gfx9')}}
    sdmapkt.copy_broadcast #sdmapkt.chunk<"b", 0, 0> -> #sdmapkt.chunk<"b", 1, 0>, #sdmapkt.chunk<"b", 2, 0> count #sdmapkt.chunks<2>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx9", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{COPY_LINEAR_SWAP is not supported by target 'gfx9' (gfx942 or gfx950 support it)}}
    sdmapkt.copy_swap #sdmapkt.chunk<"b", 0, 0> with #sdmapkt.chunk<"b", 1, 0> count #sdmapkt.chunks<1>
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx950", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count 134217729 bytes out of range [1, 134217728] (target 'gfx950')}}
    sdmapkt.copy_linear 0 -> 268435456 count 134217729
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx950", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 64 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{count 134217729 bytes out of range [1, 134217728] (target 'gfx950')}}
    sdmapkt.copy_swap 0 with 268435456 count 134217729
  }
}

// -----

sdmapkt.program @p attributes {target = "gfx9", ranks = 3 : i64, buffers = ["b"], buffer_chunks = [4], flags = 2 : i64, timestamps = 0 : i64, chunk_align = 1 : i64, max_chunk_bytes = 64 : i64, done = [0, 0, 0]} {
  sdmapkt.queue 0 : 0 {
    // expected-error @+1 {{a NOP of 1 extra dwords needs a NOP count, which target 'gfx9' lacks (SDMA firmware feature_version >= 20: gfx942 or gfx950)}}
    sdmapkt.nop 1
  }
}
