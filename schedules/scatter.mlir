// Scatter from the root: chunk p of the root's input goes to rank p's
// output. R copies issued by the root. The root is rank 0 unless bound
// otherwise (sdma-unroll root=k): the schedule names it only through
// sdma.root.
//
//               rank 0          rank 1     rank 2      (root 0)
//   before in:  [x0][x1][x2]
//   after  out: [x0]            [x1]       [x2]
sdma.schedule @scatter ranks(%R)
    buffers(%input : ranks, %output : 1)
    implements scatter(%input -> %output) root 0 {
  %root = sdma.root
  affine.for %p = 0 to %R {
    sdma.copy %input[%p, 1] on %root -> %output[0, 1] on %p
  }
}
