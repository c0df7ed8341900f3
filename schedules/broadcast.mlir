// Broadcast from the root, direct: the root copies its input into every
// rank's output (its own included). R copies, all issued by the root; with
// --variant=bcst they pair up into ceil(R/2) DMA broadcasts. The root is
// rank 0 unless bound otherwise (sdma-unroll root=k, the compile library's
// root option): the schedule names it only through sdma.root.
//
//               rank 0     rank 1     rank 2      (root 0)
//   before in:  [x]        [ ]        [ ]
//   after  out: [x]        [x]        [x]
sdma.schedule @broadcast ranks(%R)
    buffers(%input : 1, %output : 1)
    implements broadcast(%input -> %output) root 0 {
  %root = sdma.root
  affine.for %p = 0 to %R {
    sdma.copy %input[0, 1] on %root -> %output[0, 1] on %p
  }
}
