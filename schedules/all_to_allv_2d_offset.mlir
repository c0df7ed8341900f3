// MoE combine out of expert-major rows (torch's all_to_all_vdev_2d_offset),
// the inverse of all_to_allv_2d: E local experts per rank (`sdma-unroll
// experts=E`). The expert rank p's table holds, expert-major, the rows it
// returns to each token rank (splits[e*R + r]) and then where each segment
// starts in its input (offsets[e*R + r] at E*R + e*R + r): torch's
// in_splits_offsets, e.g. the dispatch's out_splits_offsets after the
// expert GEMM. Padding is not sent. Each output holds, packed rank-major,
// the rows from expert 0 of rank 0, expert 1 of rank 0, ...: the order the
// dispatch's input had. recv[p*E + e] ends holding the rows that expert e
// of rank p returned; the runtime writes torch's out_splits_offsets from it.
//
//   R = 2, E = 2              rank 0                  rank 1
//   splits | offsets          [1 1 0 1 | 0 1 2 2]     [2 0 1 2 | 0 2 2 3]
//   before in:                [a e][f .]              [b c][d g h .]
//   after  recv (rank-major): [1 0][2 1]              [1 1][0 2]
//          out:               [a][b c][d]             [e][f][g h]
//
//   rank r:  copyv pull in[at offsets[e*R + r]] on p -> out[packed
//            forwarded recv, p*E + e] on r, count splits[e*R + r] on p
//   rank p:  copy splits[e*R + r] -> recv[p*E + e] on r
// (one phase: the data's offsets are read `forwarded`, from every rank's
// splits where the count puts read them, so no barrier waits for the
// puts. The rows are pulled: each token rank reads its own rows back, so
// an expert rank that holds most of them, as with skewed routing, does not
// copy them all by itself)
sdma.schedule @all_to_allv_2d_offset ranks(%R)
    buffers(%input : ranks, %output : ranks,
            %send_counts : counts[2 x experts x ranks],
            %recv_counts : counts[experts x ranks])
    implements all_to_allv_2d_offset(%input -> %output)
        counts(%send_counts -> %recv_counts) {
  %E = sdma.experts
  affine.for %p = 0 to %R {
    affine.for %r = 0 to %R {
      affine.for %e = 0 to %E {
        %j = affine.apply affine_map<(e, r)[R] -> (e * R + r)>(%e, %r)[%R]
        %o = affine.apply affine_map<(e, r)[R, E] -> (E * R + e * R + r)>(%e, %r)[%R, %E]
        %i = affine.apply affine_map<(p, e)[E] -> (p * E + e)>(%p, %e)[%E]
        sdma.copyv pull %input[at %send_counts[%o] on %p] on %p
            -> %output[packed forwarded %recv_counts[%i] on %r] on %r,
            count %send_counts[%j] on %p max 1
      }
    }
  }
  affine.for %p = 0 to %R {
    affine.for %r = 0 to %R {
      affine.for %e = 0 to %E {
        %j = affine.apply affine_map<(e, r)[R] -> (e * R + r)>(%e, %r)[%R]
        %i = affine.apply affine_map<(p, e)[E] -> (p * E + e)>(%p, %e)[%E]
        sdma.copy %send_counts[%j, 1] on %p -> %recv_counts[%i, 1] on %r
      }
    }
  }
}
