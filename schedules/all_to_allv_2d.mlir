// MoE dispatch into expert-major rows (torch's all_to_all_vdev_2d): E
// local experts per rank (`sdma-unroll experts=E major-align=A`). Rank r's
// input holds its rows for expert 0 of rank 0, expert 1 of rank 0, ...,
// expert E-1 of rank R-1, packed (send[p*E + e] rows for expert e of rank
// p). Each output holds expert 0's rows from rank 0, rank 1, ..., then
// expert 1's, ...: the grouped GEMM's input. Each expert's segment is
// padded to a multiple of A rows, and an empty expert still gets A rows
// (grouped-GEMM kernels reject empty groups). recv[e*R + r] ends holding
// the rows rank r sent to expert e; the runtime writes torch's
// out_splits_offsets from it (splits, then the padded offsets).
// One phase: each rank puts each run of rows where the receiver's padded
// prefix says, reading it `forwarded` (from every rank's send, where the
// count puts read it, so no barrier waits for the puts), then its counts
// into the receivers' recv (E 8-byte puts per pair, for the caller).
// Nothing goes through the host.
//
//   R = 2, E = 2, A = 2       rank 0                  rank 1
//   send (rank-major)         [1 0][2 1]              [1 1][0 2]
//   before in:                [a][b c][d]             [e][f][g h]
//   recv (expert-major):      [1 1][0 1]              [2 0][1 2]
//   after  out:               [a e][f .]              [b c][d g h .]
//
//   rank r:  copyv in[packed send, p*E + e] -> out[expert_major forwarded
//            recv, e*R + r] on p, count send[p*E + e];
//            copy send[p*E + e] -> recv[e*R + r] on p
sdma.schedule @all_to_allv_2d ranks(%R)
    buffers(%input : ranks, %output : ranks,
            %send_counts : counts[experts x ranks],
            %recv_counts : counts[experts x ranks])
    implements all_to_allv_2d(%input -> %output)
        counts(%send_counts -> %recv_counts) {
  %E = sdma.experts
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      affine.for %e = 0 to %E {
        %i = affine.apply affine_map<(p, e)[E] -> (p * E + e)>(%p, %e)[%E]
        %j = affine.apply affine_map<(e, r)[R] -> (e * R + r)>(%e, %r)[%R]
        sdma.copyv %input[packed %send_counts[%i] on %r] on %r
            -> %output[expert_major forwarded %recv_counts[%j] on %p] on %p,
            count %send_counts[%i] on %r max 1
      }
    }
  }
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      affine.for %e = 0 to %E {
        %i = affine.apply affine_map<(p, e)[E] -> (p * E + e)>(%p, %e)[%E]
        %j = affine.apply affine_map<(e, r)[R] -> (e * R + r)>(%e, %r)[%R]
        sdma.copy %send_counts[%i, 1] on %r -> %recv_counts[%j, 1] on %p
      }
    }
  }
}
