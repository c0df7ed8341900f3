// Gather to the root over N nodes of G ranks (rank r = node n * G + local
// g): within each other node, every rank puts its chunk into slot (m,h) of
// the staging buffer of the rank on the root's rail, which sends the
// node's G chunks to the root in one message; the root's own node copies
// straight into its output. Network: one message of G chunks into the root
// per other node (flat: R - G messages). The root is rank 0 unless bound
// otherwise (sdma-unroll root=k).
//
//   node     (m,h):  in -> staged[(m,h)] on (m,l), every node m != a
//            (a,h):  in -> out[(a,h)] on the root
//   network  (m,l):  staged[(m,0), G] -> out[(m,0), G] on the root
//
//   R = 4, G = 2, root 0 = (0,0):
//   node:    in of 2 -> staged[2] of 2, in of 3 -> staged[3] of 2;
//            in of 0 -> out[0] of 0, in of 1 -> out[1] of 0
//   network: staged[2, 2] of 2 -> out[2, 2] of 0
sdma.schedule @gather_hier ranks(%R)
    buffers(%input : 1, %output : ranks, %staged : ranks)
    implements gather(%input -> %output) root 0 {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  %root = sdma.root
  %a = arith.divui %root, %G : index
  %l = arith.remui %root, %G : index
  affine.for %m = 0 to %N {
    %mbase = arith.muli %m, %G : index
    %home = arith.cmpi eq, %m, %a : index
    %q = arith.addi %mbase, %l : index
    affine.for %h = 0 to %G {
      %p = arith.addi %mbase, %h : index
      scf.if %home {
        sdma.copy %input[0, 1] on %p -> %output[%p, 1] on %root
      } else {
        sdma.copy %input[0, 1] on %p -> %staged[%p, 1] on %q
      }
    }
  }
  sdma.barrier
  affine.for %m = 0 to %N {
    %other = arith.cmpi ne, %m, %a : index
    scf.if %other {
      %mbase = arith.muli %m, %G : index
      %q = arith.addi %mbase, %l : index
      sdma.copy %staged[%mbase, %G] on %q -> %output[%mbase, %G] on %root
    }
  }
}
