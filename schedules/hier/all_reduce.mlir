// All-reduce over N nodes of G ranks (rank r = node n * G + local g): the
// hierarchical reduce-scatter (reduce_scatter.mlir; rank c's result lands in
// chunk c of its output), then the hierarchical all-gather of those chunks
// in place (all_gather.mlir). Network bytes per rank: 2 (N - 1) chunks of
// R, where a flat ring moves 2 (R - 1).
//
//   node     (n,h): part[(m,h)] = sum over the node of in[(m,h)], every m
//   network  (n,h): part[(m,h)] -> recv[(n,h)] on (m,h), m != n
//   node     c:     out[c] = part[c] + sum over n != c's node of recv[(n,h)]
//   network  c:     out[c] -> out[c] on (m,h), m != c's node
//   node     (n,g): out[(m,g)] -> out[(m,g)] on (n,h), every m, h != g
sdma.schedule @all_reduce_hier ranks(%R)
    buffers(%input : f32[ranks], %output : f32[ranks], %part : f32[ranks],
            %recv : f32[ranks])
    implements all_reduce(%input -> %output) {
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
      sdma.copy %part[%c, 1] on %c -> %output[%c, 1] on %c
      sdma.fence on %c
      affine.for %n = 0 to %N {
        %other = arith.cmpi ne, %n, %m : index
        scf.if %other {
          %nbase = arith.muli %n, %G : index
          %src = arith.addi %nbase, %h : index
          sdma.reduce sum %output[%c, 1] on %c <- %recv[%src, 1] on %c
        }
      }
    }
  }
  sdma.barrier
  affine.for %n = 0 to %N {
    affine.for %h = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %c = arith.addi %nbase, %h : index
      affine.for %m = 0 to %N {
        %other = arith.cmpi ne, %m, %n : index
        scf.if %other {
          %mbase = arith.muli %m, %G : index
          %peer = arith.addi %mbase, %h : index
          sdma.copy %output[%c, 1] on %c -> %output[%c, 1] on %peer
        }
      }
    }
  }
  sdma.barrier
  affine.for %n = 0 to %N {
    affine.for %g = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %r = arith.addi %nbase, %g : index
      affine.for %h = 0 to %G {
        %neighbour = arith.cmpi ne, %h, %g : index
        scf.if %neighbour {
          %p = arith.addi %nbase, %h : index
          affine.for %m = 0 to %N {
            %mbase = arith.muli %m, %G : index
            %chunk = arith.addi %mbase, %g : index
            sdma.copy %output[%chunk, 1] on %r -> %output[%chunk, 1] on %p
          }
        }
      }
    }
  }
}
