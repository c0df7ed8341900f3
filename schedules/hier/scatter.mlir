// Scatter from the root over N nodes of G ranks (rank r = node n * G +
// local g), the inverse of gather_hier: the root sends each other node's G
// chunks in one message to the rank on its rail there, which hands each
// rank of its node its chunk; the root's own node gets its chunks straight
// from the root. Network: one message of G chunks from the root per other
// node (flat: R - G messages). The root is rank 0 unless bound otherwise
// (sdma-unroll root=k).
//
//   network  root:   in[(m,0), G] -> staged[(m,0), G] on (m,l), m != a
//   node     (m,l):  staged[(m,h)] -> out on (m,h), every node m != a
//            root:   in[(a,h)] -> out on (a,h)
//
//   R = 4, G = 2, root 0 = (0,0):
//   network: in[2, 2] of 0 -> staged[2, 2] of 2
//   node:    in[0] of 0 -> out of 0, in[1] of 0 -> out of 1;
//            staged[2] of 2 -> out of 2, staged[3] of 2 -> out of 3
sdma.schedule @scatter_hier ranks(%R)
    buffers(%input : ranks, %output : 1, %staged : ranks)
    implements scatter(%input -> %output) root 0 {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  %root = sdma.root
  %a = arith.divui %root, %G : index
  %l = arith.remui %root, %G : index
  affine.for %m = 0 to %N {
    %other = arith.cmpi ne, %m, %a : index
    scf.if %other {
      %mbase = arith.muli %m, %G : index
      %q = arith.addi %mbase, %l : index
      sdma.copy %input[%mbase, %G] on %root -> %staged[%mbase, %G] on %q
    }
  }
  sdma.barrier
  affine.for %m = 0 to %N {
    %mbase = arith.muli %m, %G : index
    %home = arith.cmpi eq, %m, %a : index
    %q = arith.addi %mbase, %l : index
    affine.for %h = 0 to %G {
      %p = arith.addi %mbase, %h : index
      scf.if %home {
        sdma.copy %input[%p, 1] on %root -> %output[0, 1] on %p
      } else {
        sdma.copy %staged[%p, 1] on %q -> %output[0, 1] on %p
      }
    }
  }
}
