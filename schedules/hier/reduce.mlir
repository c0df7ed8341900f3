// Reduce to the root over N nodes of G ranks (rank r = node n * G + local
// g), typed. Within each node, the rank on the root's rail sums the node's
// inputs; across nodes, each sends its node's partial to the root; the root
// adds them. Network bytes: one chunk from each other node, all into the
// root (flat: R - 1 chunks). The root is rank 0 unless bound otherwise
// (sdma-unroll root=k).
//
//   node     (m,l):  part = in of (m,l) + sum over h != l of in of (m,h)
//   network  (m,l):  part -> recv[m] on the root, every node m != a
//   node     root:   out = part + sum over nodes m != a of recv[m]
//
//   R = 4, G = 2, root 0 = (0,0), x_p = rank p's input:
//   after phase 1: part of 0 = x_0 + x_1, part of 2 = x_2 + x_3
//   after phase 3: out of 0 = x_0 + x_1 + x_2 + x_3; other outputs untouched
sdma.schedule @reduce_hier ranks(%R)
    buffers(%input : f32[1], %output : f32[1], %part : f32[1],
            %recv : f32[ranks])
    implements reduce(%input -> %output) root 0 {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  %root = sdma.root
  %a = arith.divui %root, %G : index
  %l = arith.remui %root, %G : index
  affine.for %m = 0 to %N {
    %mbase = arith.muli %m, %G : index
    %q = arith.addi %mbase, %l : index
    sdma.copy %input[0, 1] on %q -> %part[0, 1] on %q
    sdma.fence on %q
    affine.for %h = 0 to %G {
      %others = arith.cmpi ne, %h, %l : index
      scf.if %others {
        %p = arith.addi %mbase, %h : index
        sdma.reduce sum %part[0, 1] on %q <- %input[0, 1] on %p
      }
    }
  }
  sdma.barrier
  affine.for %m = 0 to %N {
    %other = arith.cmpi ne, %m, %a : index
    scf.if %other {
      %mbase = arith.muli %m, %G : index
      %q = arith.addi %mbase, %l : index
      sdma.copy %part[0, 1] on %q -> %recv[%m, 1] on %root
    }
  }
  sdma.barrier
  sdma.copy %part[0, 1] on %root -> %output[0, 1] on %root
  sdma.fence on %root
  affine.for %m = 0 to %N {
    %other = arith.cmpi ne, %m, %a : index
    scf.if %other {
      sdma.reduce sum %output[0, 1] on %root <- %recv[%m, 1] on %root
    }
  }
}
