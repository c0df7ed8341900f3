// All-reduce, ring: the ring reduce-scatter (reduce_scatter_ring.mlir) in
// the output itself, then the ring all-gather (all_gather_ring.mlir) of the
// reduced chunks. 2 (R - 1) steps, each moving one chunk per link: the
// bandwidth-optimal all-reduce for large messages.
//
//   reduce-scatter, step k, rank q:  out[c] on q += out[c] on q - 1,
//                                    c = q - 1 - k mod R
//   afterwards rank q holds the full reduction of chunk q
//   all-gather, step s, rank q:      out[c] on q -> out[c] on q + 1,
//                                    c = q - s + 1 mod R
//
//   R = 2 (chunks x, y)    rank 0             rank 1
//   before in:             [x0][y0]           [x1][y1]
//   after reduce-scatter:  [x0+x1][y0]        [x1][y0+y1]
//   after all-gather out:  [x0+x1][y0+y1]     [x0+x1][y0+y1]
sdma.schedule @all_reduce_ring ranks(%R)
    buffers(%input : f32[ranks], %output : f32[ranks])
    implements all_reduce(%input -> %output) {
  %c1 = arith.constant 1 : index
  affine.for %q = 0 to %R {
    sdma.copy %input[0, %R] on %q -> %output[0, %R] on %q
  }
  affine.for %k = 1 to %R {
    sdma.fence
    affine.for %q = 0 to %R {
      %next = sdma.rank_add %q, 1
      sdma.signal %q -> %next
    }
    affine.for %q = 0 to %R {
      %prev = sdma.rank_add %q, -1
      %back = arith.subi %c1, %k : index
      %back2 = arith.subi %back, %c1 : index
      %back3 = arith.subi %back2, %c1 : index
      %c = sdma.rank_add %q, %back3
      sdma.wait %q <- %prev
      sdma.reduce sum %output[%c, 1] on %q <- %output[%c, 1] on %prev
    }
  }
  affine.for %s = 1 to %R {
    sdma.fence
    affine.for %q = 0 to %R {
      %next = sdma.rank_add %q, 1
      %back = arith.subi %c1, %s : index
      %c = sdma.rank_add %q, %back
      sdma.copy %output[%c, 1] on %q -> %output[%c, 1] on %next
      sdma.signal %q -> %next
    }
    affine.for %q = 0 to %R {
      %prev = sdma.rank_add %q, -1
      sdma.wait %q <- %prev
    }
  }
}
