// Reduce to the root: the root copies its own input into its output, then
// adds every peer's input (pulled over the fabric) in one pass. The other
// ranks issue nothing; their outputs are untouched. The root is rank 0
// unless bound otherwise (sdma-unroll root=k): the schedule names it only
// through sdma.root, and its peers relative to it.
//
//               rank 0          rank 1     rank 2      (root 0)
//   before in:  [a0]            [a1]       [a2]
//   after  out: [a0+a1+a2]      [ ]        [ ]
sdma.schedule @reduce ranks(%R)
    buffers(%input : f32[1], %output : f32[1])
    implements reduce(%input -> %output) root 0 {
  %root = sdma.root
  sdma.copy %input[0, 1] on %root -> %output[0, 1] on %root
  sdma.fence on %root
  affine.for %s = 1 to %R {
    %p = sdma.rank_add %root, %s
    sdma.reduce sum %output[0, 1] on %root <- %input[0, 1] on %p
  }
}
