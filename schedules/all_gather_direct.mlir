// All-gather, direct: every rank puts its input chunk straight into slot r
// of every rank's output (its own included). R * R copies, all independent:
// one step, the most parallel schedule and the most commands.
//
//               rank 0        rank 1        rank 2
//   before in:  [x0]          [x1]          [x2]
//          out: [ ][ ][ ]     [ ][ ][ ]     [ ][ ][ ]
//   after  out: [x0][x1][x2]  [x0][x1][x2]  [x0][x1][x2]
//
//   rank r:  copy in[0] -> out[r] on p, for every rank p
sdma.schedule @all_gather_direct ranks(%R)
    buffers(%input : 1, %output : ranks) implements all_gather(%input -> %output) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %p
    }
  }
}
