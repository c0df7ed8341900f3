// Reduce-scatter over N nodes of G ranks (rank r = node n * G + local g),
// rail aligned. Within each node, rank (n,h) sums the node's chunks for
// every rank (m,h) of its rail (one partial per node m); across nodes, it
// sends partial m to (m,h); each rank then adds the N partials of its chunk.
// Network bytes per rank: N - 1 chunks (flat: R - G).
//
//   node     (n,h): part[(m,h)] = in[(m,h)] of (n,h) + sum over g != h of
//                   in[(m,h)] of (n,g), every node m
//   network  (n,h): part[(m,h)] -> recv[(n,h)] on (m,h), m != n
//   node     c:     out = part[c] + sum over nodes n != c's of recv[(n,h)]
//
//   R = 4, G = 2, x_p = rank p's input:   out of rank c = sum over p of x_p[c]
//   after phase 1 on (0,0): part[0] = x_0[0] + x_1[0], part[2] = x_0[2] + x_1[2]
//   after phase 2 on (1,0): recv[0] = x_0[2] + x_1[2]
//   after phase 3 on (1,0): out = x_2[2] + x_3[2] + x_0[2] + x_1[2]
sdma.schedule @reduce_scatter_hier ranks(%R)
    buffers(%input : f32[ranks], %output : f32[1], %part : f32[ranks],
            %recv : f32[ranks])
    implements reduce_scatter(%input -> %output) {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  affine.for %n = 0 to %N {
    affine.for %h = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %r = arith.addi %nbase, %h : index
      affine.for %m = 0 to %N {
        %mbase = arith.muli %m, %G : index
        %c = arith.addi %mbase, %h : index
        sdma.copy %input[%c, 1] on %r -> %part[%c, 1] on %r
      }
      sdma.fence on %r
      affine.for %g = 0 to %G {
        %other = arith.cmpi ne, %g, %h : index
        scf.if %other {
          %p = arith.addi %nbase, %g : index
          affine.for %m = 0 to %N {
            %mbase = arith.muli %m, %G : index
            %c = arith.addi %mbase, %h : index
            sdma.reduce sum %part[%c, 1] on %r <- %input[%c, 1] on %p
          }
        }
      }
    }
  }
  sdma.barrier
  affine.for %n = 0 to %N {
    affine.for %h = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %r = arith.addi %nbase, %h : index
      affine.for %m = 0 to %N {
        %other = arith.cmpi ne, %m, %n : index
        scf.if %other {
          %mbase = arith.muli %m, %G : index
          %c = arith.addi %mbase, %h : index
          sdma.copy %part[%c, 1] on %r -> %recv[%r, 1] on %c
        }
      }
    }
  }
  sdma.barrier
  affine.for %m = 0 to %N {
    affine.for %h = 0 to %G {
      %mbase = arith.muli %m, %G : index
      %c = arith.addi %mbase, %h : index
      sdma.copy %part[%c, 1] on %c -> %output[0, 1] on %c
      sdma.fence on %c
      affine.for %n = 0 to %N {
        %other = arith.cmpi ne, %n, %m : index
        scf.if %other {
          %nbase = arith.muli %n, %G : index
          %src = arith.addi %nbase, %h : index
          sdma.reduce sum %output[0, 1] on %c <- %recv[%src, 1] on %c
        }
      }
    }
  }
}
