// Reduce-scatter, direct: rank r pulls chunk r of every peer's input and
// adds it into its output (shot 1 of all_reduce_two_shot.mlir). One step;
// each rank reads (R - 1) chunks.
//
//   R = 2 (chunks x, y)  rank 0          rank 1
//   before in:           [x0][y0]        [x1][y1]
//   after  out:          [x0+x1]         [y0+y1]
sdma.schedule @reduce_scatter_direct ranks(%R)
    buffers(%input : f32[ranks], %output : f32[1])
    implements reduce_scatter(%input -> %output) {
  affine.for %r = 0 to %R {
    sdma.copy %input[%r, 1] on %r -> %output[0, 1] on %r
  }
  sdma.fence
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.reduce sum %output[0, 1] on %r <- %input[%r, 1] on %p
    }
  }
}
