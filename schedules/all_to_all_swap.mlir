// All-to-all in place, swap-paired: each pair of ranks {p, q} exchanges
// data[q] of p with data[p] of q in one DMA swap (COPY_LINEAR_SWAP); the
// diagonal chunk stays. R(R-1)/2 swaps, about (R-1)/2 issued per rank: rank r
// swaps with r + d for 1 <= d < R/2, and with r + R/2 when R is even and
// r < R/2 (so each pair is swapped once).
//
//               rank 0        rank 1        rank 2
//   before:     [a0][a1][a2]  [b0][b1][b2]  [c0][c1][c2]
//   after:      [a0][b0][c0]  [a1][b1][c1]  [a2][b2][c2]
//
//   rank r:  swap data[q] on r <-> data[r] on q
sdma.schedule @all_to_all_swap ranks(%R)
    buffers(%data : ranks) implements all_to_all(%data -> %data) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %rem = arith.remui %R, %c2 : index
  %even = arith.cmpi eq, %rem, %c0 : index
  %half = arith.divui %R, %c2 : index
  affine.for %r = 0 to %R {
    affine.for %d = 1 to affine_map<()[s0] -> ((s0 + 1) floordiv 2)>()[%R] {
      %q = sdma.rank_add %r, %d
      sdma.swap %data[%q, 1] on %r <-> %data[%r, 1] on %q
    }
    %low = arith.cmpi ult, %r, %half : index
    %issue = arith.andi %even, %low : i1
    scf.if %issue {
      %q = sdma.rank_add %r, %half
      sdma.swap %data[%q, 1] on %r <-> %data[%r, 1] on %q
    }
  }
}
