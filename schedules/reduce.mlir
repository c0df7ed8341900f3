// Reduce to rank 0: the root copies its own input into its output, then
// adds every peer's input (pulled over the fabric) in one pass. The other
// ranks issue nothing; their outputs are untouched.
//
//               rank 0          rank 1     rank 2
//   before in:  [a0]            [a1]       [a2]
//   after  out: [a0+a1+a2]      [ ]        [ ]
sdma.schedule @reduce ranks(%R)
    buffers(%input : f32[1], %output : f32[1])
    implements reduce(%input -> %output) root 0 {
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
  sdma.fence on 0
  affine.for %s = 1 to %R {
    // Written relative to the root, so that the communicator's root
    // rewrite (every "on 0" and "rank_add 0") gives any root's schedule.
    %p = sdma.rank_add 0, %s
    sdma.reduce sum %output[0, 1] on 0 <- %input[0, 1] on %p
  }
}
