// Broadcast from the root over N nodes of G ranks (rank r = node n * G +
// local g): the root sends its chunk once to its rail peer on every other
// node, then within each node the rank holding it copies it to the others.
// Network bytes: N - 1 chunks, all from the root (flat: R - 1). The root
// is rank 0 unless bound otherwise (sdma-unroll root=k).
//
//   network  root (a,l): in -> out on (m,l), every node m != a
//   node     root:       in -> out on (a,h), every local h
//            (m,l):      out -> out on (m,h), h != l, every node m != a
//
//   R = 4, G = 2, root 1 = (0,1):
//   network: in of 1 -> out of 3
//   node:    in of 1 -> out of 0 and of 1; out of 3 -> out of 2
sdma.schedule @broadcast_hier ranks(%R)
    buffers(%input : 1, %output : 1)
    implements broadcast(%input -> %output) root 0 {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  %root = sdma.root
  %a = arith.divui %root, %G : index
  %l = arith.remui %root, %G : index
  affine.for %m = 0 to %N {
    %other = arith.cmpi ne, %m, %a : index
    scf.if %other {
      %mbase = arith.muli %m, %G : index
      %peer = arith.addi %mbase, %l : index
      sdma.copy %input[0, 1] on %root -> %output[0, 1] on %peer
    }
  }
  sdma.barrier
  affine.for %m = 0 to %N {
    %mbase = arith.muli %m, %G : index
    %home = arith.cmpi eq, %m, %a : index
    affine.for %h = 0 to %G {
      %p = arith.addi %mbase, %h : index
      scf.if %home {
        sdma.copy %input[0, 1] on %root -> %output[0, 1] on %p
      } else {
        %holder = arith.addi %mbase, %l : index
        %others = arith.cmpi ne, %h, %l : index
        scf.if %others {
          sdma.copy %output[0, 1] on %holder -> %output[0, 1] on %p
        }
      }
    }
  }
}
