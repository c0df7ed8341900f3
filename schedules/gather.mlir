// Gather to rank 0: every rank puts its input chunk into slot r of the
// root's output. R copies, one per rank, all landing on the root.
//
//               rank 0          rank 1     rank 2
//   before in:  [x0]            [x1]       [x2]
//   after  out: [x0][x1][x2]
sdma.schedule @gather ranks(%R)
    buffers(%input : 1, %output : ranks)
    implements gather(%input -> %output) root 0 {
  affine.for %r = 0 to %R {
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on 0
  }
}
