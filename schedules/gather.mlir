// Gather to the root: every rank puts its input chunk into slot r of the
// root's output. R copies, one per rank, all landing on the root. The root
// is rank 0 unless bound otherwise (sdma-unroll root=k): the schedule names
// it only through sdma.root.
//
//               rank 0          rank 1     rank 2      (root 0)
//   before in:  [x0]            [x1]       [x2]
//   after  out: [x0][x1][x2]
sdma.schedule @gather ranks(%R)
    buffers(%input : 1, %output : ranks)
    implements gather(%input -> %output) root 0 {
  %root = sdma.root
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %root
  }
}
