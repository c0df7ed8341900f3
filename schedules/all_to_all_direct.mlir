// All-to-all, direct: rank r's input chunk p goes to slot r of rank p's
// output. R * R independent copies (the diagonal ones stay on their rank).
//
//               rank 0        rank 1        rank 2
//   before in:  [a0][a1][a2]  [b0][b1][b2]  [c0][c1][c2]
//   after  out: [a0][b0][c0]  [a1][b1][c1]  [a2][b2][c2]
//
//   rank r:  copy in[p] -> out[r] on p, for every rank p
sdma.schedule @all_to_all_direct ranks(%R)
    buffers(%input : ranks, %output : ranks) implements all_to_all(%input -> %output) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %input[%p, 1] on %r -> %output[%r, 1] on %p
    }
  }
}
