// All-gather, bcast-paired: every rank places its own chunk, then sends it
// to its peers two at a time with DMA broadcast copies (one read, two
// writes): ceil((R-1)/2) commands per rank instead of R-1 (DMA-Latte bcst).
//
//   rank r:  copy  in[0] -> out[r] on r
//            bcast in[0] -> out[r] on r+2k+1, out[r] on r+2k+2   k < (R-1)/2
//            copy  in[0] -> out[r] on r-1                        if R is even
//
//               rank 0        rank 1        rank 2        rank 3
//   before in:  [x0]          [x1]          [x2]          [x3]
//   after  out: [x0..x3]      [x0..x3]      [x0..x3]      [x0..x3]
//   (R = 4, rank 0: bcast x0 -> ranks 1, 2; copy x0 -> rank 3)
sdma.schedule @all_gather_bcast ranks(%R)
    buffers(%input : 1, %output : ranks)
    implements all_gather(%input -> %output) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %rem = arith.remui %R, %c2 : index
  %even = arith.cmpi eq, %rem, %c0 : index
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %r
    affine.for %k = 0 to affine_map<()[s0] -> ((s0 - 1) floordiv 2)>()[%R] {
      %d1 = affine.apply affine_map<(d0) -> (2 * d0 + 1)>(%k)
      %d2 = affine.apply affine_map<(d0) -> (2 * d0 + 2)>(%k)
      %p1 = sdma.rank_add %r, %d1
      %p2 = sdma.rank_add %r, %d2
      sdma.bcast %input[0, 1] on %r -> %output[%r, 1] on %p1, %output[%r, 1] on %p2
    }
    scf.if %even {
      %last = sdma.rank_add %r, -1
      sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %last
    }
  }
}
