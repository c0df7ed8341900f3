// All-reduce, two shots: a reduce-scatter, then an all-gather. The message
// is R chunks; rank r owns chunk r. Shot 1: rank r adds chunk r of every
// peer's input into chunk r of its output. Shot 2: rank r copies its
// reduced chunk into every peer's output. Each rank reads and writes
// 2 (R - 1) / R of the message instead of one-shot's R - 1 times it, and
// no rank waits for another: every chunk of the output has one writer per
// stretch.
//
//   R = 2 (chunks x, y)  rank 0                 rank 1
//   before in:           [x0][y0]               [x1][y1]
//   after shot 1  out:   [x0+x1][  ]            [  ][y0+y1]
//   after shot 2  out:   [x0+x1][y0+y1]         [x0+x1][y0+y1]
sdma.schedule @all_reduce_two_shot ranks(%R)
    buffers(%input : f32[ranks], %output : f32[ranks])
    implements all_reduce(%input -> %output) {
  affine.for %r = 0 to %R {
    sdma.copy %input[%r, 1] on %r -> %output[%r, 1] on %r
  }
  sdma.fence
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.reduce sum %output[%r, 1] on %r <- %input[%r, 1] on %p
    }
  }
  sdma.fence
  affine.for %r = 0 to %R {
    affine.for %s = 1 to %R {
      %p = sdma.rank_add %r, %s
      sdma.copy %output[%r, 1] on %r -> %output[%r, 1] on %p
    }
  }
}
