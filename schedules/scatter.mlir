// Scatter from rank 0: chunk p of the root's input goes to rank p's output.
// R copies issued by the root.
//
//               rank 0          rank 1     rank 2
//   before in:  [x0][x1][x2]
//   after  out: [x0]            [x1]       [x2]
sdma.schedule @scatter ranks(%R)
    buffers(%input : ranks, %output : 1)
    implements scatter(%input -> %output) root 0 {
  affine.for %p = 0 to %R {
    sdma.copy %input[%p, 1] on 0 -> %output[0, 1] on %p
  }
}
