// All-gather, ring: each rank first places its own chunk in its output, then
// in each of R - 1 steps forwards the chunk it received last to the next rank
// (r + 1 mod R). Every rank sends one copy per step, to one neighbour only:
// R - 1 steps of R copies, each link used once per step.
//
//   step 0 (local)     rank 0: out[0] = x0   rank 1: out[1] = x1   ...
//   step s = 1..R-1    rank r: out[c] -> out[c] on r+1, c = r - s + 1 mod R
//                              signal r -> r+1;  r+1 waits before step s+1
//
//   R = 3           rank 0          rank 1          rank 2
//   after step 0:   [x0][  ][  ]    [  ][x1][  ]    [  ][  ][x2]
//   after step 1:   [x0][  ][x2]    [x0][x1][  ]    [  ][x1][x2]
//   after step 2:   [x0][x1][x2]    [x0][x1][x2]    [x0][x1][x2]
sdma.schedule @all_gather_ring ranks(%R)
    buffers(%input : 1, %output : ranks) implements all_gather(%input -> %output) {
  %c1 = arith.constant 1 : index
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %r
  }
  sdma.fence
  affine.for %s = 1 to %R {
    affine.for %r = 0 to %R {
      %next = sdma.rank_add %r, 1
      %back = arith.subi %c1, %s : index
      %chunk = sdma.rank_add %r, %back
      sdma.copy %output[%chunk, 1] on %r -> %output[%chunk, 1] on %next
      sdma.signal %r -> %next
    }
    affine.for %r = 0 to %R {
      %prev = sdma.rank_add %r, -1
      sdma.wait %r <- %prev
    }
  }
}
