// All-reduce, one shot: every rank reads every peer's input and adds it
// into its own output. Two stretches per rank: its own input into its
// output, then the R - 1 peers' inputs added in. The reduces of the second
// stretch all land on the same slice with the same operator, so they need
// no order among them (they accumulate); the kernel adds them in one pass.
// Best for small messages: one step, but every rank reads (R - 1) x c.
//
//   R = 3            rank 0          rank 1          rank 2
//   before in:       [a0]            [a1]            [a2]
//   after  out:      [a0+a1+a2]      [a0+a1+a2]      [a0+a1+a2]
sdma.schedule @all_reduce_one_shot ranks(%R)
    buffers(%input : f32[1], %output : f32[1])
    implements all_reduce(%input -> %output) {
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[0, 1] on %r
  }
  sdma.fence
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.reduce sum %output[0, 1] on %r <- %input[0, 1] on %p
    }
  }
}
