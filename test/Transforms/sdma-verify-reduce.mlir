// RUN: sdma-opt %s --sdma-verify -split-input-file -verify-diagnostics

// Reductions: contribution sets (each rank's input chunk combined exactly
// once, one operator), and the race rule for sdma.reduce: reduces into the
// same slice with the same operator accumulate without an order; anything
// else that overlaps needs one.

// One shot at 3 ranks: the second stretch's reduces all land on out[0] of
// their rank, unordered among themselves.
// expected-remark @+1 {{proved for 3 ranks: 9 data ops race-free, 0 waits always released (no deadlock), implements all_reduce(in -> out) with max}}
sdma.schedule @one_shot ranks(%R = 3) buffers(%in : bf16[1], %out : bf16[1])
    implements all_reduce(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 1
  sdma.copy %in[0, 1] on 2 -> %out[0, 1] on 2
  sdma.fence
  sdma.reduce max %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.reduce max %out[0, 1] on 0 <- %in[0, 1] on 2
  sdma.reduce max %out[0, 1] on 1 <- %in[0, 1] on 0
  sdma.reduce max %out[0, 1] on 1 <- %in[0, 1] on 2
  sdma.reduce max %out[0, 1] on 2 <- %in[0, 1] on 1
  sdma.reduce max %out[0, 1] on 2 <- %in[0, 1] on 0
}

// -----

// A tree: partial sums combine sets, and a reduce's source may be a set.
// expected-remark @+1 {{implements reduce(in -> out) root 0 with sum}}
sdma.schedule @tree ranks(%R = 4) buffers(%in : i32[1], %out : i32[1], %t : i32[1])
    implements reduce(%in -> %out) root 0 {
  sdma.copy %in[0, 1] on 2 -> %t[0, 1] on 2
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.fence
  sdma.reduce sum %t[0, 1] on 2 <- %in[0, 1] on 3
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.signal 2 -> 0
  sdma.fence
  sdma.wait 0 <- 2
  sdma.reduce sum %out[0, 1] on 0 <- %t[0, 1] on 2
}

// -----

sdma.schedule @partial_overlap ranks(%R = 2) buffers(%a : f32[4])
  {
  sdma.reduce sum %a[0, 2] on 0 <- %a[2, 2] on 1
  // expected-error @+2 {{races with another op: it writes a[1, 2) on rank 0, which the other op reads}}
  // expected-note @-2 {{the other op, issued by rank 0}}
  sdma.reduce sum %a[1, 2] on 0 <- %a[2, 2] on 1
}

// -----

sdma.schedule @two_operators ranks(%R = 2) buffers(%a : f32[4])
  {
  sdma.reduce sum %a[0, 1] on 0 <- %a[2, 1] on 1
  // expected-error @+2 {{races with another op}}
  // expected-note @-2 {{the other op}}
  sdma.reduce max %a[0, 1] on 0 <- %a[3, 1] on 1
}

// -----

sdma.schedule @copy_and_reduce ranks(%R = 2) buffers(%a : f32[4])
  {
  sdma.copy %a[2, 1] on 1 -> %a[0, 1] on 0
  // expected-error @+2 {{races with another op}}
  // expected-note @-2 {{the other op}}
  sdma.reduce sum %a[0, 1] on 0 <- %a[3, 1] on 1
}

// -----

sdma.schedule @reads_a_destination ranks(%R = 2) buffers(%a : f32[4])
  {
  sdma.reduce sum %a[0, 1] on 0 <- %a[2, 1] on 1
  // expected-error @+2 {{races with another op: it reads a[0, 1) on rank 0, which the other op writes}}
  // expected-note @-2 {{the other op}}
  sdma.reduce sum %a[1, 1] on 1 <- %a[0, 1] on 0
}

// -----

// expected-error @+1 {{does not implement all_reduce: afterwards chunk 0 of out on rank 1 holds the sum of in[0] of ranks 0, 1, but should combine in[0] of every rank exactly once; missing rank 2}}
sdma.schedule @missing ranks(%R = 3) buffers(%in : f32[1], %out : f32[1])
    implements all_reduce(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 1
  sdma.copy %in[0, 1] on 2 -> %out[0, 1] on 2
  sdma.fence
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 2
  sdma.reduce sum %out[0, 1] on 1 <- %in[0, 1] on 0
  sdma.reduce sum %out[0, 1] on 2 <- %in[0, 1] on 1
  sdma.reduce sum %out[0, 1] on 2 <- %in[0, 1] on 0
}

// -----

// expected-error @+1 {{holds the sum of in[0] of ranks 0, 1, 1, but should combine in[0] of every rank exactly once; counted more than once: rank 1 (2 times)}}
sdma.schedule @twice ranks(%R = 2) buffers(%in : f32[1], %out : f32[1])
    implements all_reduce(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[0, 1] on 1 -> %out[0, 1] on 1
  sdma.fence
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.reduce sum %out[0, 1] on 1 <- %in[0, 1] on 0
  sdma.fence
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
}

// -----

// expected-error @+1 {{chunk 0 of out on rank 0 holds a mix of different reductions (the last a sum)}}
sdma.schedule @mixed ranks(%R = 3) buffers(%in : f32[1], %out : f32[1])
    implements reduce(%in -> %out) root 0 {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.fence
  sdma.reduce max %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.fence
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 2
}

// -----

// expected-error @+1 {{holds a sum over a chunk never written}}
sdma.schedule @uninitialised ranks(%R = 2) buffers(%in : f32[1], %out : f32[1])
    implements reduce(%in -> %out) root 0 {
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
}

// -----

// expected-error @+1 {{chunk 1 of out on rank 0 holds the min of in[1] of ranks 0, 1, but other chunks hold a max (one operator throughout)}}
sdma.schedule @two_kinds ranks(%R = 2) buffers(%in : i64[2], %out : i64[2])
    implements reduce(%in -> %out) root 0 {
  sdma.copy %in[0, 2] on 0 -> %out[0, 2] on 0
  sdma.fence
  sdma.reduce max %out[0, 1] on 0 <- %in[0, 1] on 1
  sdma.reduce min %out[1, 1] on 0 <- %in[1, 1] on 1
}

// -----

// A plain copy where a reduction belongs.
// expected-error @+1 {{chunk 0 of out on rank 1 holds in[1] of rank 1, but should combine in[1] of every rank exactly once; missing rank 0}}
sdma.schedule @scatter_only ranks(%R = 2) buffers(%in : f16[ranks], %out : f16[1])
    implements reduce_scatter(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.copy %in[1, 1] on 1 -> %out[0, 1] on 1
  sdma.fence
  sdma.reduce sum %out[0, 1] on 0 <- %in[0, 1] on 1
}

// -----

// expected-error @+1 {{implements reduce_scatter but its buffers have 2 and 2 chunks; with 2 ranks it needs an input of 4 and an output of 2 chunks}}
sdma.schedule @sizes ranks(%R = 2) buffers(%in : f32[2], %out : f32[2])
    implements reduce_scatter(%in -> %out) {}
