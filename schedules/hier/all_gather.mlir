// All-gather over N nodes of G ranks (rank r = node n * G + local g), in two
// phases. Across nodes, each rank sends its chunk to the rank with its local
// index on every other node: G rails, N - 1 network messages per rank.
// Within each node, each rank then copies its own chunk and the N - 1 chunks
// its rail brought to every other rank of the node (load/store or DMA).
//
//   R = 4, G = 2     rank 0 (0,0)   rank 1 (0,1)   rank 2 (1,0)   rank 3 (1,1)
//   before in:       [x0]           [x1]           [x2]           [x3]
//   after network:   [  ][  ][x2][  ] [  ][  ][  ][x3] [x0][  ][  ][  ] [  ][x1][  ][  ]
//   after node:      [x0][x1][x2][x3] on every rank
//
//   network  (n,g): in[0] -> out[(n,g)] on (m,g), every node m != n
//   node     (n,g): in[0] -> out[(n,g)] on (n,h), every h;
//                   out[(m,g)] -> out[(m,g)] on (n,h), every m != n, h != g
sdma.schedule @all_gather_hier ranks(%R)
    buffers(%input : 1, %output : ranks) implements all_gather(%input -> %output) {
  %G = sdma.local_ranks
  %N = arith.divui %R, %G : index
  affine.for %n = 0 to %N {
    affine.for %g = 0 to %G {
      %nbase = arith.muli %n, %G : index
      %r = arith.addi %nbase, %g : index
      affine.for %m = 0 to %N {
        %other = arith.cmpi ne, %m, %n : index
        scf.if %other {
          %mbase = arith.muli %m, %G : index
          %peer = arith.addi %mbase, %g : index
          sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %peer
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
        %p = arith.addi %nbase, %h : index
        sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %p
        %neighbour = arith.cmpi ne, %h, %g : index
        scf.if %neighbour {
          affine.for %m = 0 to %N {
            %other = arith.cmpi ne, %m, %n : index
            scf.if %other {
              %mbase = arith.muli %m, %G : index
              %c = arith.addi %mbase, %g : index
              sdma.copy %output[%c, 1] on %r -> %output[%c, 1] on %p
            }
          }
        }
      }
    }
  }
}
