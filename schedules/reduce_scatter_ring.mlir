// Reduce-scatter, ring: the partial sum of chunk c starts at rank c + 1 and
// travels once around the ring; at each of R - 1 steps every rank pulls the
// partial its left neighbour finished in the step before and adds it into
// its own copy of that chunk, so rank c adds the last contribution to chunk
// c. Each link carries one chunk per step (bandwidth-optimal for large
// messages); the price is R - 1 steps of latency.
//
//   step k, rank q:  acc[c] on q  +=  acc[c] on q - 1,  c = q - 1 - k mod R
//                    (q - 1 signalled q that its step k - 1 is done)
//
//   R = 3            rank 0             rank 1             rank 2
//   before in:       [a0][b0][c0]       [a1][b1][c1]       [a2][b2][c2]
//   after step 1 acc:[a0][b0][c0+c2]    [a1+a0][b1][c1]    [a2][b2+b1][c2]
//   after step 2 acc:[a0+a1+a2] ...     [.][b0+b1+b2][.]   [.][.][c0+c1+c2]
//   out:             [a0+a1+a2]         [b0+b1+b2]         [c0+c1+c2]
sdma.schedule @reduce_scatter_ring ranks(%R)
    buffers(%input : f32[ranks], %output : f32[1], %acc : f32[ranks])
    implements reduce_scatter(%input -> %output) {
  %c1 = arith.constant 1 : index
  affine.for %q = 0 to %R {
    sdma.copy %input[0, %R] on %q -> %acc[0, %R] on %q
  }
  affine.for %k = 1 to %R {
    // A rank's own earlier writes (the step before, or the copy) land
    // before it adds into its chunk; the signal tells the right neighbour
    // that the partial it pulls next is complete.
    sdma.fence
    affine.for %q = 0 to %R {
      %next = sdma.rank_add %q, 1
      sdma.signal %q -> %next
    }
    affine.for %q = 0 to %R {
      %prev = sdma.rank_add %q, -1
      %back = arith.subi %c1, %k : index
      %back1 = arith.subi %back, %c1 : index
      %back2 = arith.subi %back1, %c1 : index
      %c = sdma.rank_add %q, %back2
      sdma.wait %q <- %prev
      sdma.reduce sum %acc[%c, 1] on %q <- %acc[%c, 1] on %prev
    }
  }
  sdma.fence
  affine.for %q = 0 to %R {
    sdma.copy %acc[%q, 1] on %q -> %output[0, 1] on %q
  }
}
